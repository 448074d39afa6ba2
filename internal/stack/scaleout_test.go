package stack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/client"
	"github.com/pgreflect/pgreflect/internal/config"
	"github.com/pgreflect/pgreflect/internal/devtools/pgbouncertest"
	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/internal/pgcluster"
	"github.com/pgreflect/pgreflect/internal/stack"
	"github.com/pgreflect/pgreflect/internal/stacktest"
	"github.com/pgreflect/pgreflect/pgtest"
	"github.com/pgreflect/pgreflect/testidp"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

const noteSchema = `comment on schema public is '@graphql({"inflect_names": true})';
create table note (id serial primary key, body text not null);
create function in_recovery() returns boolean stable language sql as 'select pg_is_in_recovery()';`

// post sends body to url with the API key (and bearer token, when given) and decodes the JSON answer.
func post(t *testing.T, method, url, key, token string, body any) (int, map[string]any) {
	t.Helper()
	status, out, raw, err := send(method, url, key, token, body)
	if err != nil {
		t.Fatal(err)
	}
	if out == nil {
		t.Fatalf("%s %s: %d %s", method, url, status, raw)
	}
	return status, out
}

// testClient bounds every request of the tests: a server that does not answer fails the test, never hangs it.
var testClient = &http.Client{Timeout: 30 * time.Second}

// send makes a request and decodes its JSON answer; out is nil when the answer is not a JSON object. It does
// not fail the test, so that goroutines may call it.
func send(method, url, key, token string, body any) (status int, out map[string]any, raw []byte, err error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("apikey", key)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := testClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	if raw, err = io.ReadAll(resp.Body); err != nil {
		return resp.StatusCode, nil, nil, err
	}
	if json.Unmarshal(raw, &out) != nil {
		out = nil
	}
	return resp.StatusCode, out, raw, nil
}

// graphql runs query on the stack as service_role and returns the answer's JSON text.
func graphql(t *testing.T, s *stacktest.Stack, query string) string {
	t.Helper()
	_, out := post(t, http.MethodPost, s.URL+"/graphql/v1", s.Service, "", map[string]any{"query": query})
	b, _ := json.Marshal(out)
	return string(b)
}

// concurrently runs n requests at once (inserts and queries in turn) and returns the answers that have errors
// or are not JSON.
func concurrently(t *testing.T, s *stacktest.Stack, n int) []string {
	t.Helper()
	var mu sync.Mutex
	var failed []string
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			q := `{ noteCollection(first: 1) { edges { node { id body } } } }`
			if i%2 == 0 {
				q = fmt.Sprintf(`mutation { insertIntoNoteCollection(objects: [{body: "n%d"}]) { affectedCount } }`, i)
			}
			// A wrong answer counts as a failure as much as an error does: behind a transaction pooler, named
			// statements may run another client's statement, whose result is not even JSON.
			_, out, raw, err := send(http.MethodPost, s.URL+"/graphql/v1", s.Service, "", map[string]any{"query": q})
			if err != nil || out == nil || out["errors"] != nil || out["data"] == nil {
				mu.Lock()
				failed = append(failed, fmt.Sprintf("%s %v", raw, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return failed
}

func TestBehindPgBouncerInTransactionMode(t *testing.T) {
	bouncer := pgbouncertest.Start(t, pgtest.ServerURL(t), pgbouncertest.Options{PoolSize: 2, Users: map[string]string{"authenticator": ""}})
	// pgbouncer=true is how Prisma is told, and what chooses the statement mode here.
	through := func(u string) string { return bouncer.URL(t, u, "authenticator") + "&pgbouncer=true" }
	s := stacktest.New(t, stacktest.Options{Schema: noteSchema, LoginURL: through})

	// Two server sessions for a pool of eight connections: every client connection's transactions land on
	// either, so anything that outlived a transaction (a prepared statement) would be missing or clash.
	if failed := concurrently(t, s, 60); len(failed) > 0 {
		t.Fatalf("%d of 60 requests failed behind PgBouncer, e.g. %s", len(failed), failed[0])
	}
	var rows int
	if err := s.Admin.QueryRow(context.Background(), "select count(*) from note").Scan(&rows); err != nil || rows != 30 {
		t.Fatalf("%d rows inserted (%v), want 30", rows, err)
	}

	// No LISTEN through the pooler: the schema version is polled, and a change shows within a second.
	if _, err := s.Admin.Exec(context.Background(), "alter table note add column title text"); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Second+stackPollSlack, func() string {
		if got := graphql(t, s, `{ noteCollection(first: 1) { edges { node { title } } } }`); strings.Contains(got, "errors") {
			return got
		}
		return ""
	})

	// The control: the pooler really hands one client's transactions to different server sessions, so the
	// requests above ran where a statement prepared in one transaction is gone in the next. Four clients
	// keep both server sessions busy; at least one of them must land on both.
	if !transactionsMoveBetweenBackends(t, bouncer.URL(t, s.DatabaseURL, "authenticator")) {
		t.Fatal("every client stayed on one server session: is PgBouncer really pooling transactions?")
	}
	// The prepared mode refuses to start behind it: TestPgBouncerWithoutHintIsDetected.
}

// transactionsMoveBetweenBackends runs short transactions from four connections at once and reports whether a
// connection saw more than one server backend.
func transactionsMoveBetweenBackends(t *testing.T, url string) bool {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	moved := false
	var wg sync.WaitGroup
	for range 4 {
		conn, err := pgx.Connect(ctx, url+"&default_query_exec_mode=exec")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close(ctx) })
		wg.Go(func() {
			seen := map[int]bool{}
			for range 50 {
				var pid int
				if err := conn.QueryRow(ctx, "select pg_backend_pid() from pg_sleep(0.001)").Scan(&pid); err != nil {
					return
				}
				seen[pid] = true
			}
			mu.Lock()
			moved = moved || len(seen) > 1
			mu.Unlock()
		})
	}
	wg.Wait()
	return moved
}

