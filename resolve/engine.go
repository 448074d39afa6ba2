// Package resolve answers GraphQL requests the way pg_graphql does: it parses the request with gqlparser,
// validates it against the schema generated for the caller's role, plans it, compiles the plan to SQL with
// sqlgen and runs it in one pipelined round trip, returning pg_graphql's response body.
//
// It is a library: a Go program can resolve a request on any pgx connection, inside its own transaction, as
// that session's current role and search path (Engine.Execute). The HTTP server uses Engine.ExecuteAs, which
// switches to the request's role and JWT claims inside the request's own transaction.
package resolve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/reflect"
	"github.com/pgreflect/pgreflect/sqlgen"
)

// Request is a GraphQL request body.
type Request struct {
	Query         string          `json:"query"`
	Variables     json.RawMessage `json:"variables,omitempty"`
	OperationName string          `json:"operationName,omitempty"`
}

// Options configure an Engine.
type Options struct {
	// MaxRows caps page sizes where no directive does; 0 means pg_graphql's 30.
	MaxRows int
	// CacheSize bounds the number of schemas kept (one per role and search path); default 64.
	CacheSize int
	// Limits bound what one request may ask (expanded fields, depth, aliases, parameters); zero fields take
	// DefaultLimits.
	Limits Limits
}

// Engine resolves requests. It caches the generated schema per (schema generation, role, search_path) and is
// safe for concurrent use.
type Engine struct {
	opts    Options
	schemas *reflect.Cache[*gqlschema.Schema]
}

// NewEngine returns an engine. Call Invalidate (or hand the engine to reflect.Watch) when the database schema
// changes.
func NewEngine(opts Options) *Engine {
	if opts.CacheSize == 0 {
		opts.CacheSize = 64
	}
	return &Engine{opts: opts, schemas: reflect.NewCache[*gqlschema.Schema](opts.CacheSize)}
}

// Invalidate forgets every cached schema.
func (e *Engine) Invalidate() { e.schemas.Invalidate() }

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
	claims, err := json.Marshal(s.Claims)
	if err != nil {
		return errorsOnly(fmt.Errorf("encode claims: %w", err))
	}
	searchPath := quoteSearchPath(s.SearchPath)
	claim := func(name string) string {
		if v, ok := s.Claims[name].(string); ok {
			return v
		}
		return ""
	}
	prelude := statement{
		sql: "select set_config('role', $1, true), set_config('search_path', $2, true), " +
			"set_config('request.jwt.claims', $3, true), set_config('request.jwt.claim.sub', $4, true), " +
			"set_config('request.jwt.claim.role', $5, true), set_config('request.jwt.claim.email', $6, true)",
		args: []any{s.Role, searchPath, string(claims), claim("sub"), claim("role"), claim("email")},
	}
	schema := func() (*gqlschema.Schema, error) {
		return e.schemas.Get(ctx, s.Role, s.SearchPath, func(ctx context.Context) (*gqlschema.Schema, error) {
			results, err := runBatch(ctx, conn, []statement{prelude, {sql: reflect.CatalogQuery}})
			if err != nil {
				return nil, err
			}
			return e.build(results[1])
		})
	}
	return e.resolve(ctx, conn, req, schema, []statement{prelude}, nil, nil)
}

// Execute resolves req on conn as the connection's current role and search path. When conn is inside a
// transaction the request runs in a savepoint: a failed request is rolled back to it and the caller's
// transaction stays usable.
func (e *Engine) Execute(ctx context.Context, conn *pgx.Conn, req Request) []byte {
	var role string
	var searchPath []string
	if err := conn.QueryRow(ctx, "select current_user::text, current_schemas(false)::text[]").Scan(&role, &searchPath); err != nil {
		return errorsOnly(fmt.Errorf("read session: %w", err))
	}
	schema := func() (*gqlschema.Schema, error) {
		return e.schemas.Get(ctx, role, searchPath, func(ctx context.Context) (*gqlschema.Schema, error) {
			cat, err := reflect.Load(ctx, conn)
			if err != nil {
				return nil, err
			}
			return gqlschema.Build(cat, gqlschema.Options{MaxRows: e.opts.MaxRows}), nil
		})
	}
	var prelude, epilogue, onError []statement
	if conn.PgConn().TxStatus() != 'I' {
		prelude = []statement{{sql: "savepoint pgreflect_request"}}
		epilogue = []statement{{sql: "release savepoint pgreflect_request"}}
		onError = []statement{{sql: "rollback to savepoint pgreflect_request"}, {sql: "release savepoint pgreflect_request"}}
	}
	return e.resolve(ctx, conn, req, schema, prelude, epilogue, onError)
}

