package resolve

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// statement is one SQL statement of a batch; row marks a statement returning one row whose columns are
// each a result (a query's root fields).
type statement struct {
	sql  string
	args []any
	row  bool
	// verbatim says of each column of the result that it is the answer as it is written (sqlgen's
	// Statement.Verbatim): the response takes it without the layout pass.
	verbatim []bool
	// noRow is the result when the statement returns no row (sqlgen's Statement.NoRow).
	noRow []byte
	// rows, when set, takes every row of the result (values valid until it returns), and the statement's
	// result is nil: for the catalog query, whose answer is many rows.
	rows func(values [][]byte) error
}

// batch is what one request sends in one round trip: the session prelude, the request's statements, and an
// epilogue; onError restores the caller's transaction after a failure.
type batch struct {
	// role names the role the statements run as: a prepared statement's cached plan belongs to one role
	// (row level security is planned in), so each role gets its own.
	role                     string
	prelude, stmts, epilogue []statement
	onError                  []statement
	// retryable marks a batch that is its own transaction.
	retryable bool
	mode      StatementMode
}

// StatementMode says how a request's statements reach Postgres.
type StatementMode int

const (
	// StatementsPrepared prepares each statement once per connection and role, under a name, so that Postgres
	// parses it once and may reuse its plan. It needs each connection to stay one server session.
	StatementsPrepared StatementMode = iota
	// StatementsUnnamed parses every statement as the unnamed statement within the request's own pipeline
	// (pgx's QueryExecModeExec): nothing outlives the request's transaction, which is what a pooler in
	// transaction mode (PgBouncer, Supavisor) needs, since the next transaction may run on another server
	// session. It is still one round trip per request.
	StatementsUnnamed
)

func (m StatementMode) String() string {
	if m == StatementsUnnamed {
		return "unnamed"
	}
	return "prepared"
}

// maxRetries bounds how often a batch that lost a deadlock or a serialization conflict is run again.
const maxRetries = 3

// run sends the batch and returns the results of its statements (not of the prelude and epilogue). A batch that
// is its own transaction is retried when Postgres aborted it for a deadlock or a serialization failure: nothing
// of it was committed, so running it again is safe.
func (b batch) run(ctx context.Context, conn *pgx.Conn) ([][]byte, error) {
	noteStatements(ctx, b.stmts)
	all := make([]statement, 0, len(b.prelude)+len(b.stmts)+len(b.epilogue))
	all = append(append(append(all, b.prelude...), b.stmts...), b.epilogue...)
	for attempt := 0; ; attempt++ {
		out, err := runPipeline(ctx, conn, b.mode, b.role, all)
		if err == nil {
			return out[len(b.prelude):], nil
		}
		if b.onError != nil && conn.PgConn().TxStatus() != 'I' {
			_, _ = runPipeline(context.WithoutCancel(ctx), conn, b.mode, b.role, b.onError)
		}
		if !b.retryable || attempt >= maxRetries || !isTransient(err) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(time.Duration(attempt+1) * 5 * time.Millisecond):
		}
	}
}