// stackPollSlack covers the poll interval's phase and a loaded machine.
const stackPollSlack = 500 * time.Millisecond

// startReplicatedPair starts a primary and a streaming replica of it (pg_basebackup -R) with database app.
func startReplicatedPair(t *testing.T) (primary, replica *pgcluster.Cluster) {
	t.Helper()
	ctx := context.Background()
	primary = pgtest.StartCluster(t)
	admin, err := pgx.Connect(ctx, primary.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "create database app"); err != nil {
		t.Fatal(err)
	}
	return primary, pgtest.StartReplica(t, primary)
}

// loginURL is the URL of database app on c as the login role.
func loginURL(c *pgcluster.Cluster) string {
	return strings.Replace(c.URL("app"), "postgres@", "authenticator@", 1)
}

// replicatedStack serves database app of a primary and its streaming replica (queries go to the replica), once
// the replica has replayed the setup and noteSchema; replicaAdmin is a superuser connection to the replica.
func replicatedStack(t *testing.T, o stacktest.Options) (s *stacktest.Stack, replica *pgcluster.Cluster, replicaAdmin *pgx.Conn) {
	t.Helper()
	primary, replica := startReplicatedPair(t)
	ctx := context.Background()
	replicaAdmin, err := pgx.Connect(ctx, replica.URL("app"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { replicaAdmin.Close(context.Background()) })
	// The setup and the schema must have reached the replica before the server logs in there.
	primaryAdmin := testenv.Setup(t, primary.URL("app"), noteSchema)
	var lsn string
	if err := primaryAdmin.QueryRow(ctx, "select pg_current_wal_insert_lsn()::text").Scan(&lsn); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, func() string {
		var replayed bool
		if err := replicaAdmin.QueryRow(ctx, "select pg_last_wal_replay_lsn() >= $1::pg_lsn", lsn).Scan(&replayed); err != nil || !replayed {
			return fmt.Sprintf("replica has not replayed the setup (%v)", err)
		}
		return ""
	})
	o.DatabaseURL, o.ReadURLs = primary.URL("app"), []string{loginURL(replica)}
	return stacktest.New(t, o), replica, replicaAdmin
}

