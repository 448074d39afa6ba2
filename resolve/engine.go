package resolve

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/internal/dberr"
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
	// LegacyClaimSettings also sets the per-claim settings request.jwt.claim.sub, .role and .email beside
	// request.jwt.claims, as PostgREST did before v9 (before v12 on PostgreSQL 13 and older), for policies and
	// functions that still read them. PostgREST since v12 sets request.jwt.claims only, and Supabase's auth.uid(),
	// auth.role(), auth.email() and auth.jwt() read it, so they are off by default: three more settings in every
	// transaction.
	LegacyClaimSettings bool
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
	// AnswerGrace is how long past a request's statement timeout Answer waits for Postgres before it gives the
	// server up as unresponsive (frozen, or cut off by the network) and the request as ErrUnavailable;
	// default 2s. A server that answers sends its statement-timeout error within the timeout itself.
	AnswerGrace time.Duration
	// Pool, when set, is the primary database, which Start watches for schema changes. An engine without it
	// answers on whatever connection it is given (Execute, ExecuteAs, Answer) and reloads when told to.
	Pool *pgxpool.Pool
	// Replicas, when set, are read replicas of Pool's database, logged in as the same role: Route sends queries
	// to them in turn and everything else to Pool, and a started engine reloads a replica's schemas once it has
	// replayed a schema change. A replica lags the primary, so a query may not yet see a mutation that was just
	// answered.
	Replicas []*pgxpool.Pool
}

// ErrUnavailable marks a request that Answer could not complete because the database went away or did not
// answer in time. The connection is then not fit for another request (Answer closes it when it is still open),
// and the caller gives its own outage answer.
var ErrUnavailable = errors.New("database unavailable")

// ErrInternal marks a request that Answer could not complete for a failure that is not the client's doing and
// not an outage (a bug, an unexpected error): the caller logs it and gives its own internal-error answer, never
// one that looks like a GraphQL result.
var ErrInternal = errors.New("internal failure")

// schemaLoadTimeout bounds the loading of a role's schema (the catalog query runs with no statement timeout
// of its own) when requests have no statement timeout: a server that does not answer fails the request
// instead of holding it.
const schemaLoadTimeout = 30 * time.Second

// schemaLoadBudget is how long a request waits for its role's schema to load: what a request may take (the
// statement timeout and AnswerGrace), since the role's own timeout is not known before its schema is. A
// frozen server then fails the request as soon as a statement of it would have (a replica that stops while a
// change is being loaded held requests for schemaLoadTimeout before).
func (e *Engine) schemaLoadBudget() time.Duration {
	if e.opts.StatementTimeout <= 0 {
		return schemaLoadTimeout
	}
	return min(e.opts.StatementTimeout+e.opts.AnswerGrace, schemaLoadTimeout)
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
	builds *reflect.Cache[*gqlschema.Schema]
	// executed are the schemas Execute read as a connection's role, apart from the sessions' (whose prelude sets
	// the role: a schema kept here has none).
	executed *reflect.Cache[*gqlschema.Schema]
	// snapshotted are the schemas Execute read in a snapshot that a transaction keeps (repeatable read,
	// serializable), by the snapshot: a transaction's later calls share its first one's.
	snapshotted *reflect.Cache[*gqlschema.Schema]
	compiled    *compiledCache
	version     atomic.Pointer[gqlschema.Version]
	// multiplexedAfter is when (Unix nanoseconds) live refreshes may try one statement per cohort again, after the
	// database answered that it has no pgreflect.live_refresh for the login role.
	multiplexedAfter atomic.Int64

	// replicas are the engines of Options.Replicas (sources.go); nextReplica spreads queries over them in turn.
	replicas    []*Engine
	nextReplica atomic.Uint64
	// operations are the kinds of recent documents' operations, for Route.
	operations *operationKinds
	// The schema watch and the replica follower run between Start and Close (watch.go).
	watchMu   sync.Mutex
	stopWatch context.CancelFunc
	watchers  sync.WaitGroup
	follower  atomic.Pointer[replicaFollower]
	takers    buildTakers
}

// roleSchema is what one role sees: its GraphQL schema and the settings its requests run with, worked out once
// when the schema is loaded rather than for every request.
type roleSchema struct {
	schema *gqlschema.Schema
	// timeout is the statement_timeout requests of the role run with (see Engine.roleSchema), and budget
	// how long Answer waits for them (the timeout and AnswerGrace; 0: no bound).
	timeout string
	budget  time.Duration
	// prelude holds the role, the search path of the schema's cache key (quoted as the prelude sets it) and
	// the timeout, as the session prelude's arguments.
	prelude preludeArgs
}