func isTransient(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

// runPipeline sends the statements in one pipeline (one round trip, one implicit transaction unless the
// statements manage their own) and returns the first column of each statement's first row; a row statement
// contributes every column.
//
// In StatementsPrepared mode statements are prepared on the connection within the same pipeline the first
// time it sees them, so Postgres can reuse their plans; a connection whose prepared statements were discarded
// behind our back is retried once with a fresh cache (the failure happens before anything runs).
func runPipeline(ctx context.Context, conn *pgx.Conn, mode StatementMode, role string, stmts []statement) ([][]byte, error) {
	out, errs, err := runGroups(ctx, conn, mode, role, [][]statement{stmts})
	if err != nil {
		return nil, err
	}
	if errs[0] != nil {
		return nil, errs[0]
	}
	return out[0], nil
}

// runGroups is runPipeline for groups of statements, each its own transaction (see sendGroups), in one round
// trip.
func runGroups(ctx context.Context, conn *pgx.Conn, mode StatementMode, role string, groups [][]statement) ([][][]byte, []error, error) {
	if mode == StatementsUnnamed {
		return sendGroups(ctx, conn, nil, role, groups)
	}
	out, errs, err := sendGroups(ctx, conn, statementsOf(conn.PgConn()), role, groups)
	if err == nil && slices.ContainsFunc(errs, isForgottenStatement) {
		forgetStatements(conn.PgConn())
		out, errs, err = sendGroups(ctx, conn, statementsOf(conn.PgConn()), role, groups)
	}
	return out, errs, err
}

// isForgottenStatement reports whether err says a prepared statement the cache knew of does not exist
// (invalid_sql_statement_name).
func isForgottenStatement(err error) bool {
	if err == nil {
		return false // without the errors.As below, whose target escapes
	}
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "26000"
}

// sendGroups runs groups of statements in one pipeline (one round trip), each group its own implicit
// transaction: a group that fails is rolled back alone and the next one runs. It returns each group's results
// (see runPipeline) or its error; err is a failure of the whole pipeline (the connection), after which nothing
// ran.
//
// A statement new to cache is prepared within the first group that uses it, after that group's prelude has
// switched to the group's role: Postgres checks the privileges of the names a statement uses when it parses it.
// Later groups run it under the same name; should the group that prepared it fail first, they fail with
// 26000, which runGroups answers by preparing again.
func sendGroups(ctx context.Context, conn *pgx.Conn, cache *statementCache, role string, groups [][]statement) (out [][][]byte, errs []error, err error) {
	p := conn.PgConn().StartPipeline(ctx)
	var fresh []preparation
	for _, g := range groups {
		for _, s := range g {
			values, oids := encodeParams(s.args)
			if cache == nil {
				p.SendQueryParams(s.sql, values, oids, nil, nil)
				continue
			}
			if sd, ok := cache.lookup(role, s.sql); ok {
				p.SendQueryStatement(sd, values, nil, nil)
				continue
			}
			name, ok := findPreparation(fresh, role, s.sql)
			if !ok {
				name = cache.newName()
				fresh = append(fresh, preparation{role: role, sql: s.sql, name: name})
				p.SendPrepare(name, s.sql, oids)
			}
			p.SendQueryPrepared(name, values, nil, nil)
		}
		p.SendPipelineSync()
	}
	if cache != nil {
		if evicted := cache.evict(len(fresh)); len(evicted) > 0 {
			for _, name := range evicted {
				p.SendDeallocate(name)
			}
			p.SendPipelineSync()
		}
	}
	if err := p.Flush(); err != nil {
		p.Close()
		return nil, nil, err
	}
	out = make([][][]byte, len(groups))
	errs = make([]error, len(groups))
	// Results arrive in the order sent: the groups, then the deallocations' group.
	group, query, prepared := 0, 0, 0
	for {
		res, err := p.GetResults()
		if err != nil {
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) {
				p.Close()
				return nil, nil, err // the connection is gone
			}
			if group < len(groups) {
				errs[group] = err
			}
			continue
		}
		switch r := res.(type) {
		case *pgconn.StatementDescription:
			// Descriptions come back in the order the statements were prepared (a failed group skips the rest
			// of its own); pgx does not name them.
			if prepared < len(fresh) {
				cache.add(fresh[prepared], r)
				prepared++
			}
		case *pgconn.ResultReader:
			g := groups[group]
			var row bool
			var noRow []byte
			var take func(values [][]byte) error
			if query < len(g) {
				row, noRow, take = g[query].row, g[query].noRow, g[query].rows
			}
			var values [][]byte
			var err error
			if take != nil {
				err = everyRow(r, take) // its result is noRow, nil
			} else {
				values, err = firstRow(r, row)
			}
			if err != nil {
				errs[group] = err
				continue
			}
			switch {
			case row && values != nil:
				out[group] = append(out[group], values...)
			case len(values) > 0:
				out[group] = append(out[group], values[0])
			default:
				out[group] = append(out[group], noRow)
			}
			query++
		case *pgconn.PipelineSync:
			group++
			query = 0
		case nil:
			if err := p.Close(); err != nil {
				return nil, nil, err
			}
			for i := range errs {
				if errs[i] != nil {
					out[i] = nil
				}
			}
			return out, errs, nil
		}
	}
}

// firstRow reads a statement's result and returns a copy of its first row's first column, or of all its
// columns when all is set; nil when it has no row. Only what is returned is copied: pgx's ResultReader.Read
// copies every row and describes every column, which a request's one-row results do not need.
func firstRow(r *pgconn.ResultReader, all bool) ([][]byte, error) {
	var row [][]byte
	for r.NextRow() {
		if row != nil {
			continue
		}
		values := r.Values()
		if !all && len(values) > 1 {
			values = values[:1]
		}
		row = make([][]byte, len(values))
		for i, v := range values {
			if v != nil {
				row[i] = bytes.Clone(v) // Values are the reader's buffer until the next row
			}
		}
	}
	if _, err := r.Close(); err != nil {
		return nil, err
	}
	return row, nil
}

// everyRow reads a statement's result, handing every row to take. A row take refuses ends the reading, and the
// rest of the result is skipped.
func everyRow(r *pgconn.ResultReader, take func(values [][]byte) error) error {
	var refused error
	for refused == nil && r.NextRow() {
		refused = take(r.Values())
	}
	_, err := r.Close()
	return cmp.Or(err, refused)
}

// encodeParams renders parameters in text format: strings as text, string lists as text[].
func encodeParams(args []any) ([][]byte, []uint32) {
	values := make([][]byte, len(args))
	oids := make([]uint32, len(args))
	for i, a := range args {
		switch a := a.(type) {
		case string:
			values[i], oids[i] = textBytes(a), 25
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

// textBytes is s as the bytes of a parameter value without copying it: pgx copies parameter values into its
// write buffer when a statement is sent and never writes to them. "" stays an empty value, not NULL (nil).
func textBytes(s string) []byte {
	if s == "" {
		return []byte{}
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
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