func TestReadReplica(t *testing.T) {
	ctx := context.Background()
	s, _, replicaAdmin := replicatedStack(t, stacktest.Options{})

	// Queries run on the replica, mutations on the primary (a replica refuses writes).
	testenv.Eventually(t, 5*time.Second, func() string {
		if got := graphql(t, s, `{ inRecovery }`); got != `{"data":{"inRecovery":true}}` {
			return "query not answered by the replica: " + got
		}
		return ""
	})
	if got := graphql(t, s, `mutation { insertIntoNoteCollection(objects: [{body: "hello"}]) { records { body } } }`); got != `{"data":{"insertIntoNoteCollection":{"records":[{"body":"hello"}]}}}` {
		t.Fatalf("mutation: %s", got)
	}
	// Read after write: the replica shows the row once it has replayed it.
	testenv.Eventually(t, 5*time.Second, func() string {
		if got := graphql(t, s, `{ noteCollection { edges { node { body } } } }`); !strings.Contains(got, `"hello"`) {
			return got
		}
		return ""
	})

	// A schema change while the replica does not replay: its queries keep the old schema, which still works
	// there; once it replays, its schema is reloaded. Had the announcement (from the primary: a standby gets
	// no NOTIFY) reloaded it at once, the old catalog would have been read again and kept.
	if _, err := replicaAdmin.Exec(ctx, "select pg_wal_replay_pause()"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Admin.Exec(ctx, "alter table note add column title text"); err != nil {
		t.Fatal(err)
	}
	const withTitle = `{ noteCollection { edges { node { body title } } } }`
	time.Sleep(300 * time.Millisecond)
	if got := graphql(t, s, withTitle); !strings.Contains(got, "Unknown field") {
		t.Fatalf("the paused replica answered with the new schema: %s", got)
	}
	if _, err := replicaAdmin.Exec(ctx, "select pg_wal_replay_resume()"); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 2*time.Second, func() string {
		if got := graphql(t, s, withTitle); got != `{"data":{"noteCollection":{"edges":[{"node":{"body":"hello","title":null}}]}}}` {
			return got
		}
		return ""
	})
	if got := graphql(t, s, `{ inRecovery }`); got != `{"data":{"inRecovery":true}}` {
		t.Fatalf("query not answered by the replica: %s", got)
	}
}

func TestTwoInstancesOnOneDatabase(t *testing.T) {
	ctx := context.Background()
	a := stacktest.New(t, stacktest.Options{SignIn: true, Schema: noteSchema + `
		create function whoami() returns text stable language sql as $$ select auth.uid()::text $$;`})
	b := stacktest.New(t, stacktest.Options{SignIn: true, DatabaseURL: a.DatabaseURL, Configure: func(c *config.Auth) {
		google := c.External["google"]
		google.URL = a.IDP.URL()
		c.External["google"] = google
	}})
	idToken := func() client.IDToken {
		claims := a.IDP.Claims(testidp.User{Sub: "sub-1", Email: "ada@example.com", EmailVerified: true})
		return client.IDToken{Provider: "google", Token: a.IDP.MintIDToken(claims, testidp.MintOptions{})}
	}

	// A session made on one instance works on the other: its access token, and its refresh token.
	session, err := client.New(a.URL, a.Anon).Auth.SignInWithIDToken(ctx, idToken())
	if err != nil {
		t.Fatal(err)
	}
	_, out := post(t, http.MethodPost, b.URL+"/graphql/v1", b.Anon, session.AccessToken, map[string]any{"query": "{ whoami }"})
	if data, _ := out["data"].(map[string]any); data["whoami"] != session.User.ID {
		t.Fatalf("on the other instance the user is %v, want %s", out, session.User.ID)
	}
	status, refreshed := post(t, http.MethodPost, b.URL+"/auth/v1/token?grant_type=refresh_token", b.Anon, "",
		map[string]any{"refresh_token": session.RefreshToken})
	if status != http.StatusOK || refreshed["access_token"] == nil || refreshed["refresh_token"] == session.RefreshToken {
		t.Fatalf("refresh on the other instance: %d %v", status, refreshed)
	}
	status, again := post(t, http.MethodPost, a.URL+"/auth/v1/token?grant_type=refresh_token", a.Anon, "",
		map[string]any{"refresh_token": refreshed["refresh_token"]})
	if status != http.StatusOK || again["access_token"] == nil {
		t.Fatalf("refresh back on the first instance: %d %v", status, again)
	}

	// A management API change through one instance is in effect on the other within a second.
	status, patched := post(t, http.MethodPatch, a.URL+"/v1/projects/"+stacktest.ProjectRef+"/config/auth", "",
		stacktest.ManagementToken, map[string]any{"jwt_exp": 1234})
	if status != http.StatusOK {
		t.Fatalf("PATCH: %d %v", status, patched)
	}
	testenv.Eventually(t, time.Second, func() string {
		s, err := client.New(b.URL, b.Anon).Auth.SignInWithIDToken(ctx, idToken())
		if err != nil {
			return err.Error()
		}
		if s.ExpiresIn != 1234 {
			return fmt.Sprintf("the other instance issues tokens for %d s", s.ExpiresIn)
		}
		return ""
	})

	// So is the pinned pg_graphql version: 1.5 has no <x>ByPk fields.
	status, patched = post(t, http.MethodPatch, a.URL+"/v1/projects/"+stacktest.ProjectRef+"/config/graphql", "",
		stacktest.ManagementToken, map[string]any{"version": "1.5"})
	if status != http.StatusOK || patched["installed_version"] != "1.5" {
		t.Fatalf("PATCH config/graphql: %d %v", status, patched)
	}
	testenv.Eventually(t, time.Second, func() string {
		if got := graphql(t, b, `{ noteByPk(id: 1) { body } }`); !strings.Contains(got, `Unknown field \"noteByPk\" on type Query`) {
			return "the other instance still answers as 1.6: " + got
		}
		return ""
	})

	// So is a schema change.
	if _, err := a.Admin.Exec(ctx, "alter table note add column title text"); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Second, func() string {
		if got := graphql(t, b, `{ noteCollection { edges { node { title } } } }`); got != `{"data":{"noteCollection":{"edges":[]}}}` {
			return got
		}
		return ""
	})
}

