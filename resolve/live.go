package resolve

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/reflect"
)

// A live query is a subscription answered again whenever its answer may have changed. Its subscribers share one
// compiled statement per (document, variables, role, search path): a cohort. Row level security must still see
// each subscriber's own claims, and it reads them from settings of the transaction (auth.uid() reads
// request.jwt.claims). Putting every subscriber into one query would not be safe: Postgres evaluates an
// uncorrelated subquery such as the `(select auth.uid())` that Supabase recommends in policies once per
// execution (an InitPlan), so the first subscriber's claims would decide what every other one sees. A refresh
// therefore executes the query once per distinct set of claims, all in one statement (multiplex.go); where that
// statement cannot serve, in one pipeline of one short transaction per set of claims. docs/subscriptions.md
// explains it.

// Operation is the type of the operation a request runs ("query", "mutation" or "subscription"), or an error
// in the GraphQL contract's shape when the document does not parse or names no operation.
func Operation(req Request) (string, []byte) {
	doc, err := parser.ParseQuery(&ast.Source{Input: req.Query})
	if err != nil {
		return "", errorsOnly(parseError(req.Query, err))
	}
	op, err := selectOperation(doc, req.OperationName)
	if err != nil {
		return "", errorsOnly(err)
	}
	return string(op.Operation), nil
}

// Reads are the relations a request reads: a change to one of them may change its answer. All is set when it
// reads something that cannot be named that way (a function, a view, a partitioned table).
type Reads struct {
	All bool
	// Relations are schema-qualified names, sorted.
	Relations []RelationName
}

// RelationName names a table.
type RelationName struct{ Schema, Name string }

// readSet collects the relations a request plans over.
type readSet struct {
	all       bool
	relations map[uint32]*reflect.Relation
}

func (rs *readSet) add(rel *reflect.Relation) {
	if rel.Kind != "r" {
		// A view's rows change with its base tables, a partitioned table's with its partitions.
		rs.all = true
		return
	}
	if rs.relations == nil {
		rs.relations = map[uint32]*reflect.Relation{}
	}
	rs.relations[rel.OID] = rel
}

func (rs *readSet) reads() Reads {
	out := Reads{All: rs.all}
	for _, rel := range rs.relations {
		out.Relations = append(out.Relations, RelationName{Schema: rel.Schema.Name, Name: rel.Name})
	}
	slices.SortFunc(out.Relations, func(a, b RelationName) int {
		return cmp.Or(strings.Compare(a.Schema, b.Schema), strings.Compare(a.Name, b.Name))
	})
	return out
}

// LiveAnswer is one subscriber's answer to a refresh.
type LiveAnswer struct {
	// Body is the response body, exactly as a query of the same document would be answered.
	Body []byte
	// Final marks an answer that ends the subscription: the request failed as a whole (it no longer validates
	// against the role's schema, or a statement failed: a revoked grant, a dropped column).
	Final bool
	// Cursor is, for a stream, the position after this batch (Request.StreamCursor of the next refresh); More
	// says the batch was full, so more rows may be waiting. A stream's empty batch has no Body: nothing to send.
	Cursor json.RawMessage
	More   bool
}

// LiveRefresh is the outcome of refreshing a cohort.
type LiveRefresh struct {
	// Answers hold one answer per session, in order.
	Answers []LiveAnswer
	// Reads are what the subscription reads, for deciding which changes refresh it next.
	Reads Reads
	// Statements counts, for RefreshLive and RefreshLiveAfter, the statements that executed the query: one for
	// a multiplexed refresh, else one per session.
	Statements int
}

// RefreshLive answers the subscription req for each of sessions, all of one role and search path, on conn in
// one round trip, each under its own claims: in one statement (multiplex.go), else one short transaction per
// session. An error means no session was answered: the connection failed (the database is unavailable).
func (e *Engine) RefreshLive(ctx context.Context, conn *pgx.Conn, req Request, sessions []Session) (LiveRefresh, error) {
	return e.RefreshLiveAfter(ctx, conn, req, sessions, "")
}

// ErrReplicaBehind is RefreshLiveAfter's answer on a replica that has not replayed the change yet.
var ErrReplicaBehind = errors.New("the replica has not replayed the change yet")

