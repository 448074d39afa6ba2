package resolve

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// A cohort's subscribers share a document, its variables, a role and a search path; only their claims differ.
// Refreshing them takes one statement: pgreflect.live_refresh (internal/dbsetup/sql/setup.sql) executes the cohort's
// query once per subscriber, each time after switching the transaction's claims, so that row level security and
// anything Postgres evaluates once per execution (the InitPlan of a policy's `(select auth.uid())`) see that
// subscriber's claims only. One statement, however many subscribers: the cost of a refresh is in executions,
// not in statements, round trips or transactions. In the prepared mode the query runs as the statement this
// connection has prepared for the role (planned once); a connection that has not prepared it yet refreshes
// one transaction per subscriber, which prepares it. In the unnamed mode (behind a transaction pooler, where
// nothing prepared outlives a transaction) EXECUTE plans it for each subscriber.

// multiplexedArgs is how many parameters pgreflect.live_refresh hands to a query it plans itself; such a query
// with more is refreshed one transaction per subscriber.
const multiplexedArgs = 64

const (
	multiplexedTimeoutSQL = "select set_config('statement_timeout', $1, true)"
	multiplexedSQL        = "select pgreflect.live_refresh($1::text[], $2::text[], $3::text[], $4::text[])"
)

// multiplexedRetry is how long a database without pgreflect.live_refresh (set up by an older pgreflect, or its
// login role may not call it) is refreshed one transaction per subscriber before it is asked again.
const multiplexedRetry = time.Minute

// multiplexable reports whether the compiled subscription c may share a statement with others on conn: a live
// query (not a stream) of one statement that this connection has prepared for the role, or, in the unnamed
// mode, that live_refresh can plan itself.
func (e *Engine) multiplexable(conn *pgx.Conn, c *compiled, role string) bool {
	if c.stream != nil || len(c.stmts) != 1 || time.Now().UnixNano() < e.multiplexedAfter.Load() {
		return false
	}
	if e.opts.StatementMode == StatementsUnnamed {
		return len(c.stmts[0].args) <= multiplexedArgs
	}
	_, ok := statementsOf(conn.PgConn()).lookup(role, c.stmts[0].sql)
	return ok
}

func sessionsIn(cohorts []LiveCohort, which []int) int {
	n := 0
	for _, i := range which {
		n += len(cohorts[i].Sessions)
	}
	return n
}

// refreshMultiplexed answers the sessions of the cohorts named by shared with one execution each, all in one
// statement, into out. answered is false when that statement failed as a whole (a subscriber's query failed,
// or the database lacks live_refresh): each subscriber's own transaction then tells whose failure it is. err
// is a failure of the connection, or ErrReplicaBehind.
func (e *Engine) refreshMultiplexed(ctx context.Context, conn *pgx.Conn, cohorts []LiveCohort, compiledOf []*compiled,
	shared []int, lsn, timeout string, out *LiveRefreshes) (answered bool, err error) {
	role := cohorts[shared[0]].Sessions[0].Role
	queries := make([]*string, len(shared))
	args := make([]*string, len(shared))
	var prepared []*string // NULL in the unnamed mode: live_refresh plans the queries itself
	if e.opts.StatementMode != StatementsUnnamed {
		prepared = make([]*string, len(shared))
	}
	var values []*string
	for k, i := range shared {
		st := compiledOf[i].stmts[0]
		queries[k] = &st.sql
		if prepared != nil {
			var name string // none: live_refresh fails, and each subscriber's own transaction answers
			if sd, ok := statementsOf(conn.PgConn()).lookup(role, st.sql); ok {
				name = sd.Name
			}
			prepared[k] = &name
		}
		encoded, _ := encodeParams(st.args)
		list := make([]*string, len(encoded))
		for j, v := range encoded {
			if v != nil {
				text := string(v)
				list[j] = &text
			}
		}
		literal := arrayLiteral(list)
		args[k] = &literal
		index := strconv.Itoa(k + 1)
		for _, s := range cohorts[i].Sessions {
			prelude, err := sessionPrelude(s, newPreludeArgs(s.Role, quoteSearchPath(s.SearchPath), timeout), false)
			if err != nil {
				return false, err
			}
			// live_refresh always sets the legacy per-claim settings: empty ones, which read as not set, unless
			// they are on.
			sub, role, email := legacyClaims(s, e.opts.LegacyClaimSettings)
			for _, v := range [...]string{prelude.args[0].(string), prelude.args[1].(string), prelude.args[2].(string), sub, role, email} {
				values = append(values, &v)
			}
			values = append(values, &index)
		}
	}
	var preparedArg any
	if prepared != nil {
		preparedArg = prepared
	}
	n := sessionsIn(cohorts, shared)
	results, errs, err := runGroupsAfter(ctx, conn, e.opts.StatementMode, "", lsn, [][]statement{{
		{sql: multiplexedTimeoutSQL, args: []any{multiplexedTimeout(timeout, n)}},
		{sql: multiplexedSQL, args: []any{queries, preparedArg, args, values}},
	}})
	if err != nil {
		return false, err
	}
	if errs[0] != nil {
		var pgErr *pgconn.PgError
		if errors.As(errs[0], &pgErr) && (pgErr.Code == "42883" || pgErr.Code == "42501" || pgErr.Code == "3F000") {
			e.multiplexedAfter.Store(time.Now().Add(multiplexedRetry).UnixNano())
		}
		return false, nil
	}
	var answers []*string
	if len(results[0]) < 2 {
		return false, nil
	}
	if err := conn.TypeMap().Scan(pgtype.TextArrayOID, pgtype.TextFormatCode, results[0][1], &answers); err != nil || len(answers) != n {
		return false, nil
	}
	for _, i := range shared {
		c, sessions := compiledOf[i], cohorts[i].Sessions
		refresh := LiveRefresh{Answers: make([]LiveAnswer, len(sessions)), Reads: c.reads}
		for j := range sessions {
			var result []byte
			if a := answers[0]; a != nil {
				result = []byte(*a)
			}
			answers = answers[1:]
			refresh.Answers[j] = LiveAnswer{Body: c.respond([][]byte{result})}
		}
		out.Cohorts[i] = refresh
	}
	out.Statements++ // one for them all
	return true, nil
}

// multiplexedTimeout is the statement timeout of a statement that runs the query for n subscribers: each
// subscriber's share is what one query may take. "0" (none) stays.
func multiplexedTimeout(timeout string, n int) string {
	d, ok := parseTimeout(timeout)
	if !ok || d == 0 {
		return timeout
	}
	return strconv.FormatInt((d * time.Duration(n)).Milliseconds(), 10)
}