func (e *Engine) build(catalogJSON []byte) (*gqlschema.Schema, error) {
	cat, err := reflect.Decode(catalogJSON)
	if err != nil {
		return nil, err
	}
	return gqlschema.Build(cat, gqlschema.Options{MaxRows: e.opts.MaxRows}), nil
}

// resolve parses, plans and runs a request. prelude runs first and epilogue last in the same batch; onError
// runs after a failed batch (to restore the caller's transaction).
func (e *Engine) resolve(ctx context.Context, conn *pgx.Conn, req Request, schemaFn func() (*gqlschema.Schema, error), prelude, epilogue, onError []statement) []byte {
	doc, op, variables, err := parse(req.Query, req.OperationName, req.Variables)
	if err != nil {
		return errorsOnly(err)
	}
	schema, err := schemaFn()
	if err != nil {
		var je *reflect.DirectiveJSONError
		if errors.As(err, &je) {
			return dataNull(gqlError("%s", je.Error()))
		}
		var de *reflect.DirectiveError
		if errors.As(err, &de) {
			return errorsOnly(gqlError("%s", de.Error()))
		}
		return errorsOnly(err)
	}
	r := &request{schema: schema, doc: doc, op: op, variables: variables}
	fail := func(err error) []byte {
		if onError != nil {
			_, _ = runBatch(context.WithoutCancel(ctx), conn, onError)
		}
		return dataNull(err)
	}
	if op.Operation == ast.Mutation {
		if schema.Mutation == nil {
			return dataNull(gqlError("Unknown type Mutation"))
		}
		stmts, keys, err := r.planMutation()
		if err != nil {
			return dataNull(err)
		}
		results, err := runBatch(ctx, conn, concat(prelude, stmts, epilogue))
		if err != nil {
			return fail(err)
		}
		data := map[string]any{}
		next := len(prelude)
		for _, k := range keys {
			if k.sql == nil {
				data[k.key] = k.value
				continue
			}
			data[k.key] = rawJSON(results[next])
			next++
		}
		return encodeResponse(data, nil)
	}
	roots, err := r.collect(op.SelectionSet, "Query")
	if err != nil {
		return errorsOnly(err)
	}
	if len(roots) == 0 {
		return errorsOnly(gqlError("Selection set must not be empty"))
	}
	var plans []*rootPlan
	var fieldErrors []error
	for _, sel := range roots {
		p, err := r.planQueryField(sel)
		if err != nil {
			fieldErrors = append(fieldErrors, err)
			continue
		}
		plans = append(plans, p)
	}
	if len(plans) == 0 {
		return encodeResponse(nil, fieldErrors)
	}
	var sqlFields []sqlgen.RootField
	for _, p := range plans {
		if p.sql != nil {
			sqlFields = append(sqlFields, *p.sql)
		}
	}
	data := map[string]any{}
	if len(sqlFields) > 0 {
		q := sqlgen.Query(sqlFields)
		results, err := runBatch(ctx, conn, concat(prelude, []statement{{sql: q.SQL, args: q.Args, row: true}}, epilogue))
		if err != nil {
			return fail(err)
		}
		row := results[len(prelude):]
		i := 0
		for _, p := range plans {
			if p.sql != nil {
				data[p.key] = rawJSON(row[i])
				i++
			}
		}
	}
	for _, p := range plans {
		if p.sql == nil {
			data[p.key] = p.value
		}
	}
	return encodeResponse(data, fieldErrors)
}