// A replica that stops answering (its processes frozen) costs a query its statement timeout plus the engine's
// grace, then the outage's one 503; mutations, which go to the primary, are answered meanwhile; /ready says 503
// and names the replica; and queries are answered again once the replica answers.
func TestFrozenReplicaIs503AndNotReady(t *testing.T) {
	s, replica, _ := replicatedStack(t, stacktest.Options{StatementTimeout: time.Second, PoolTimeout: 2 * time.Second})
	testenv.Eventually(t, 5*time.Second, func() string {
		if got := graphql(t, s, `{ inRecovery }`); got != `{"data":{"inRecovery":true}}` {
			return "query not answered by the replica: " + got
		}
		return ""
	})
	thaw := pgtest.Freeze(t, replica)
	// Statement timeout 1s + grace 2s, or pool timeout 2s for a new connection; 2s of slack for a loaded machine.
	const within = 5 * time.Second
	for i := range 2 {
		expectOutage(t, s, "{ inRecovery }", within, fmt.Sprintf("query %d while the replica is frozen", i))
	}
	if got := graphql(t, s, `mutation { insertIntoNoteCollection(objects: [{body: "hello"}]) { affectedCount } }`); got != `{"data":{"insertIntoNoteCollection":{"affectedCount":1}}}` {
		t.Errorf("mutation while the replica is frozen: %s", got)
	}
	start := time.Now()
	status, _, raw, err := send(http.MethodGet, s.URL+"/ready", "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"status":"unavailable","checks":{"primary":"ok","replica_1":"unavailable","roles":"ok"}}`; status != 503 || string(raw) != want {
		t.Errorf("/ready while the replica is frozen: %d %s, want 503 %s", status, raw, want)
	}
	if elapsed := time.Since(start); elapsed > within {
		t.Errorf("/ready answered after %s", elapsed)
	}
	thaw()
	testenv.Eventually(t, 15*time.Second, func() string {
		if got := graphql(t, s, `{ inRecovery }`); got != `{"data":{"inRecovery":true}}` {
			return "after the thaw: " + got
		}
		if status, _, raw, err := send(http.MethodGet, s.URL+"/ready", "", "", nil); err != nil || status != 200 {
			return fmt.Sprintf("/ready after the thaw: %d %s %v", status, raw, err)
		}
		return ""
	})
}