// RefreshLiveAfter is RefreshLive on a read replica, for a change committed at the WAL position lsn: the same
// round trip first checks that the replica has replayed it, and answers ErrReplicaBehind (having sent nothing
// to anyone) when it has not.
func (e *Engine) RefreshLiveAfter(ctx context.Context, conn *pgx.Conn, req Request, sessions []Session, lsn string) (LiveRefresh, error) {
	r, err := e.RefreshLiveCohorts(ctx, conn, []LiveCohort{{Request: req, Sessions: sessions}}, lsn)
	if err != nil {
		return LiveRefresh{}, err
	}
	refresh := r.Cohorts[0]
	refresh.Statements = r.Statements
	return refresh, nil
}

// LiveCohort is a subscription and the sessions that subscribed to it.
type LiveCohort struct {
	Request  Request
	Sessions []Session
}

// LiveRefreshes are the outcomes of refreshing several cohorts together.
type LiveRefreshes struct {
	// Cohorts hold one outcome per cohort, in order.
	Cohorts []LiveRefresh
	// Statements counts the statements that executed the cohorts' queries.
	Statements int
}

// RefreshLiveCohorts answers several cohorts whose sessions are all of one role and search path (the same
// document with different variables, say) on conn: those that can be are multiplexed into one statement
// together (multiplex.go), the others refreshed one transaction per session. An error means no session was
// answered: the connection failed, or the replica is behind lsn (ErrReplicaBehind).
func (e *Engine) RefreshLiveCohorts(ctx context.Context, conn *pgx.Conn, cohorts []LiveCohort, lsn string) (LiveRefreshes, error) {
	out := LiveRefreshes{Cohorts: make([]LiveRefresh, len(cohorts))}
	var first *Session
	for i := range cohorts {
		if len(cohorts[i].Sessions) > 0 {
			first = &cohorts[i].Sessions[0]
			break
		}
	}
	if first == nil {
		return out, nil
	}
	rs, err := e.schemas.Get(ctx, first.Role, first.SearchPath, func(ctx context.Context) (*roleSchema, error) {
		return e.loadAs(ctx, conn, *first)
	})
	if err != nil {
		if conn.IsClosed() {
			return LiveRefreshes{}, err
		}
		for i, co := range cohorts {
			out.Cohorts[i] = sameAnswer(len(co.Sessions), LiveAnswer{Body: e.schemaAnswer(ctx, co.Request, err), Final: true})
		}
		return out, nil
	}
	timeout := rs.timeout
	compiledOf := make([]*compiled, len(cohorts))
	var shared []int // the cohorts that may share one statement
	for i, co := range cohorts {
		if len(co.Sessions) == 0 {
			continue
		}
		c := e.compiled.get(ctx, rs.schema, co.Request, true, func() *compiled {
			return compileLive(ctx, rs.schema, e.planning(), co.Request)
		})
		compiledOf[i] = c
		if c.response != nil {
			out.Cohorts[i] = sameAnswer(len(co.Sessions), LiveAnswer{Body: c.response, Final: true})
			compiledOf[i] = nil
			continue
		}
		if e.multiplexable(conn, c, first.Role) {
			shared = append(shared, i)
		}
	}
	if len(shared) > 0 && sessionsIn(cohorts, shared) > 1 {
		answered, err := e.refreshMultiplexed(ctx, conn, cohorts, compiledOf, shared, lsn, timeout, &out)
		if err != nil {
			return LiveRefreshes{}, err
		}
		if answered {
			for _, i := range shared {
				compiledOf[i] = nil
			}
			lsn = "" // checked
		}
	}
	for i, c := range compiledOf {
		if c == nil {
			continue
		}
		r, err := e.refreshEach(ctx, conn, c, cohorts[i].Sessions, lsn, timeout)
		if err != nil {
			return LiveRefreshes{}, err
		}
		out.Cohorts[i] = r
		out.Statements += len(cohorts[i].Sessions)
		lsn = ""
	}
	return out, nil
}