func concat(parts ...[]statement) []statement {
	var out []statement
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// statement is one SQL statement of a batch; row marks a statement returning one row whose columns are
// each a result (a query's root fields).
type statement struct {
	sql  string
	args []any
	row  bool
}

// runBatch sends the statements in one pipeline (one round trip, one implicit transaction unless the
// statements manage their own) and returns the first column of each statement's first row; a row statement
// contributes every column. The first error is returned with the database's message.
//
// Statements are prepared on the connection within the same pipeline the first time it sees them, so
// Postgres can reuse their plans; a connection whose prepared statements were discarded behind our back is
// retried once with a fresh cache (the failure happens before anything runs).
func runBatch(ctx context.Context, conn *pgx.Conn, stmts []statement) ([][]byte, error) {
	out, err := runPipeline(ctx, conn, stmts)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "26000" { // invalid_sql_statement_name
		delete(conn.PgConn().CustomData(), statementCacheKey)
		out, err = runPipeline(ctx, conn, stmts)
	}
	if err != nil {
		return nil, sqlError(err)
	}
	return out, nil
}

const statementCacheKey = "pgreflect.statements"

// maxPreparedPerConn bounds the statements kept prepared on one connection.
const maxPreparedPerConn = 256

// statementCache maps SQL text to the name it is prepared under on one connection. Names are never reused,
// so a deallocation lost to an aborted pipeline leaves only an unused statement behind.
type statementCache struct {
	names map[string]string
	order []string // SQL texts, least recently prepared first
	next  int
}

func statementsOf(pc *pgconn.PgConn) *statementCache {
	data := pc.CustomData()
	c, ok := data[statementCacheKey].(*statementCache)
	if !ok {
		c = &statementCache{names: map[string]string{}}
		data[statementCacheKey] = c
	}
	return c
}

func runPipeline(ctx context.Context, conn *pgx.Conn, stmts []statement) ([][]byte, error) {
	cache := statementsOf(conn.PgConn())
	p := conn.PgConn().StartPipeline(ctx)
	fresh := map[string]string{} // SQL → name prepared in this pipeline
	for _, s := range stmts {
		values, oids := encodeParams(s.args)
		name, ok := cache.names[s.sql]
		if !ok {
			if name, ok = fresh[s.sql]; !ok {
				cache.next++
				name = "pgreflect_" + strconv.Itoa(cache.next)
				fresh[s.sql] = name
				p.SendPrepare(name, s.sql, oids)
			}
		}
		p.SendQueryPrepared(name, values, nil, nil)
	}
	var evicted []string
	for len(cache.order)+len(fresh) > maxPreparedPerConn && len(cache.order) > 0 {
		old := cache.order[0]
		cache.order = cache.order[1:]
		evicted = append(evicted, cache.names[old])
		delete(cache.names, old)
	}
	for _, name := range evicted {
		p.SendDeallocate(name)
	}
	if err := p.Sync(); err != nil {
		p.Close()
		return nil, err
	}
	preparedNames := map[string]string{}
	for sql, name := range fresh {
		preparedNames[name] = sql
	}
	var out [][]byte
	var firstErr error
	query := 0
	for firstErr == nil {
		res, err := p.GetResults()
		if err != nil {
			firstErr = err
			break
		}
		switch r := res.(type) {
		case *pgconn.StatementDescription:
			if sql, ok := preparedNames[r.Name]; ok {
				cache.names[sql] = r.Name
				cache.order = append(cache.order, sql)
			}
		case *pgconn.ResultReader:
			result := r.Read()
			if result.Err != nil {
				firstErr = result.Err
				break
			}
			switch {
			case query < len(stmts) && stmts[query].row && len(result.Rows) > 0:
				out = append(out, result.Rows[0]...)
			case len(result.Rows) > 0 && len(result.Rows[0]) > 0:
				out = append(out, result.Rows[0][0])
			default:
				out = append(out, nil)
			}
			query++
		case *pgconn.PipelineSync:
			return out, p.Close()
		case nil:
			return out, p.Close()
		}
	}
	if err := p.Close(); err != nil && firstErr == nil {
		firstErr = err
	}
	return nil, firstErr
}

// sqlError passes the database's message through verbatim, as pg_graphql does.
func sqlError(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return gqlError("%s", pgErr.Message)
	}
	return err
}

// encodeParams renders parameters in text format: strings as text, string lists as text[].
func encodeParams(args []any) ([][]byte, []uint32) {
	values := make([][]byte, len(args))
	oids := make([]uint32, len(args))
	for i, a := range args {
		switch a := a.(type) {
		case string:
			values[i], oids[i] = []byte(a), 25
		case []*string:
			values[i], oids[i] = []byte(arrayLiteral(a)), 1009
		case nil:
			oids[i] = 25
		default:
			values[i], oids[i] = []byte(fmt.Sprint(a)), 25
		}
	}
	return values, oids
}

func arrayLiteral(vs []*string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, v := range vs {
		if i > 0 {
			b.WriteByte(',')
		}
		if v == nil {
			b.WriteString("NULL")
			continue
		}
		b.WriteByte('"')
		for _, r := range *v {
			if r == '"' || r == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

func quoteSearchPath(schemas []string) string {
	quoted := make([]string, len(schemas))
	for i, s := range schemas {
		quoted[i] = sqlgen.Ident(s)
	}
	return strings.Join(quoted, ", ")
}
