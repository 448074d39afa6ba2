package httpapi

import (
	"bytes"
	"cmp"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/internal/obs"
	"github.com/pgreflect/pgreflect/pgtest"
	"github.com/pgreflect/pgreflect/resolve"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// testClient bounds every request of the tests: a server that does not answer fails the test, never hangs it.
var testClient = &http.Client{Timeout: 30 * time.Second}

const secret = "test-secret-with-at-least-32-characters!!"

type fixture struct {
	t       testing.TB
	admin   *pgx.Conn
	pool    *pgxpool.Pool
	srv     *httptest.Server
	server  *Server
	logs    *testenv.SyncBuffer
	keys    *auth.Keys
	anon    string
	service string
	// live are the subscription limits of the servers start starts; changes, when set, their change feed's URL;
	// opts their other options, and engine their engine's (each server has an engine of its own, as each
	// instance of the stack has).
	live    LiveLimits
	changes string
	opts    Options
	engine  resolve.Options
	dbURL   string // superuser
}

func newFixture(t testing.TB, schema string) *fixture {
	return newFixtureWith(t, schema, nil)
}

// newFixtureWith is newFixture with metrics.
func newFixtureWith(t testing.TB, schema string, metrics *obs.Metrics) *fixture {
	t.Helper()
	return newFixtureOn(t, pgtest.NewDB(t), schema, 0, Options{Metrics: metrics})
}

// newFixtureOn serves the database of the superuser URL dbURL (a server of the test's own, say), after setup and
// schema, with a pool of poolSize connections (0: pgx's default) and the options o, whose pool, engine, keys,
// logger, body limit and subscription settings the fixture fills in.
func newFixtureOn(t testing.TB, dbURL, schema string, poolSize int, o Options) *fixture {
	t.Helper()
	return newFixtureEngine(t, dbURL, schema, poolSize, o, resolve.Options{})
}

// newFixtureEngine is newFixtureOn with the options of the servers' engines, whose pool and logger the fixture
// fills in.
func newFixtureEngine(t testing.TB, dbURL, schema string, poolSize int, o Options, engine resolve.Options) *fixture {
	t.Helper()
	admin := testenv.Setup(t, dbURL, schema)
	pool := testenv.LoginPoolOf(t, dbURL, poolSize)
	keys, _ := auth.NewKeys(secret)
	anon, _ := keys.SignAPIKey("anon", "abcdefghijklmnopqrst")
	service, _ := keys.SignAPIKey("service_role", "abcdefghijklmnopqrst")
	// Automatic persisted queries are on, as in a server the stack assembles.
	o.PersistedQueries = cmp.Or(o.PersistedQueries, 100)
	f := &fixture{t: t, admin: admin, pool: pool, keys: keys, anon: anon, service: service, logs: &testenv.SyncBuffer{},
		dbURL: dbURL, opts: o, engine: engine}
	f.server, f.srv = f.start(o.Metrics)
	return f
}

// start serves a new instance of the API on the fixture's database.
func (f *fixture) start(metrics *obs.Metrics) (*Server, *httptest.Server) {
	f.t.Helper()
	o := f.opts
	o.Pool, o.Keys, o.AnonKey, o.ServiceRoleKey, o.Metrics = f.pool, f.keys, f.anon, f.service, metrics
	o.MaxBodyBytes = cmp.Or(o.MaxBodyBytes, 4096)
	if o.Logger == nil { // a benchmark logs as production does
		o.Logger = slog.New(slog.NewJSONHandler(io.MultiWriter(f.logs, testWriter{f.t}), nil))
	}
	o.LiveLimits, o.ChangesURL = f.live, f.changes
	engine := f.engine
	engine.Pool, engine.Logger = f.pool, o.Logger
	o.Engine = resolve.NewEngine(engine)
	s, err := New(context.Background(), o)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(s.Close)
	srv := httptest.NewServer(s)
	f.t.Cleanup(srv.Close)
	return s, srv
}

// secondServer is another instance on the same database, as a fixture of its own, with the subscription
// limits given (zero: the defaults) and the change feed when changes is set.
func (f *fixture) secondServer(live LiveLimits, changes bool) *fixture {
	g := *f
	g.live = live
	if changes {
		g.changes = f.dbURL
	}
	g.server, g.srv = g.start(nil)
	return &g
}

// testWriter shows log output with the test's own output.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

func (f *fixture) userToken(claims jwt.MapClaims) string {
	f.t.Helper()
	tok, err := f.keys.Sign(claims)
	if err != nil {
		f.t.Fatal(err)
	}
	return tok
}

// post sends a request and returns status and body.
func (f *fixture) post(path string, headers map[string]string, body string) (int, string) {
	f.t.Helper()
	resp, b := f.send(http.MethodPost, path, map[string]string{"Content-Type": "application/json"}, headers, strings.NewReader(body))
	return resp.StatusCode, b
}

// send sends a request with the headers of each map in turn and returns the response and its body.
func (f *fixture) send(method, path string, defaults, headers map[string]string, body io.Reader) (*http.Response, string) {
	f.t.Helper()
	req, _ := http.NewRequest(method, f.srv.URL+path, body)
	for _, h := range []map[string]string{defaults, headers} {
		for k, v := range h {
			req.Header.Set(k, v)
		}
	}
	resp, err := testClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func (f *fixture) graphql(headers map[string]string, query string) (int, string) {
	f.t.Helper()
	var body bytes.Buffer
	body.WriteString(`{"query": `)
	q, _ := jsonQuote(query)
	body.WriteString(q)
	body.WriteString(`}`)
	return f.post("/graphql/v1", headers, body.String())
}

func jsonQuote(s string) (string, error) {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String(), nil
}

const todoSchema = `
comment on schema public is '@graphql({"inflect_names": true})';
create table todo(id serial primary key, user_id uuid not null, task text not null);
alter table todo enable row level security;
create policy own on todo for all to authenticated using (auth.uid() = user_id) with check (auth.uid() = user_id);
insert into todo(user_id, task) values
  ('11111111-1111-1111-1111-111111111111', 'alice'), ('22222222-2222-2222-2222-222222222222', 'bob');
`

func TestRequestErrors(t *testing.T) {
	f := newFixture(t, todoSchema)
	expired := f.userToken(jwt.MapClaims{"role": "authenticated", "exp": time.Now().Add(-time.Minute).Unix()})
	other, _ := auth.NewKeys(strings.Repeat("z", 40))
	forged, _ := other.Sign(jwt.MapClaims{"role": "service_role", "exp": time.Now().Add(time.Hour).Unix()})
	superuser := f.userToken(jwt.MapClaims{"role": "postgres", "exp": time.Now().Add(time.Hour).Unix()})
	unknownRole := f.userToken(jwt.MapClaims{"role": "nobody_here", "exp": time.Now().Add(time.Hour).Unix()})
	q := `{"query": "{ __typename }"}`
	cases := []struct {
		name    string
		path    string
		headers map[string]string
		body    string
		status  int
		want    string
	}{
		{"no key", "/graphql/v1", nil, q, 401, `{"message":"No API key found in request"}`},
		{"wrong key", "/graphql/v1", map[string]string{"apikey": "nope"}, q, 401, `{"message":"Invalid API key"}`},
		{"expired jwt", "/graphql/v1", map[string]string{"apikey": f.anon, "Authorization": "Bearer " + expired}, q, 401, "token is expired"},
		{"forged jwt", "/graphql/v1", map[string]string{"apikey": f.anon, "Authorization": "Bearer " + forged}, q, 401, "signature is invalid"},
		{"not bearer", "/graphql/v1", map[string]string{"apikey": f.anon, "Authorization": "Basic abc"}, q, 401, "Bearer"},
		{"superuser role", "/graphql/v1", map[string]string{"apikey": f.anon, "Authorization": "Bearer " + superuser}, q, 401, `JWT role \"postgres\" may not be assumed`},
		{"unknown role", "/graphql/v1", map[string]string{"apikey": f.anon, "Authorization": "Bearer " + unknownRole}, q, 401, "may not be assumed"},
		{"trailing slash", "/graphql/v1/", map[string]string{"apikey": f.anon}, q, 404, ""},
		{"not json", "/graphql/v1", map[string]string{"apikey": f.anon}, "query {", 400, `{"errors":[{"message":"request body must be a JSON object with a query"}]}`},
		{"no query", "/graphql/v1", map[string]string{"apikey": f.anon}, `{"variables": {}}`, 400, `{"errors":[{"message":"query is required"}]}`},
		{"too large", "/graphql/v1", map[string]string{"apikey": f.anon}, `{"query": "` + strings.Repeat(" ", 5000) + `{ __typename }"}`, 413, "request body exceeds 4096 bytes"},
		{"key header any case", "/graphql/v1", map[string]string{"APIKEY": f.anon}, q, 200, `{"data": {"__typename": "Query"}}`},
		{"malformed graphql", "/graphql/v1", map[string]string{"apikey": f.anon}, `{"query": "{ todoCollection { "}`, 200, `{"errors": [{"message": "query parse error: Parse error at 1:`},
		{"unknown field", "/graphql/v1", map[string]string{"apikey": f.anon}, `{"query": "{ nope }"}`, 200, `{"data": null, "errors": [{"message": "Unknown field \"nope\" on type Query"}]}`},
		{"variables not object", "/graphql/v1", map[string]string{"apikey": f.anon}, `{"query": "{ __typename }", "variables": [1]}`, 200, `{"errors": [{"message": "variables must be an object"}]}`},
	}
	for _, c := range cases {
		status, body := f.post(c.path, c.headers, c.body)
		if status != c.status || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s (want %d containing %s)", c.name, status, body, c.status, c.want)
		}
	}
	// The bare Supabase combination: apikey plus Authorization with the same anon key.
	status, body := f.graphql(map[string]string{"apikey": f.anon, "Authorization": "Bearer " + f.anon}, `{ __typename }`)
	if status != 200 || body != `{"data": {"__typename": "Query"}}` {
		t.Errorf("anon key as bearer: %d %s", status, body)
	}
}

func TestCORSPreflight(t *testing.T) {
	f := newFixture(t, "")
	req, _ := http.NewRequest(http.MethodOptions, f.srv.URL+"/graphql/v1", nil)
	req.Header.Set("Origin", "http://localhost:3000")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "apikey, authorization, content-type, x-client-info")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	allowed := resp.Header.Get("Access-Control-Allow-Headers")
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	for _, h := range []string{"apikey", "authorization", "content-type", "x-client-info"} {
		if !strings.Contains(allowed, h) {
			t.Errorf("preflight does not allow %s: %s", h, allowed)
		}
	}
	if resp.Header.Get("Access-Control-Max-Age") != "86400" || !strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") {
		t.Errorf("preflight: %v", resp.Header)
	}
	// A browser app can read the request id of an error, to quote it in a report.
	if exposed := resp.Header.Get("Access-Control-Expose-Headers"); !strings.Contains(exposed, "X-Request-Id") {
		t.Errorf("X-Request-Id not exposed: %s", exposed)
	}

	// The answers that follow a preflight carry what the browser reads of them (the origin allowed, the
	// headers exposed), and not what only a preflight means, as the gateway and Supabase Auth answer: the
	// API's answers to a GraphQL request and to an auth route alike.
	for _, path := range []string{"/graphql/v1", "/auth/v1/settings"} {
		method := http.MethodPost
		if path != "/graphql/v1" {
			method = http.MethodGet
		}
		resp := corsAnswer(t, f, method, path, "http://localhost:3000")
		h := resp.Header
		if h.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(h.Get("Access-Control-Expose-Headers"), "X-Request-Id") {
			t.Errorf("%s: %d, CORS headers of an answer missing: %v", path, resp.StatusCode, h)
		}
		for _, preflightOnly := range []string{"Access-Control-Allow-Headers", "Access-Control-Allow-Methods", "Access-Control-Max-Age"} {
			if v := h.Get(preflightOnly); v != "" {
				t.Errorf("%s: %d, an answer that is not a preflight's has %s: %s", path, resp.StatusCode, preflightOnly, v)
			}
		}
	}

	// A request without an Origin is no browser's cross-origin request: its answer allows any origin, as the
	// gateway's always do, and exposes nothing, which only a browser reads. A GET's answer, which a cache may
	// keep, varies with the Origin for that.
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		path := "/graphql/v1"
		if method == http.MethodGet {
			path += "?query=%7B__typename%7D"
		}
		resp := corsAnswer(t, f, method, path, "")
		h := resp.Header
		if resp.StatusCode != http.StatusOK || h.Get("Access-Control-Allow-Origin") != "*" || h.Get("Access-Control-Expose-Headers") != "" {
			t.Errorf("%s without an Origin: %d, headers %v; want Access-Control-Allow-Origin * and no exposed headers", method, resp.StatusCode, h)
		}
		if vary := h.Get("Vary"); method == http.MethodGet && !strings.Contains(vary, "Origin") {
			t.Errorf("GET: Vary %q does not name Origin", vary)
		}
	}
}

