package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/internal/console"
	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/internal/schemaview"
	"github.com/pgreflect/pgreflect/pgtest"
	"github.com/pgreflect/pgreflect/resolve"
)

// A backend killed in the middle of a request (a Postgres restart, a crash) is answered with the outage's one
// 503 shape and the request id; the reason (an address, "connection reset by peer") stays in the log.
func TestConnectionLostMidRequestIsOne503(t *testing.T) {
	f := newFixture(t, `create table t(id int primary key); insert into t values (1);
		create function slow(t) returns int language sql stable as $$ select 1 from pg_sleep(10) $$;
		grant select on t to anon; grant execute on function slow(t) to anon;`)
	killed := make(chan error, 1)
	go func() {
		ctx := context.Background()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			tag, err := f.admin.Exec(ctx, `select pg_terminate_backend(pid) from pg_stat_activity
				where usename = 'authenticator' and query like '%slow%' and state = 'active'`)
			if err != nil {
				killed <- err
				return
			}
			if tag.RowsAffected() > 0 {
				killed <- nil
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		killed <- context.DeadlineExceeded
	}()
	status, body, id := postGraphQL(t, f.srv.URL, f.anon, `{"query": "{ tCollection { edges { node { slow } } } }"}`)
	if err := <-killed; err != nil {
		t.Fatalf("terminating the backend: %v", err)
	}
	if want := `{"data":null,"errors":[{"message":"Database unavailable (request id ` + id + `)"}]}`; status != 503 || body != want {
		t.Errorf("got %d %s\nwant 503 %s", status, body, want)
	}
	if id == "" || !strings.Contains(f.logs.String(), id) {
		t.Errorf("request id %q not in the log", id)
	}
	if regexp.MustCompile(`127\.0\.0\.1|terminat|EOF|reset`).MatchString(body) {
		t.Errorf("internals in the answer: %s", body)
	}
	// The pool recovers: the next request is answered.
	if status, got := f.graphql(map[string]string{"apikey": f.anon}, `{ tCollection { edges { node { id } } } }`); status != 200 ||
		got != `{"data": {"tCollection": {"edges": [{"node": {"id": 1}}]}}}` {
		t.Errorf("after the outage: %d %s", status, got)
	}
}

// A costly filter is cut by the statement timeout while simple requests on the other connections stay fast.
func TestCostlyRegexCutWhileOthersAreServed(t *testing.T) {
	f := newFixture(t, `create table doc(id int primary key, body text);
		insert into doc select i, repeat('ab', 5000) from generate_series(1, 400) i;
		grant select on doc to anon;
		alter role anon set statement_timeout = '500ms';`)
	t.Cleanup(func() { _, _ = f.admin.Exec(context.Background(), `alter role anon reset statement_timeout`) })
	// The role setting is read with the schema; a schema change makes the server reload it.
	if _, err := f.admin.Exec(context.Background(), `comment on table doc is 'docs'`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	costly := `{ docCollection(filter: {body: {iregex: "^` + strings.Repeat("(a|b)*", 300) + `x"}}) { edges { node { id } } } }`
	var wg sync.WaitGroup
	answers := make([]string, 3)
	for i := range answers {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, answers[i] = f.graphql(map[string]string{"apikey": f.anon}, costly)
		}(i)
	}
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	status, got := f.graphql(map[string]string{"apikey": f.anon}, `{ docCollection(first: 1) { edges { node { id } } } }`)
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("a simple request took %s while costly ones ran", elapsed)
	}
	if status != 200 || got != `{"data": {"docCollection": {"edges": [{"node": {"id": 1}}]}}}` {
		t.Errorf("simple request: %d %s", status, got)
	}
	wg.Wait()
	for _, a := range answers {
		if a != `{"data": null, "errors": [{"message": "canceling statement due to statement timeout"}]}` {
			t.Errorf("costly request: %s", a)
		}
	}
}