// NewEngine returns an engine, with one of its own for each of opts.Replicas. Start it to follow schema
// changes, or call Invalidate when the database schema changes.
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
	opts.AnswerGrace = cmp.Or(opts.AnswerGrace, 2*time.Second)
	e := &Engine{opts: opts, schemas: reflect.NewCache[*roleSchema](opts.CacheSize),
		builds:   reflect.NewCache[*gqlschema.Schema](opts.CacheSize),
		executed: reflect.NewCache[*gqlschema.Schema](opts.CacheSize), snapshotted: reflect.NewCache[*gqlschema.Schema](snapshottedSchemas), compiled: newCompiledCache(opts.CompiledCacheBytes, opts.AnswerCacheBytes),
		operations: newOperationKinds(), takers: buildTakers{last: map[[2]string]string{}}}
	// A search path's new catalog read makes the builds kept from the one before stale: they go at once, with
	// their compiled requests and introspection answers, which may be tens of megabytes.
	e.catalogs = newCatalogReads(func(searchPath []string) { e.compiled.forget(e.builds.Retire(searchPath)) })
	for _, pool := range opts.Replicas {
		replica := opts
		replica.Pool, replica.Replicas = pool, nil
		r := NewEngine(replica)
		r.operations = e.operations // only the primary routes; one cache is enough
		e.replicas = append(e.replicas, r)
	}
	e.SetVersion(opts.Version)
	return e
}

// SetVersion switches the engine and its replicas' to another pg_graphql behaviour version ("" for the
// newest); the schemas built for the old one are dropped.
func (e *Engine) SetVersion(v gqlschema.Version) {
	if v == "" {
		v = gqlschema.NewestVersion
	}
	for _, r := range e.replicas {
		r.SetVersion(v) // no database change: nothing to replay first
	}
	if old := e.version.Load(); old != nil && *old == v {
		return // the schemas built are the right ones
	}
	e.version.Store(&v)
	e.rebuild()
}

// Version is the pg_graphql behaviour version the engine follows.
func (e *Engine) Version() gqlschema.Version { return *e.version.Load() }

// InvalidatePrivileges forgets every role's schema, keeping the catalog reads: after a GRANT or REVOKE each
// role's next request re-reads its privileges only, and a role whose privileges came out as they were takes up
// the schema built before, with its compiled requests. The replicas forget theirs as Invalidate says.
func (e *Engine) InvalidatePrivileges() {
	e.renew()
	e.replicasChanged()
}

// InvalidateRelations forgets every role's schema, and what the catalog reads hold of relations (oids): the next
// request re-reads those relations only. The replicas forget theirs as Invalidate says.
func (e *Engine) InvalidateRelations(relations []uint32) {
	e.catalogs.invalidateRelations(relations)
	e.renew()
	e.replicasChanged()
}

// Invalidate forgets every role's schema and has the next request read the whole catalog. The replicas forget
// theirs once they have replayed the change while the engine is started (Start), at once otherwise.
func (e *Engine) Invalidate() {
	e.forget()
	e.replicasChanged()
}

// forget has the engine read its whole catalog again. Where a read finds what the one before found and a role
// the privileges it had, the role takes up the schema built before, and its compiled requests and introspection
// answer stay (a change the API does not show: DDL in a schema it does not show, a partition).
func (e *Engine) forget() {
	e.catalogs.invalidate()
	e.renew()
}

// renew starts a schema generation: every role's next request reads its privileges (and the catalog, as far as
// it was invalidated) and finds its schema among the builds kept for the read and privileges it finds, or
// builds it. The compiled requests of the schemas kept stay; all others go.
func (e *Engine) renew() {
	e.compiled.keepOnly(e.builds.Renew())
	e.schemas.Invalidate()
	e.executed.Invalidate()
	e.snapshotted.Invalidate()
}

// rebuild has the whole catalog read again and drops every schema and compiled request: what was built is of
// no use (another pg_graphql version).
func (e *Engine) rebuild() {
	e.catalogs.invalidate()
	e.builds.Invalidate()
	e.schemas.Invalidate()
	e.executed.Invalidate()
	e.snapshotted.Invalidate()
	e.compiled.purge()
}

// Session is who an HTTP request runs as.
type Session struct {
	Role string
	// Claims are the JWT claims, made visible to SQL as request.jwt.claims (and as the legacy per-claim settings
	// when Options.LegacyClaimSettings is on).
	Claims map[string]any
	// EncodedClaims, when set, is Claims encoded as JSON by the caller, who keeps it (auth.TokenCache does), so
	// that request.jwt.claims does not cost an encoding per request; "": Claims are encoded here.
	EncodedClaims string
	SearchPath    []string
	// ApplicationName, when set, is the application_name of the request's transaction, which Postgres shows in
	// pg_stat_activity and its logs (log_line_prefix %a): the HTTP server puts the trace id there. At most 63
	// bytes count.
	ApplicationName string
}