// refreshEach answers sessions of the compiled subscription c one short transaction each, in one round trip.
func (e *Engine) refreshEach(ctx context.Context, conn *pgx.Conn, c *compiled, sessions []Session, lsn, timeout string) (LiveRefresh, error) {
	groups := make([][]statement, 0, len(sessions))
	for _, s := range sessions {
		prelude, err := sessionPrelude(s, newPreludeArgs(s.Role, quoteSearchPath(s.SearchPath), timeout), e.opts.LegacyClaimSettings)
		if err != nil {
			return LiveRefresh{}, err
		}
		groups = append(groups, append([]statement{prelude}, c.stmts...))
	}
	out, errs, err := runGroupsAfter(ctx, conn, e.opts.StatementMode, sessions[0].Role, lsn, groups)
	if err != nil {
		return LiveRefresh{}, err
	}
	refresh := LiveRefresh{Answers: make([]LiveAnswer, len(sessions)), Reads: c.reads}
	for i := range sessions {
		if errs[i] != nil {
			refresh.Answers[i] = LiveAnswer{Body: dataNull(e.statementFailure(ctx, errs[i])), Final: true}
			continue
		}
		body := c.respond(out[i][1:])
		if c.stream == nil {
			refresh.Answers[i] = LiveAnswer{Body: body}
			continue
		}
		body, cursor, rows, err := c.stream.reshape(body)
		switch {
		case err != nil:
			return LiveRefresh{}, err
		case cursor == nil && rows == 0 && bytes.Contains(body, []byte(`"errors"`)):
			refresh.Answers[i] = LiveAnswer{Body: body, Final: true}
		case rows > 0:
			refresh.Answers[i] = LiveAnswer{Body: body, Cursor: cursor, More: rows >= c.stream.batchSize}
		}
	}
	return refresh, nil
}

// IsStream reports whether req subscribes to a stream (Subscription.<x>Stream): its subscriber has a position
// of its own, so it shares no statement with others.
func IsStream(req Request) bool {
	doc, err := parser.ParseQuery(&ast.Source{Input: req.Query})
	if err != nil {
		return false
	}
	op, err := selectOperation(doc, req.OperationName)
	if err != nil || op.Operation != ast.Subscription {
		return false
	}
	for _, s := range op.SelectionSet {
		if f, ok := s.(*ast.Field); ok && strings.HasSuffix(f.Name, "Stream") {
			return true
		}
	}
	return false
}

func sameAnswer(n int, a LiveAnswer) LiveRefresh {
	r := LiveRefresh{Answers: make([]LiveAnswer, n)}
	for i := range r.Answers {
		r.Answers[i] = a
	}
	return r
}

// runGroupsAfter is runGroups on a server that must first have replayed the WAL up to lsn (none when ""): the
// same round trip checks it, and answers ErrReplicaBehind, having run nothing else, when it has not.
func runGroupsAfter(ctx context.Context, conn *pgx.Conn, mode StatementMode, role, lsn string, groups [][]statement) ([][][]byte, []error, error) {
	if lsn == "" {
		return runGroups(ctx, conn, mode, role, groups)
	}
	out, errs, err := runGroups(ctx, conn, mode, role, append([][]statement{{{sql: replayedSQL, args: []any{lsn}}}}, groups...))
	if err != nil {
		return nil, nil, err
	}
	if errs[0] != nil || len(out[0]) == 0 || string(out[0][0]) != "true" {
		return nil, nil, ErrReplicaBehind
	}
	return out[1:], errs[1:], nil
}

// replayedSQL tells whether the server has replayed the WAL up to $1 (a primary always has).
const replayedSQL = "select coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, true)::text"

// compileLive compiles a subscription: its one root field is planned as the same field of the query root.
func compileLive(ctx context.Context, schema *gqlschema.Schema, p planning, req Request) *compiled {
	doc, op, variables, err := parse(req.Query, req.OperationName, req.Variables)
	if err != nil {
		return &compiled{response: errorsOnly(err)}
	}
	if op.Operation != ast.Subscription {
		return &compiled{response: errorsOnly(errNotASubscription())}
	}
	if schema.Subscription == nil {
		return &compiled{response: errorsOnly(errSubscription())}
	}
	r := p.request(schema, doc, op, variables)
	roots, err := r.collect(op.SelectionSet, "Subscription")
	if err != nil {
		return &compiled{response: errorsOnly(err)}
	}
	if len(roots) != 1 {
		return &compiled{response: errorsOnly(errSubscriptionRootFields())}
	}
	sel := roots[0]
	f := findField(schema.Subscription, sel.Name)
	if f == nil {
		return &compiled{response: errorsOnly(errUnknownField(sel.Name, "Subscription"))}
	}
	var plan *rootPlan
	var st *stream
	if f.Kind == gqlschema.FieldStream {
		plan, st, err = r.planStream(sel, f, req.StreamCursor)
	} else {
		plan, err = r.planQueryField(sel)
	}
	if err != nil {
		// A field error of a query is the whole answer of a subscription: there is nothing else to send.
		return &compiled{response: dataNull(err)}
	}
	c := r.compiledFromPlans([]*rootPlan{plan}, nil)
	c.reads, c.stream = r.reads.reads(), st
	return c
}