// A server that stops answering (its processes frozen, as a stuck host or a network partition leaves it) costs
// a request its statement timeout plus the engine's grace, then the outage's one 503, and the connection is
// dropped, whether the request runs a statement or loads its role's schema; requests after it are answered 503
// in time too (on a fresh connection, which cannot be made), and once the server answers again, so does the
// API.
func TestFrozenPrimaryIsOne503InTime(t *testing.T) {
	cluster := pgtest.StartCluster(t)
	f := newFixtureEngine(t, cluster.URL("postgres"), `create table t(id int primary key); insert into t values (1);
		grant select on t to anon;`, 0, Options{PoolTimeout: 2 * time.Second},
		resolve.Options{StatementTimeout: time.Second})
	const query = `{"query": "{ tCollection { edges { node { id } } } }"}`
	if status, body, _ := postGraphQL(t, f.srv.URL, f.anon, query); status != 200 {
		t.Fatalf("before the freeze: %d %s", status, body)
	}
	socket := f.dialWS()
	socket.init(fmt.Sprintf(`{"apikey":%q}`, f.anon))
	socket.expect("connection_ack")
	thaw := pgtest.Freeze(t, cluster)
	// Statement timeout 1s + grace 2s, or pool timeout 2s for a new connection; 2s of slack for a loaded machine.
	const within = 5 * time.Second
	// The service role's schema is not loaded yet: its request waits for the load no longer than a statement.
	for i, key := range []string{f.service, f.anon} {
		start := time.Now()
		status, body, id := postGraphQL(t, f.srv.URL, key, query)
		if elapsed := time.Since(start); elapsed > within {
			t.Errorf("request %d while frozen answered after %s, want within %s", i, elapsed, within)
		}
		if want := `{"data":null,"errors":[{"message":"Database unavailable (request id ` + id + `)"}]}`; status != 503 || body != want {
			t.Errorf("request %d while frozen: %d %s, want 503 %s", i, status, body, want)
		}
	}
	// A persisted query's hash that this instance has not seen is looked up in the database within the pool
	// timeout and the lookup's own 2 s; 2 s of slack again.
	const lookupWithin = 6 * time.Second
	start := time.Now()
	status, body, id := postGraphQL(t, f.srv.URL, f.anon, `{"extensions": {"persistedQuery": {"version": 1, "sha256Hash": "`+strings.Repeat("ab", 32)+`"}}}`)
	if elapsed := time.Since(start); elapsed > lookupWithin {
		t.Errorf("a persisted query's lookup while frozen answered after %s, want within %s", elapsed, lookupWithin)
	}
	if want := `{"data":null,"errors":[{"message":"Database unavailable (request id ` + id + `)"}]}`; status != 503 || body != want {
		t.Errorf("a persisted query's lookup while frozen: %d %s, want 503 %s", status, body, want)
	}
	// A query asking for an event stream gets the same answer, not a stream that says nothing; one on a
	// WebSocket closes it with 1013, on which graphql-ws clients reconnect.
	start = time.Now()
	status, event := f.eventStream(map[string]string{"apikey": f.anon}, query)
	if elapsed := time.Since(start); elapsed > within {
		t.Errorf("an event stream's query while frozen answered after %s, want within %s", elapsed, within)
	}
	if want := `{"data":null,"errors":[{"message":"Database unavailable (request id `; status != 503 || !strings.HasPrefix(event, want) {
		t.Errorf("an event stream's query while frozen: %d %s, want 503 %s...", status, event, want)
	}
	start = time.Now()
	socket.send(`{"id":"q","type":"subscribe","payload":` + query + `}`)
	socket.expectClose(closeTryAgainLater, wsReasonUnavailable)
	if elapsed := time.Since(start); elapsed > within {
		t.Errorf("a WebSocket's query while frozen ended after %s, want within %s", elapsed, within)
	}
	thaw()
	testenv.Eventually(t, 15*time.Second, func() string {
		if status, body, _ := postGraphQL(t, f.srv.URL, f.anon, query); status != 200 {
			return fmt.Sprintf("after the thaw: %d %s", status, body)
		}
		return ""
	})
}

// The console's Schema pages read the database under the request's budget too: while the primary is frozen a
// page is answered 503 in time instead of waiting for as long as the freeze lasts.
func TestFrozenPrimaryConsoleSchemaPageInTime(t *testing.T) {
	cluster := pgtest.StartCluster(t)
	url := cluster.URL("postgres")
	pool, err := pgxpool.New(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	view := schemaview.New(schemaview.Options{Pool: pool, SearchPath: []string{"public"}})
	const budget = 2 * time.Second
	f := newFixtureEngine(t, url, `create table t(id int primary key); grant select on t to anon;`, 0,
		Options{RequestTimeout: budget, Console: console.Handler(console.Options{AnonKey: "anon", Schema: view})},
		resolve.Options{})
	page := func() (int, string) {
		resp, body := f.send(http.MethodGet, "/console/api/schema/graphql?role=anon", nil, nil, nil)
		return resp.StatusCode, body
	}
	if status, body := page(); status != 200 || !strings.Contains(body, "tCollection") {
		t.Fatalf("before the freeze: %d %s", status, body)
	}
	thaw := pgtest.Freeze(t, cluster)
	defer thaw()
	start := time.Now()
	status, body := page()
	if elapsed := time.Since(start); elapsed > budget+2*time.Second {
		t.Errorf("the page while frozen answered after %s, with a budget of %s", elapsed, budget)
	}
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "reading the schema failed") {
		t.Errorf("the page while frozen: %d %s", status, body)
	}
}

