package resolve

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// preparedPlans reads, on the test connection itself, how often each prepared statement of the engine was
// planned generically and custom.
func preparedPlans(t *testing.T, d *testDB, like string) (statements int, generic, custom int64) {
	t.Helper()
	rows, err := d.conn.Query(context.Background(),
		"select generic_plans, custom_plans from pg_prepared_statements where name like 'pgreflect_%' and statement like $1", like)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var g, c int64
		if err := rows.Scan(&g, &c); err != nil {
			t.Fatal(err)
		}
		statements++
		generic += g
		custom += c
	}
	return statements, generic, custom
}

// A repeated request is planned a handful of times per role and connection, then runs on Postgres' generic
// plan; it is prepared once per role, not once per request. Before the fix every request prepared its
// statement anew (and leaked it): plans equalled calls.
func TestRepeatedRequestReusesItsPlan(t *testing.T) {
	d := newTestDB(t, blogFixture+`
		alter table blog enable row level security;
		create policy anon_reads on blog for select to anon using (true);
		create policy own_blogs on blog for select to authenticated using (owner_id = (auth.jwt()->>'owner')::int);`)
	const calls = 40
	ctx := context.Background()
	if _, err := d.conn.Exec(ctx, "create extension if not exists pg_stat_statements; select pg_stat_statements_reset()"); err != nil {
		t.Fatalf("pg_stat_statements (pgtest's cluster preloads it): %v", err)
	}
	queries := []string{
		`{ accountCollection(first: 1) { edges { node { id } } } }`,
		`{ accountCollection(first: 10, filter: {id: {gte: 1}}) { edges { node { id email blogCollection(first: 10) { edges { node { id name } } } } } } }`,
		`{ blogCollection(first: 5, orderBy: [{name: DescNullsLast}], after: "WyJBOiBCbG9nIDIiLCAyXQ==") { pageInfo { hasNextPage hasPreviousPage endCursor } edges { cursor node { id name owner { email } } } } }`,
	}
	sessions := []Session{
		{Role: "anon", Claims: map[string]any{"role": "anon"}, SearchPath: []string{"public"}},
		{Role: "authenticated", Claims: map[string]any{"role": "authenticated", "owner": "1"}, SearchPath: []string{"public"}},
	}
	for i := 0; i < calls; i++ {
		for _, s := range sessions {
			for _, q := range queries {
				body := string(d.engine.ExecuteAs(context.Background(), d.conn, s, Request{Query: q}))
				if !strings.HasPrefix(body, `{"data": {"`) || strings.Contains(body, "errors") {
					t.Fatalf("%s as %s: %s", q, s.Role, body)
				}
			}
		}
	}
	n, generic, custom := preparedPlans(t, d, "%\"public\".%")
	if want := len(queries) * len(sessions); n != want {
		t.Errorf("%d statements prepared for %d distinct (statement, role) pairs", n, want)
	}
	executions := int64(calls * len(queries) * len(sessions))
	if generic+custom != executions {
		t.Errorf("pg_prepared_statements counts %d executions, want %d", generic+custom, executions)
	}
	// Postgres tries five custom plans per statement before it settles on the generic one.
	if custom > int64(5*n) {
		t.Errorf("%d custom plans (of %d executions): the statements are planned per call", custom, executions)
	}
	// pg_stat_statements, which counts across connections and statement names, agrees.
	var plans, callsSeen int64
	if err := d.conn.QueryRow(ctx, `select coalesce(sum(plans), 0), coalesce(sum(calls), 0) from pg_stat_statements
		where dbid = (select oid from pg_database where datname = current_database()) and query like '%"public".%'`).Scan(&plans, &callsSeen); err != nil {
		t.Fatal(err)
	}
	if callsSeen != executions {
		t.Errorf("pg_stat_statements counts %d calls, want %d", callsSeen, executions)
	}
	if plans > callsSeen/4 {
		t.Errorf("pg_stat_statements: %d plans for %d calls", plans, callsSeen)
	}
}

// The statement timeout cuts a runaway statement, and the connection serves the next request at once.
func TestStatementTimeoutCutsALongRequest(t *testing.T) {
	d := newTestDB(t, `create table doc(id int primary key, body text);
		insert into doc select i, repeat('ab', 5000) from generate_series(1, 200) i;
		grant select on doc to anon;`)
	d.engine = NewEngine(Options{StatementTimeout: 300 * time.Millisecond})
	// A costly regular expression that never matches: about 0.5s per row here, so 100s for the table without
	// a timeout.
	pattern := "^" + strings.Repeat("(a|b)*", 300) + "x"
	query := `query($p: String!) { docCollection(filter: {body: {iregex: $p}}) { edges { node { id } } } }`
	start := time.Now()
	got := d.as("anon", nil, query, `{"p": "`+pattern+`"}`)
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("the request ran %s despite a 300ms statement timeout", elapsed)
	}
	if want := `{"data": null, "errors": [{"message": "canceling statement due to statement timeout"}]}`; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	if got := d.as("anon", nil, `{ docCollection(first: 1) { edges { node { id } } } }`, ""); got != `{"data": {"docCollection": {"edges": [{"node": {"id": 1}}]}}}` {
		t.Errorf("after the timeout: %s", got)
	}
}

// A role's own statement_timeout (ALTER ROLE ... SET, as Supabase configures its roles) wins over the
// engine's default, which still holds for the other roles.
func TestRoleStatementTimeoutOverridesTheDefault(t *testing.T) {
	d := newTestDB(t, `create table t(id int primary key); insert into t values (1);
		create function slow(t) returns int language sql stable as $$ select 1 from pg_sleep(0.5) $$;
		grant select on t to anon, authenticated; grant execute on function slow(t) to anon, authenticated;`)
	if _, err := d.conn.Exec(context.Background(), `alter role anon set statement_timeout = '100ms'`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = d.conn.Exec(context.Background(), `alter role anon reset statement_timeout`) })
	d.engine = NewEngine(Options{StatementTimeout: 5 * time.Second})
	query := `{ tCollection { edges { node { id slow } } } }`
	if got := d.as("anon", nil, query, ""); !strings.Contains(got, "canceling statement due to statement timeout") {
		t.Errorf("anon (100ms of its own): %s", got)
	}
	if got := d.as("authenticated", nil, query, ""); got != `{"data": {"tCollection": {"edges": [{"node": {"id": 1, "slow": 1}}]}}}` {
		t.Errorf("authenticated (the 5s default): %s", got)
	}
}

// Many goroutines hitting the same compiled request concurrently each get the right answer (run with -race).
func TestCompiledRequestsAreSharedSafely(t *testing.T) {
	d := newTestDB(t, blogFixture)
	ctx := context.Background()
	engine := NewEngine(Options{})
	const workers = 4
	var wg sync.WaitGroup
	errs := make(chan string, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			conn, err := pgx.Connect(ctx, d.conn.Config().ConnString())
			if err != nil {
				errs <- err.Error()
				return
			}
			defer conn.Close(ctx)
			for i := 0; i < 30; i++ {
				id := (i+w)%5 + 1
				vars := []byte(`{"id": ` + string(rune('0'+id)) + `}`)
				got := string(engine.ExecuteAs(ctx, conn, Session{Role: "service_role", Claims: map[string]any{"role": "service_role"}, SearchPath: []string{"public"}},
					Request{Query: `query($id: Int!) { accountByPk(id: $id) { id } }`, Variables: vars}))
				if want := `{"data": {"accountByPk": {"id": ` + string(rune('0'+id)) + `}}}`; got != want {
					errs <- got + " want " + want
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