// ExecuteAs resolves req on conn as the session's role with its claims and search path, all set local to the
// request's own transaction. With a cached schema the whole request is one round trip. A request that failed
// for an outage or an internal failure gets the internal-error body, logged with the request id (see Answer).
func (e *Engine) ExecuteAs(ctx context.Context, conn *pgx.Conn, s Session, req Request) []byte {
	body, err := e.Answer(ctx, conn, s, req)
	if err != nil {
		return errorsOnly(e.internal(ctx, err))
	}
	return body
}

// Answer is ExecuteAs for a server, which answers failures in a shape and status of its own. When the database
// went away or did not answer within the request's budget (its statement timeout plus AnswerGrace, and as
// much for loading the role's schema; sooner when WithDeadline set a deadline), it returns an error wrapping ErrUnavailable and no body, and leaves conn closed; for
// a failure that is neither the client's nor an outage, an error wrapping ErrInternal and no body. Otherwise
// the body is the GraphQL answer, errors the client caused (Postgres' messages among them) included.
func (e *Engine) Answer(ctx context.Context, conn *pgx.Conn, s Session, req Request) ([]byte, error) {
	rs, err := e.schemas.Get(ctx, s.Role, s.SearchPath, func(ctx context.Context) (*roleSchema, error) {
		ctx, cancel := withBudget(ctx, e.schemaLoadBudget())
		defer cancel()
		rs, err := e.loadAs(ctx, conn, s)
		if err != nil && unavailable(conn, err) {
			// Said here, where the loading connection is known: the requests that share the load see only
			// the error, which after some failures pgx words as "conn closed".
			err = fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		return rs, err
	})
	if err != nil {
		// The load may have failed on another request's connection (concurrent misses share one load): an
		// outage is recognised from the error as well as from this request's connection.
		if errors.Is(err, ErrUnavailable) {
			return nil, unusable(conn, fmt.Errorf("load the schema of role %s: %w", s.Role, err))
		}
		if unavailable(conn, err) {
			return nil, unusable(conn, fmt.Errorf("%w: load the schema of role %s: %w", ErrUnavailable, s.Role, err))
		}
		if body := schemaFailure(req, err); body != nil {
			return body, nil
		}
		return nil, fmt.Errorf("%w: load the schema of role %s: %w", ErrInternal, s.Role, err)
	}
	prelude, err := sessionPrelude(s, rs.prelude, e.opts.LegacyClaimSettings)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInternal, err)
	}
	if deadline, bounded := budgetDeadline(ctx, rs.budget); bounded {
		setSocketDeadline(conn, deadline)
		defer clearSocketDeadline(conn)
	}
	body, err := e.run(ctx, conn, rs.schema, req, batch{role: s.Role, prelude: []statement{prelude}, retryable: true})
	if errors.Is(err, ErrUnavailable) {
		return nil, unusable(conn, err)
	}
	return body, err
}

// unavailable reports whether err, or the state it left conn in, says the database went away or did not
// answer in time (an expired deadline: a server that answers reports its own statement timeout first).
func unavailable(conn *pgx.Conn, err error) bool {
	return conn.IsClosed() || dberr.Unavailable(err)
}

// unusable closes conn, which an outage left in an unknown state (pgx keeps a connection open after some
// failures, a shared schema load's among them), and returns err. The close does not wait on a server that
// does not answer.
func unusable(conn *pgx.Conn, err error) error {
	if !conn.IsClosed() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = conn.Close(ctx)
	}
	return err
}

// snapshottedSchemas bounds the schemas kept for transactions of repeatable read or serializable: a few
// transactions at once, each of whose schemas may be large.
const snapshottedSchemas = 4