// RequestTimeout bounds a request's database work whatever its role's statement timeout, none here: a
// statement that runs past it is cut, and the request answered with the one 503 in time, not after the
// statement's ten seconds; a cheap request after it is answered as usual.
func TestRequestTimeoutCutsAStatementWithoutTimeout(t *testing.T) {
	f := newFixtureEngine(t, pgtest.NewDB(t), slowSchema+`create function slower() returns int language sql stable as $$ select 1 from pg_sleep(10) $$;
		grant execute on function slower() to anon;`, 2, Options{RequestTimeout: time.Second},
		resolve.Options{StatementTimeout: -1})
	if status, body, _ := postGraphQL(t, f.srv.URL, f.anon, cheapQuery); status != 200 || body != cheapData {
		t.Fatalf("a cheap request: %d %s", status, body)
	}
	start := time.Now()
	status, body, id := postGraphQL(t, f.srv.URL, f.anon, `{"query": "{ slower }"}`)
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("answered after %s with a request timeout of 1s", elapsed)
	}
	if want := `{"data":null,"errors":[{"message":"Database unavailable (request id ` + id + `)"}]}`; status != 503 || body != want {
		t.Errorf("a statement past the request timeout: %d %s, want 503 %s", status, body, want)
	}
	if status, body, _ := postGraphQL(t, f.srv.URL, f.anon, cheapQuery); status != 200 || body != cheapData {
		t.Errorf("a cheap request after it: %d %s", status, body)
	}
}

