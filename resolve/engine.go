// Package resolve answers GraphQL requests the way pg_graphql does: it parses the request with gqlparser,
// validates it against the schema generated for the caller's role, plans it, compiles the plan to SQL with
// sqlgen and runs it in one pipelined round trip, returning pg_graphql's response body.
//
// It is a library: a Go program can resolve a request on any pgx connection, inside its own transaction, as
// that session's current role and search path (Engine.Execute). The HTTP server uses Engine.ExecuteAs, which
// switches to the request's role and JWT claims inside the request's own transaction.
//
// The stages are separate files: compile.go turns a request into statements (cached per schema, document
// and variables), session.go writes the role and claims prelude, pipeline.go runs a batch in one round trip
// on prepared statements (stmtcache.go), respond.go writes the response.
package resolve

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/reflect"
)

// Request is a GraphQL request body.
type Request struct {
	Query         string          `json:"query"`
	Variables     json.RawMessage `json:"variables,omitempty"`
	OperationName string          `json:"operationName,omitempty"`
	// StreamCursor, for a stream subscription, replaces its cursor's initial value: the last value sent, so
	// that the next batch starts after it. Clients cannot set it.
	StreamCursor json.RawMessage `json:"-"`
}

// Options configure an Engine.
type Options struct {
	// MaxRows caps page sizes where no directive does; 0 means pg_graphql's 30.
	MaxRows int
	// CacheSize bounds the number of schemas kept (one per role and search path); default 64.
	CacheSize int
	// CompiledCacheBytes bounds the memory compiled requests are kept in (query, SQL, rendered answers);
	// default 32 MiB, negative disables the cache.
	CompiledCacheBytes int
	// AnswerCacheBytes bounds the memory kept for answers that need no database but are too large for the
	// compiled-request cache: the introspection answer of a large schema, kept per role and schema generation
	// (about 17 MiB at 1,000 tables). Default 192 MiB; negative disables.
	AnswerCacheBytes int
	// StatementTimeout applies to ExecuteAs requests whose role sets no statement_timeout of its own (ALTER
	// ROLE ... SET statement_timeout, as Supabase configures anon and authenticated); default 8s, negative
	// disables.
	StatementTimeout time.Duration
	// Logger receives internal failures with the request id; default slog.Default().
	Logger *slog.Logger
	// Features are extensions beyond pg_graphql turned on for every table; comment directives turn them on per
	// schema or table.
	Features reflect.FeatureSet
	// Limits bound what one request may ask (expanded fields, depth, aliases, parameters); zero fields take
	// DefaultLimits.
	Limits Limits
	// StatementMode says how statements reach Postgres; the zero value prepares them (StatementsPrepared).
	StatementMode StatementMode
	// Version is the pg_graphql behaviour to follow; "" means gqlschema.NewestVersion. SetVersion changes it.
	Version gqlschema.Version
}

// Engine resolves requests. It caches the generated schema per (schema generation, role, search_path) and
// each compiled request per (schema, document, operation, variables); it is safe for concurrent use.
type Engine struct {
	opts    Options
	schemas *reflect.Cache[*roleSchema]
	// catalogs are the catalog reads every role of a search path shares.
	catalogs *catalogReads
	// builds are the schemas built, by what their roles see (a hash of the privileges answer) and search path:
	// roles with equal privileges share one.
	builds   *reflect.Cache[*gqlschema.Schema]
	compiled *compiledCache
	version  atomic.Pointer[gqlschema.Version]
}

// roleSchema is what one role sees: its GraphQL schema and the settings its requests run with.
type roleSchema struct {
	schema *gqlschema.Schema
	// statementTimeout is the role's own statement_timeout setting, or "" when it has none.
	statementTimeout string
}