// Execute resolves req on conn as the connection's current role and search path. When conn is inside a
// transaction the request runs in a savepoint: a failed request is rolled back to it and the caller's
// transaction stays usable. The session's own settings (statement_timeout among them) apply. The schema read
// is kept for the role and search path until a change. A transaction that reads a snapshot of its own
// (repeatable read, serializable) keeps what it reads for its later calls, by the snapshot. A transaction that
// has changed the catalog (its own DDL is then part of its schema; on a database without pgreflect setup, one
// that has written at all) keeps nothing: its every Execute reads the catalog again.
func (e *Engine) Execute(ctx context.Context, conn *pgx.Conn, req Request) []byte {
	var role, snapshot string
	var searchPath []string
	var readCommitted, unchanged bool
	if err := conn.QueryRow(ctx, executeSessionSQL).Scan(&role, &searchPath, &readCommitted, &unchanged, &snapshot); err != nil {
		return errorsOnly(e.internal(ctx, err))
	}
	load := func(ctx context.Context) (*gqlschema.Schema, error) {
		cat, err := reflect.Load(ctx, conn)
		if err != nil {
			return nil, err
		}
		return e.build(cat), nil
	}
	var schema *gqlschema.Schema
	var err error
	switch {
	case conn.PgConn().TxStatus() == 'I' || readCommitted && unchanged:
		schema, err = e.executed.Get(ctx, role, searchPath, load)
	case unchanged:
		schema, err = e.snapshotted.GetInSnapshot(ctx, snapshot, role, searchPath, load)
	default:
		schema, err = load(ctx)
	}
	if err != nil {
		return e.schemaAnswer(ctx, req, err)
	}
	b := batch{role: role}
	if conn.PgConn().TxStatus() != 'I' {
		b.prelude = []statement{{sql: "savepoint pgreflect_request"}}
		b.epilogue = []statement{{sql: "release savepoint pgreflect_request"}}
		b.onError = []statement{{sql: "rollback to savepoint pgreflect_request"}, {sql: "release savepoint pgreflect_request"}}
	} else {
		b.retryable = true
	}
	body, err := e.run(ctx, conn, schema, req, b)
	if err != nil {
		return errorsOnly(e.internal(ctx, err))
	}
	return body
}

// executeSessionSQL reads what Execute runs as, and whether the catalog the transaction sees is one that others
// see: whether each statement reads the latest (read committed) or the transaction keeps one snapshot
// (repeatable read, serializable: the snapshot, then); and whether the transaction has not changed the catalog
// itself (uncommitted DDL, GRANT or COMMENT), which Execute then reads without keeping. pgreflect setup's event
// trigger marks a transaction that changed the catalog (pgreflect.catalog_changed); on a database without it,
// a transaction that has written anything is taken for one that may have.
const executeSessionSQL = `select current_user::text, current_schemas(false)::text[],
	current_setting('transaction_isolation') = 'read committed',
	coalesce(current_setting('pgreflect.catalog_changed', true), '') = ''
	and (pg_current_xact_id_if_assigned() is null
		or exists (select from pg_catalog.pg_event_trigger where evtname = 'pgreflect_watch_ddl' and evtenabled <> 'D')),
	pg_current_snapshot()::text`

// build makes the GraphQL schema of a catalog with the engine's options. A relation that vanishes behind
// another of the same name in an earlier schema of the search path is logged: the API gives no sign of it.
func (e *Engine) build(cat *reflect.Catalog) *gqlschema.Schema {
	s := gqlschema.Build(cat, gqlschema.Options{MaxRows: e.opts.MaxRows, Features: e.opts.Features, Version: e.Version()})
	for _, o := range s.Omitted {
		if o.Reason == gqlschema.OmitNameTaken && o.By != nil && o.By.Schema != o.Relation.Schema {
			e.opts.Logger.Warn("relation hidden by another of the same GraphQL name earlier on the search path",
				"role", cat.Role, "hidden", o.Relation.Schema.Name+"."+o.Relation.Name,
				"shown", o.By.Schema.Name+"."+o.By.Name, "type", o.Name, "fix", "pgreflect lint")
		}
	}
	return s
}

// planning is how the engine's requests are compiled: under its limits, and with joined records where its
// statements are prepared.
func (e *Engine) planning() planning {
	return planning{limits: e.opts.Limits, joinRecords: e.opts.StatementMode == StatementsPrepared,
		jsonScalar: true, introWorkers: runtime.GOMAXPROCS(0)}
}

// run answers req against schema: from the compiled-request cache when it can, running the statements in
// one round trip. It returns an error wrapping ErrUnavailable (see unavailable) or ErrInternal, and no body,
// for a failure that Postgres did not report as the request's own.
func (e *Engine) run(ctx context.Context, conn *pgx.Conn, schema *gqlschema.Schema, req Request, b batch) ([]byte, error) {
	c := e.compiled.get(ctx, schema, req, false, func() *compiled { return compile(ctx, schema, e.planning(), req) })
	if c.response != nil {
		return c.response, nil
	}
	b.stmts = c.stmts
	b.mode = e.opts.StatementMode
	results, err := b.run(ctx, conn)
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
	case unavailable(conn, err):
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	case errors.As(err, &pgErr):
		return dataNull(databaseError(pgErr)), nil
	default:
		return nil, fmt.Errorf("%w: %w", ErrInternal, err)
	}
	return c.respond(results), nil
}