// Crashes under load: 25 clients query while the server is killed (pg_ctl stop -m immediate) and started again,
// six times, with schema changes making requests load their schema concurrently. Every answer is the
// query's data or the outage's one 503: never a 200 carrying an error, whatever state the crash left pgx in.
func TestCrashUnderLoadIsOnlyDataOr503(t *testing.T) {
	cluster := pgtest.StartCluster(t)
	f := newFixtureEngine(t, cluster.URL("postgres"), `create table t(id int primary key); insert into t values (1);
		grant select on t to anon;`, 0, Options{PoolTimeout: 2 * time.Second},
		resolve.Options{StatementTimeout: 2 * time.Second})
	const query = `{"query": "{ tCollection { edges { node { id } } } }"}`
	const data = `{"data": {"tCollection": {"edges": [{"node": {"id": 1}}]}}}`
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	var wrong []string
	answered := map[int]int{}
	for range 25 {
		wg.Go(func() {
			for ctx.Err() == nil {
				status, body, id := postGraphQL(t, f.srv.URL, f.anon, query)
				ok := status == 200 && body == data ||
					status == 503 && body == `{"data":null,"errors":[{"message":"Database unavailable (request id `+id+`)"}]}`
				mu.Lock()
				answered[status]++
				if !ok {
					wrong = append(wrong, fmt.Sprintf("%d %s", status, body))
				}
				mu.Unlock()
			}
		})
	}
	// Schema changes retire the cached schemas, so that requests load them again, some during the crash.
	wg.Go(func() {
		for ctx.Err() == nil {
			if conn, err := pgx.Connect(ctx, cluster.URL("postgres")); err == nil {
				_, _ = conn.Exec(ctx, `comment on table t is 'changed'`)
				conn.Close(context.Background())
			}
			time.Sleep(30 * time.Millisecond)
		}
	})
	for range 6 {
		time.Sleep(500 * time.Millisecond)
		if err := cluster.Crash(context.Background()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		if err := cluster.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Second)
	stop()
	wg.Wait()
	t.Logf("answers by status: %v", answered)
	if answered[200] == 0 || answered[503] == 0 {
		t.Errorf("want both data and outages; answers by status: %v", answered)
	}
	for i, w := range wrong {
		if i == 5 {
			t.Errorf("... and %d more", len(wrong)-5)
			break
		}
		t.Errorf("neither data nor the outage's 503: %s", w)
	}
}

// sharedLoadQuery is the request of the shared-schema-load tests.
const sharedLoadQuery = `{"query": "{ tCollection { edges { node { id } } } }"}`

// blockSchemaLoads readies f's server for a schema load that waits: two connections in the pool (a new one would
// wait for the lock too, at its start), the roles read, the schema retired (the watcher reloads it on the next
// request after the announcement), and pg_class locked, so that a load's catalog query waits for the lock. It
// returns a connection to another database (the lock holds this one's catalog lookups too) and the release of
// the lock.
func blockSchemaLoads(t *testing.T, f *fixture) (other *pgx.Conn, unlock func()) {
	t.Helper()
	var warm sync.WaitGroup
	for range 2 {
		warm.Go(func() { postGraphQL(t, f.srv.URL, f.anon, sharedLoadQuery) })
	}
	warm.Wait()
	ctx := context.Background()
	if _, err := f.admin.Exec(ctx, `comment on table t is 'changed'`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	tx, err := f.admin.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	if _, err := tx.Exec(ctx, `lock table pg_catalog.pg_class in access exclusive mode`); err != nil {
		t.Fatal(err)
	}
	other, err = pgx.Connect(ctx, pgtest.ServerURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close(context.Background()) })
	return other, func() {
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// waitForLoad waits until a request's schema load waits for the lock of blockSchemaLoads, then a little
// longer, for requests sent meanwhile to join it.
func waitForLoad(t *testing.T, other *pgx.Conn) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, func() string {
		var waiting bool
		if err := other.QueryRow(context.Background(), `select exists(select from pg_stat_activity
			where usename = 'authenticator' and wait_event_type = 'Lock')`).Scan(&waiting); err != nil {
			return err.Error()
		}
		if !waiting {
			return "no request waits for the lock"
		}
		return ""
	})
	time.Sleep(200 * time.Millisecond)
}

// answer is a /graphql/v1 answer with its request id.
type answer struct {
	status   int
	body, id string
}

// postAsync sends sharedLoadQuery with the anon key and returns where its answer will come.
func postAsync(t *testing.T, f *fixture) <-chan answer {
	out := make(chan answer, 1)
	go func() {
		status, body, id := postGraphQL(t, f.srv.URL, f.anon, sharedLoadQuery)
		out <- answer{status, body, id}
	}()
	return out
}

// Requests that miss the schema cache together share one load, on one of their connections. When that
// connection dies during the load, every request waiting on it gets the outage's 503, not a 200 carrying the
// load's error, though its own connection is fine.
func TestSharedSchemaLoadLostIsOne503(t *testing.T) {
	f := newFixture(t, `create table t(id int primary key); insert into t values (1); grant select on t to anon;`)
	other, unlock := blockSchemaLoads(t, f)
	answers := []<-chan answer{postAsync(t, f), postAsync(t, f)}
	waitForLoad(t, other)
	if _, err := other.Exec(context.Background(), `select pg_terminate_backend(pid) from pg_stat_activity
		where usename = 'authenticator' and wait_event_type = 'Lock'`); err != nil {
		t.Fatal(err)
	}
	unlock()
	for _, c := range answers {
		a := <-c
		if want := `{"data":null,"errors":[{"message":"Database unavailable (request id ` + a.id + `)"}]}`; a.status != 503 || a.body != want {
			t.Errorf("got %d %s\nwant 503 %s", a.status, a.body, want)
		}
	}
}

// A request that waited on a schema load that another request's client abandoned is answered: the load is run
// again for it (before, it got a 200 carrying "Internal server error", the abandoned load's failure).
func TestSharedSchemaLoadAbandonedIsLoadedAgain(t *testing.T) {
	f := newFixture(t, `create table t(id int primary key); insert into t values (1); grant select on t to anon;`)
	other, unlock := blockSchemaLoads(t, f)
	// The first request loads the schema, waiting for the lock, until its client gives up after a second.
	impatient := &http.Client{Timeout: time.Second}
	abandoned := make(chan struct{})
	go func() {
		defer close(abandoned)
		req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/graphql/v1", strings.NewReader(sharedLoadQuery))
		req.Header.Set("apikey", f.anon)
		if resp, err := impatient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	waitForLoad(t, other)
	second := postAsync(t, f)
	<-abandoned
	time.Sleep(200 * time.Millisecond) // for the load to fail
	unlock()
	if a := <-second; a.status != 200 || a.body != `{"data": {"tCollection": {"edges": [{"node": {"id": 1}}]}}}` {
		t.Errorf("the request that waited on the abandoned load: %d %s", a.status, a.body)
	}
}
