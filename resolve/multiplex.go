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

// multiplexedSessionValues is what live_refresh reads per subscriber: the first values of the session prelude
// (role, search path, claims, sub, role claim, email).
const multiplexedSessionValues = 6

const (
	multiplexedTimeoutSQL = "select set_config('statement_timeout', $1, true)"
	multiplexedSQL        = "select pgreflect.live_refresh($1, $2, $3::text[], $4::text[])"
)

// multiplexedRetry is how long a database without pgreflect.live_refresh (set up by an older pgreflect, or its
// login role may not call it) is refreshed one transaction per subscriber before it is asked again.
const multiplexedRetry = time.Minute

// multiplexes reports whether the cohort of c and sessions is refreshed by one statement on conn, and the name of
// the statement prepared for it there ("" in the unnamed mode).
func (e *Engine) multiplexes(conn *pgx.Conn, c *compiled, sessions []Session) (prepared string, ok bool) {
	if len(sessions) < 2 || c.stream != nil || len(c.stmts) != 1 || time.Now().UnixNano() < e.multiplexedAfter.Load() {
		return "", false
	}
	if e.opts.StatementMode == StatementsUnnamed {
		return "", len(c.stmts[0].args) <= multiplexedArgs
	}
	return statementsOf(conn.PgConn()).lookup(sessions[0].Role, c.stmts[0].sql)
}

// refreshMultiplexed answers sessions with one execution of c each, in one statement. fallback says that
// statement failed as a whole (a subscriber's query failed, or the database lacks live_refresh): each
// subscriber's own transaction then tells whose failure it is. err is a failure of the connection, or
// ErrReplicaBehind.
func (e *Engine) refreshMultiplexed(ctx context.Context, conn *pgx.Conn, c *compiled, prepared string, sessions []Session, lsn, timeout string) (refresh LiveRefresh, fallback bool, err error) {
	values := make([]*string, 0, len(sessions)*multiplexedSessionValues)
	for _, s := range sessions {
		prelude, err := sessionPrelude(s, timeout)
		if err != nil {
			return LiveRefresh{}, false, err
		}
		for _, v := range prelude.args[:multiplexedSessionValues] {
			text := v.(string)
			values = append(values, &text)
		}
	}
	encoded, _ := encodeParams(c.stmts[0].args)
	args := make([]*string, len(encoded))
	for i, v := range encoded {
		if v != nil {
			text := string(v)
			args[i] = &text
		}
	}
	var name any // NULL: live_refresh plans the query itself
	if prepared != "" {
		name = prepared
	}
	var groups [][]statement
	if lsn != "" {
		groups = append(groups, []statement{{sql: replayedSQL, args: []any{lsn}}})
	}
	groups = append(groups, []statement{
		{sql: multiplexedTimeoutSQL, args: []any{multiplexedTimeout(timeout, len(sessions))}},
		{sql: multiplexedSQL, args: []any{c.stmts[0].sql, name, args, values}},
	})
	out, errs, err := runGroups(ctx, conn, e.opts.StatementMode, "", groups)
	if err != nil {
		return LiveRefresh{}, false, err
	}
	if lsn != "" {
		if errs[0] != nil || len(out[0]) == 0 || string(out[0][0]) != "true" {
			return LiveRefresh{}, false, ErrReplicaBehind
		}
		out, errs = out[1:], errs[1:]
	}
	if errs[0] != nil {
		var pgErr *pgconn.PgError
		if errors.As(errs[0], &pgErr) && (pgErr.Code == "42883" || pgErr.Code == "42501" || pgErr.Code == "3F000") {
			e.multiplexedAfter.Store(time.Now().Add(multiplexedRetry).UnixNano())
		}
		return LiveRefresh{}, true, nil
	}
	var answers []*string
	if len(out[0]) < 2 {
		return LiveRefresh{}, true, nil
	}
	if err := conn.TypeMap().Scan(pgtype.TextArrayOID, pgtype.TextFormatCode, out[0][1], &answers); err != nil || len(answers) != len(sessions) {
		return LiveRefresh{}, true, nil
	}
	refresh = LiveRefresh{Answers: make([]LiveAnswer, len(sessions)), Reads: c.reads, Statements: 1}
	for i, a := range answers {
		var result []byte
		if a != nil {
			result = []byte(*a)
		}
		refresh.Answers[i] = LiveAnswer{Body: c.respond([][]byte{result})}
	}
	return refresh, false, nil
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