// corsAnswer sends an anonymous request to path (a POST with a GraphQL body, or a GET), with origin as its Origin
// when not empty, and returns the answer, its body read.
func corsAnswer(t *testing.T, f *fixture, method, path, origin string) *http.Response {
	t.Helper()
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader(`{"query":"{ __typename }"}`)
	}
	req, err := http.NewRequest(method, f.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	req.Header.Set("apikey", f.anon)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestRowLevelSecurityThroughHTTP(t *testing.T) {
	f := newFixture(t, todoSchema)
	alice := f.userToken(jwt.MapClaims{"role": "authenticated", "sub": "11111111-1111-1111-1111-111111111111",
		"exp": time.Now().Add(time.Hour).Unix()})
	q := `{ todoCollection { edges { node { task } } } }`
	if _, body := f.graphql(map[string]string{"apikey": f.anon, "Authorization": "Bearer " + alice}, q); body != `{"data": {"todoCollection": {"edges": [{"node": {"task": "alice"}}]}}}` {
		t.Errorf("alice: %s", body)
	}
	if _, body := f.graphql(map[string]string{"apikey": f.anon}, q); body != `{"data": {"todoCollection": {"edges": []}}}` {
		t.Errorf("anon: %s", body)
	}
	if _, body := f.graphql(map[string]string{"apikey": f.service}, q); body != `{"data": {"todoCollection": {"edges": [{"node": {"task": "alice"}}, {"node": {"task": "bob"}}]}}}` {
		t.Errorf("service_role: %s", body)
	}
}

// eventually polls until the response matches, for changes that arrive through LISTEN/NOTIFY.
func (f *fixture) eventually(query, want string) {
	f.t.Helper()
	deadline := time.Now().Add(time.Second)
	var body string
	for time.Now().Before(deadline) {
		_, body = f.graphql(map[string]string{"apikey": f.anon}, query)
		if body == want {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.t.Errorf("within a second %s\n got: %s\nwant: %s", query, body, want)
}

func TestSchemaChangesShowWithoutRestart(t *testing.T) {
	f := newFixture(t, `create table item(id int primary key, name text, secret text); insert into item values (1, 'one', 's');`)
	f.eventually(`{ itemCollection { edges { node { name secret } } } }`,
		`{"data": {"itemCollection": {"edges": [{"node": {"name": "one", "secret": "s"}}]}}}`)
	exec := func(sql string) {
		if _, err := f.admin.Exec(context.Background(), sql); err != nil {
			t.Fatal(err)
		}
	}
	exec(`revoke select on item from anon; grant select (id, name) on item to anon`)
	f.eventually(`{ itemCollection { edges { node { secret } } } }`,
		`{"data": null, "errors": [{"message": "Unknown field 'secret' on type 'item'"}]}`)
	exec(`grant select on item to anon`)
	f.eventually(`{ itemCollection { edges { node { secret } } } }`,
		`{"data": {"itemCollection": {"edges": [{"node": {"secret": "s"}}]}}}`)
	exec(`create table gadget(id int primary key); insert into gadget values (7)`)
	f.eventually(`{ gadgetCollection { edges { node { id } } } }`,
		`{"data": {"gadgetCollection": {"edges": [{"node": {"id": 7}}]}}}`)
	exec(`comment on table gadget is '@graphql({"name": "Widget"})'`)
	f.eventually(`{ widgetCollection { edges { node { __typename } } } }`,
		`{"data": {"widgetCollection": {"edges": [{"node": {"__typename": "Widget"}}]}}}`)
}

// postGraphQL sends body to baseURL's /graphql/v1 with the API key and returns the status, the answer and the
// request id the server gave it.
func postGraphQL(t testing.TB, baseURL, apikey, body string) (status int, answer, requestID string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, baseURL+"/graphql/v1", strings.NewReader(body))
	req.Header.Set("apikey", apikey)
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get(obs.RequestIDHeader)
}

// New refuses a server without an engine, or with the engine of another database than Pool's: the login role,
// the persisted queries and the trusted documents are read through Pool, the requests answered on the
// engine's sources, and the two must agree.
func TestNewNeedsTheEngineOfPool(t *testing.T) {
	pool := func() *pgxpool.Pool { // never connects: New refuses before it reads anything
		p, err := pgxpool.New(t.Context(), "postgres://authenticator@127.0.0.1:1/none")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		return p
	}
	keys, _ := auth.NewKeys(secret)
	mine := pool()
	for name, engine := range map[string]*resolve.Engine{
		"none":                 nil,
		"another pool's":       resolve.NewEngine(resolve.Options{Pool: pool()}),
		"an engine of no pool": resolve.NewEngine(resolve.Options{}),
	} {
		if s, err := New(t.Context(), Options{Pool: mine, Keys: keys, Engine: engine}); err == nil || !strings.Contains(err.Error(), "Engine") {
			if s != nil {
				s.Close()
			}
			t.Errorf("%s: New returned %v, want an error about the Engine", name, err)
		}
	}
}