// NewEngine returns an engine. Call Invalidate (or hand the engine to reflect.Watch) when the database schema
// changes.
func NewEngine(opts Options) *Engine {
	if opts.CacheSize == 0 {
		opts.CacheSize = 64
	}
	if opts.CompiledCacheBytes == 0 {
		opts.CompiledCacheBytes = 32 << 20
	}
	if opts.AnswerCacheBytes == 0 {
		opts.AnswerCacheBytes = 192 << 20
	}
	if opts.StatementTimeout == 0 {
		opts.StatementTimeout = 8 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	e := &Engine{opts: opts, schemas: reflect.NewCache[*roleSchema](opts.CacheSize),
		catalogs: newCatalogReads(), builds: reflect.NewCache[*gqlschema.Schema](opts.CacheSize), compiled: newCompiledCache(opts.CompiledCacheBytes, opts.AnswerCacheBytes)}
	e.SetVersion(opts.Version)
	return e
}

// SetVersion switches the engine to another pg_graphql behaviour version ("" for the newest); the schemas
// built for the old one are dropped.
func (e *Engine) SetVersion(v gqlschema.Version) {
	if v == "" {
		v = gqlschema.NewestVersion
	}
	if old := e.version.Load(); old != nil && *old == v {
		return // the schemas built are the right ones
	}
	e.version.Store(&v)
	e.Invalidate()
}

// Version is the pg_graphql behaviour version the engine follows.
func (e *Engine) Version() gqlschema.Version { return *e.version.Load() }

// InvalidatePrivileges forgets every schema and compiled request, keeping the catalog reads: after a GRANT or
// REVOKE each role's next request re-reads its privileges only.
func (e *Engine) InvalidatePrivileges() {
	e.builds.Invalidate()
	e.schemas.Invalidate()
	e.compiled.purge()
}

// InvalidateRelations forgets every schema and compiled request, and what the catalog reads hold of relations
// (oids): the next request re-reads those relations only.
func (e *Engine) InvalidateRelations(relations []uint32) {
	e.catalogs.invalidateRelations(relations)
	e.builds.Invalidate()
	e.schemas.Invalidate()
	e.compiled.purge()
}

// Invalidate forgets every cached catalog, schema and compiled request.
func (e *Engine) Invalidate() {
	e.catalogs.invalidate()
	e.builds.Invalidate()
	e.schemas.Invalidate()
	e.compiled.purge()
}

// Session is who an HTTP request runs as.
type Session struct {
	Role string
	// Claims are the JWT claims, made visible to SQL as request.jwt.claims (and the legacy per-claim settings).
	Claims     map[string]any
	SearchPath []string
}

// ExecuteAs resolves req on conn as the session's role with its claims and search path, all set local to the
// request's own transaction. With a cached schema the whole request is one round trip.
func (e *Engine) ExecuteAs(ctx context.Context, conn *pgx.Conn, s Session, req Request) []byte {
	rs, err := e.schemas.Get(ctx, s.Role, s.SearchPath, func(ctx context.Context) (*roleSchema, error) {
		return e.loadAs(ctx, conn, s)
	})
	if err != nil {
		return e.schemaFailure(ctx, req, err)
	}
	prelude, err := sessionPrelude(s, e.statementTimeout(rs))
	if err != nil {
		return errorsOnly(e.internal(ctx, err))
	}
	return e.run(ctx, conn, rs.schema, req, batch{role: s.Role, prelude: []statement{prelude}, retryable: true})
}

// Execute resolves req on conn as the connection's current role and search path. When conn is inside a
// transaction the request runs in a savepoint: a failed request is rolled back to it and the caller's
// transaction stays usable. The session's own settings (statement_timeout among them) apply.
func (e *Engine) Execute(ctx context.Context, conn *pgx.Conn, req Request) []byte {
	var role string
	var searchPath []string
	if err := conn.QueryRow(ctx, "select current_user::text, current_schemas(false)::text[]").Scan(&role, &searchPath); err != nil {
		return errorsOnly(e.internal(ctx, err))
	}
	rs, err := e.schemas.Get(ctx, role, searchPath, func(ctx context.Context) (*roleSchema, error) {
		cat, err := reflect.Load(ctx, conn)
		if err != nil {
			return nil, err
		}
		return &roleSchema{schema: e.build(cat)}, nil
	})
	if err != nil {
		return e.schemaFailure(ctx, req, err)
	}
	b := batch{role: role}
	if conn.PgConn().TxStatus() != 'I' {
		b.prelude = []statement{{sql: "savepoint pgreflect_request"}}
		b.epilogue = []statement{{sql: "release savepoint pgreflect_request"}}
		b.onError = []statement{{sql: "rollback to savepoint pgreflect_request"}, {sql: "release savepoint pgreflect_request"}}
	} else {
		b.retryable = true
	}
	return e.run(ctx, conn, rs.schema, req, b)
}

// build makes the GraphQL schema of a catalog with the engine's options.
func (e *Engine) build(cat *reflect.Catalog) *gqlschema.Schema {
	return gqlschema.Build(cat, gqlschema.Options{MaxRows: e.opts.MaxRows, Features: e.opts.Features, Version: e.Version()})
}

// run answers req against schema: from the compiled-request cache when it can, running the statements in
// one round trip.
func (e *Engine) run(ctx context.Context, conn *pgx.Conn, schema *gqlschema.Schema, req Request, b batch) []byte {
	c := e.compiled.get(ctx, schema, req, false, func() *compiled { return compile(ctx, schema, e.opts.Limits, req) })
	if c.response != nil {
		return c.response
	}
	b.stmts = c.stmts
	b.mode = e.opts.StatementMode
	results, err := b.run(ctx, conn)
	if err != nil {
		return dataNull(e.databaseError(ctx, err))
	}
	return c.respond(results)
}