// Behind PgBouncer, with Postgres stopped, PgBouncer accepts the request's query and waits for a server it
// cannot reach (server_login_retry): the request's deadline still answers the outage's 503 in time, and once
// Postgres is back requests are answered again.
func TestBehindPgBouncerPostgresDownIsA503InTime(t *testing.T) {
	cluster := pgtest.StartCluster(t)
	bouncer := pgbouncertest.Start(t, cluster.URL("postgres"), pgbouncertest.Options{PoolSize: 2, Users: map[string]string{"authenticator": ""}})
	through := func(u string) string { return bouncer.URL(t, u, "authenticator") + "&pgbouncer=true" }
	s := stacktest.New(t, stacktest.Options{DatabaseURL: cluster.URL("postgres"), Schema: noteSchema, LoginURL: through,
		StatementTimeout: time.Second, PoolTimeout: 2 * time.Second})
	const query = `{ noteCollection { edges { node { body } } } }`
	if got := graphql(t, s, query); got != `{"data":{"noteCollection":{"edges":[]}}}` {
		t.Fatalf("before the stop: %s", got)
	}
	if err := cluster.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Statement timeout 1s + grace 2s, or pool timeout 2s; 2s of slack for a loaded machine.
	const within = 5 * time.Second
	for i := range 3 {
		expectOutage(t, s, query, within, fmt.Sprintf("request %d with Postgres stopped", i))
	}
	if err := cluster.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 15*time.Second, func() string {
		if got := graphql(t, s, query); got != `{"data":{"noteCollection":{"edges":[]}}}` {
			return "after the restart: " + got
		}
		return ""
	})
}

// A URL that goes through PgBouncer in transaction mode without saying so (no pgbouncer=true, not port 6543): the
// server finds out at start. In auto mode two instances then send unnamed statements and poll the schema version:
// both start (pgx's own named statements made the second fail with 42P05), answer concurrent requests and see a
// schema change. In prepared mode the server refuses to start, saying why.
func TestPgBouncerWithoutHintIsDetected(t *testing.T) {
	bouncer := pgbouncertest.Start(t, pgtest.ServerURL(t), pgbouncertest.Options{PoolSize: 2, Users: map[string]string{"authenticator": ""}})
	through := func(u string) string { return bouncer.URL(t, u, "authenticator") }
	a := stacktest.New(t, stacktest.Options{Schema: noteSchema, LoginURL: through})
	b := stacktest.New(t, stacktest.Options{DatabaseURL: a.DatabaseURL, LoginURL: through})
	for _, s := range []*stacktest.Stack{a, b} {
		if failed := concurrently(t, s, 40); len(failed) > 0 {
			t.Fatalf("%d of 40 requests failed, e.g. %s", len(failed), failed[0])
		}
	}
	if _, err := a.Admin.Exec(context.Background(), "alter table note add column title text"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*stacktest.Stack{a, b} {
		testenv.Eventually(t, time.Second+stackPollSlack, func() string {
			if got := graphql(t, s, `{ noteCollection(first: 1) { edges { node { title } } } }`); strings.Contains(got, "errors") {
				return got
			}
			return ""
		})
	}
	_, err := stack.New(context.Background(), stack.Options{RequestURL: through(a.DatabaseURL), JWTSecret: stacktest.JWTSecret,
		Config: config.Default(), StatementMode: stack.StatementModePrepared})
	if err == nil || !strings.Contains(err.Error(), "goes through a pooler in transaction mode") || !strings.Contains(err.Error(), "--statement-mode prepared cannot work") {
		t.Errorf("prepared mode behind PgBouncer: %v", err)
	}
}

// expectOutage sends query and wants the outage's one 503 within the given time; what names the request.
func expectOutage(t *testing.T, s *stacktest.Stack, query string, within time.Duration, what string) {
	t.Helper()
	start := time.Now()
	status, out, raw, err := send(http.MethodPost, s.URL+"/graphql/v1", s.Service, "", map[string]any{"query": query})
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if elapsed := time.Since(start); elapsed > within {
		t.Errorf("%s: answered after %s, want within %s", what, elapsed, within)
	}
	if msg, _ := out["errors"].([]any); status != 503 || len(msg) != 1 || !strings.HasPrefix(fmt.Sprint(msg[0]), "map[message:Database unavailable (request id ") {
		t.Errorf("%s: %d %s", what, status, raw)
	}
}
