package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/internal/obs"
	"github.com/pgreflect/pgreflect/pgtest"
	"github.com/pgreflect/pgreflect/resolve"
)

// Each claim that must not select a role: the login role itself, and role claims that are there but are no
// role name, and a token issued in the future.
func TestBadRoleClaimsAre401(t *testing.T) {
	f := newFixture(t, todoSchema)
	exp := time.Now().Add(time.Hour).Unix()
	cases := []struct {
		name   string
		claims jwt.MapClaims
		want   string
	}{
		{"login role", jwt.MapClaims{"role": "authenticator", "exp": exp}, `JWT role \"authenticator\" may not be assumed`},
		{"empty role", jwt.MapClaims{"role": "", "exp": exp}, "role claim must be a non-empty string"},
		{"number role", jwt.MapClaims{"role": 42, "exp": exp}, "role claim must be a non-empty string"},
		{"array role", jwt.MapClaims{"role": []string{"service_role"}, "exp": exp}, "role claim must be a non-empty string"},
		{"object role", jwt.MapClaims{"role": map[string]any{"name": "service_role"}, "exp": exp}, "role claim must be a non-empty string"},
		{"null role", jwt.MapClaims{"role": nil, "exp": exp}, "role claim must be a non-empty string"},
		{"issued tomorrow", jwt.MapClaims{"role": "authenticated", "iat": time.Now().Add(24 * time.Hour).Unix(), "exp": exp + 86400}, "token used before issued"},
		{"issued two minutes ahead", jwt.MapClaims{"role": "authenticated", "iat": time.Now().Add(2 * time.Minute).Unix(), "exp": exp}, "token used before issued"},
	}
	for _, c := range cases {
		status, body := f.graphql(map[string]string{"apikey": f.anon, "Authorization": "Bearer " + f.userToken(c.claims)}, `{ __typename }`)
		var msg struct{ Message string }
		if status != http.StatusUnauthorized || json.Unmarshal([]byte(body), &msg) != nil || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s (want 401 {\"message\"} containing %s)", c.name, status, body, c.want)
		}
	}
	// What stays accepted: a clock a few seconds ahead, and no role claim at all (the key's role).
	for name, claims := range map[string]jwt.MapClaims{
		"issued 10s ahead": {"role": "authenticated", "iat": time.Now().Add(10 * time.Second).Unix(), "exp": exp},
		"no role claim":    {"sub": "11111111-1111-1111-1111-111111111111", "exp": exp},
	} {
		status, body := f.graphql(map[string]string{"apikey": f.anon, "Authorization": "Bearer " + f.userToken(claims)}, `{ __typename }`)
		if status != http.StatusOK || body != `{"data": {"__typename": "Query"}}` {
			t.Errorf("%s: %d %s", name, status, body)
		}
	}
}

var logLine = regexp.MustCompile(`(?m)^\{.*"msg":"request".*$`)

// The request line has what an operator needs and none of the credentials the request carried.
func TestRequestLogHasNoSecrets(t *testing.T) {
	f := newFixture(t, todoSchema)
	token := f.userToken(jwt.MapClaims{"role": "authenticated", "sub": "11111111-1111-1111-1111-111111111111",
		"exp": time.Now().Add(time.Hour).Unix()})
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/graphql/v1?apikey="+url.QueryEscape(f.anon),
		strings.NewReader(`{"query": "mutation { deleteFromTodoCollection(atMost: 0) { affectedCount } }"}`))
	req.Header.Set("apikey", f.anon)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set(obs.RequestIDHeader, "trace-abc.123")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get(obs.RequestIDHeader); got != "trace-abc.123" {
		t.Errorf("X-Request-Id echoed as %q", got)
	}
	logs := f.logs.String()
	lines := logLine.FindAllString(logs, -1)
	if len(lines) != 1 {
		t.Fatalf("want one request line, got %d in:\n%s", len(lines), logs)
	}
	var line map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &line); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"method": "POST", "path": "/graphql/v1", "status": float64(200),
		"role": "authenticated", "request_id": "trace-abc.123", "operation": "mutation"} {
		if line[k] != want {
			t.Errorf("log line %s = %v, want %v (%s)", k, line[k], want, lines[0])
		}
	}
	if _, ok := line["duration_ms"].(float64); !ok {
		t.Errorf("log line has no duration: %s", lines[0])
	}
	for name, secret := range map[string]string{"bearer token": token, "apikey": f.anon,
		"token signature": token[strings.LastIndex(token, ".")+1:], "apikey signature": f.anon[strings.LastIndex(f.anon, ".")+1:]} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log holds the %s:\n%s", name, logs)
		}
	}
	// An id that could forge a log line or a header is replaced by one of ours.
	req, _ = http.NewRequest(http.MethodPost, f.srv.URL+"/graphql/v1", strings.NewReader(`{"query": "{ __typename }"}`))
	req.Header.Set("apikey", f.anon)
	req.Header.Set(obs.RequestIDHeader, `x" injected="1`)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get(obs.RequestIDHeader); got == "" || strings.ContainsAny(got, `" =`) {
		t.Errorf("unsafe request id answered as %q", got)
	}
}

// An internal failure (here: the pool is gone) reaches the client as a generic message with the request id, in
// the GraphQL shape, and the reason reaches only the log, under the same id. Whether the roles were cached or
// not, the client sees the one 503 shape.
func TestInternalFailureIsGenericAndLogged(t *testing.T) {
	for _, warm := range []bool{true, false} {
		t.Run(fmt.Sprintf("roles cached %v", warm), func(t *testing.T) {
			f := newFixture(t, todoSchema)
			if warm {
				if status, _ := f.graphql(map[string]string{"apikey": f.anon}, `{ __typename }`); status != 200 {
					t.Fatalf("warm-up: %d", status)
				}
			}
			f.pool.Close()
			status, b, id := postGraphQL(t, f.srv.URL, f.anon, `{"query": "{ __typename }"}`)
			want := `{"data":null,"errors":[{"message":"Database unavailable (request id ` + id + `)"}]}`
			if status != http.StatusServiceUnavailable || id == "" || b != want {
				t.Fatalf("%d %s\nwant 503 %s", status, b, want)
			}
			var found bool
			for _, l := range strings.Split(f.logs.String(), "\n") {
				if strings.Contains(l, `"level":"ERROR"`) && strings.Contains(l, `"request_id":"`+id+`"`) && strings.Contains(l, "closed pool") {
					found = true
				}
			}
			if !found {
				t.Errorf("no error line with id %s and the reason in:\n%s", id, f.logs.String())
			}
		})
	}
}

// /metrics answers only the service_role key and counts requests by route and operation type.
func TestMetricsEndpoint(t *testing.T) {
	m := obs.NewMetrics()
	f := newFixtureWith(t, todoSchema, m)
	if err := m.RegisterPool("api", f.pool); err != nil {
		t.Fatal(err)
	}
	f.graphql(map[string]string{"apikey": f.anon}, `{ todoCollection { edges { node { id } } } }`)
	f.graphql(map[string]string{"apikey": f.service}, `mutation { deleteFromTodoCollection(atMost: 0) { affectedCount } }`)
	get := func(headers map[string]string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, f.srv.URL+"/metrics", nil)
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for name, h := range map[string]map[string]string{"no key": nil, "anon key": {"apikey": f.anon},
		"anon bearer": {"Authorization": "Bearer " + f.anon}} {
		if status, body := get(h); status != http.StatusUnauthorized || strings.Contains(body, "pgreflect_") {
			t.Errorf("%s: %d %.200s", name, status, body)
		}
	}
	status, body := get(map[string]string{"Authorization": "Bearer " + f.service})
	if status != http.StatusOK {
		t.Fatalf("service_role: %d %s", status, body)
	}
	for _, want := range []string{
		`pgreflect_http_requests_total{code="200",operation="query",route="/graphql/v1"} 1`,
		`pgreflect_http_requests_total{code="200",operation="mutation",route="/graphql/v1"} 1`,
		`pgreflect_http_request_duration_seconds_count{operation="mutation",route="/graphql/v1"} 1`,
		`pgreflect_db_pool_max_connections{pool="api"}`,
		`pgreflect_db_pool_acquires_total{pool="api"}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if !regexp.MustCompile(`(?m)^pgreflect_schema_reloads_total [1-9]`).MatchString(body) {
		t.Errorf("no schema reload counted (the watcher invalidates once it listens):\n%s", grepLines(body, "schema"))
	}
	// A body over the limit is a refusal.
	f.post("/graphql/v1", map[string]string{"apikey": f.anon}, `{"query": "`+strings.Repeat(" ", 5000)+`"}`)
	if _, body := get(map[string]string{"apikey": f.service}); !strings.Contains(body, `pgreflect_limit_refusals_total{limit="body_too_large"} 1`) {
		t.Errorf("refusal not counted:\n%s", grepLines(body, "refusal"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// /health stays 200 while the process runs; /ready follows the database: 503 while Postgres is stopped, and 200
// again once it is back. The test runs its own cluster, since it stops it.
func TestHealthAndReadyFollowPostgres(t *testing.T) {
	ctx := context.Background()
	cluster := pgtest.StartCluster(t)
	testenv.Setup(t, cluster.URL("postgres"), "")
	u, _ := url.Parse(cluster.URL("postgres"))
	u.User = url.User("authenticator")
	pool, err := pgxpool.New(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	keys, _ := auth.NewKeys(secret)
	anon, _ := keys.SignAPIKey("anon", "abcdefghijklmnopqrst")
	logs := &testenv.SyncBuffer{}
	s, err := New(ctx, Options{Pool: pool, Engine: resolve.NewEngine(resolve.Options{Pool: pool}), Keys: keys, AnonKey: anon,
		Logger: slogJSON(logs, t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	status := func(path string) int {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	waitFor := func(path string, want int, within time.Duration) {
		t.Helper()
		deadline := time.Now().Add(within)
		got := status(path)
		for got != want && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			got = status(path)
		}
		if got != want {
			t.Fatalf("%s: %d, want %d within %s", path, got, want, within)
		}
	}
	waitFor("/ready", 200, 5*time.Second)
	if got := status("/health"); got != 200 {
		t.Fatalf("/health: %d", got)
	}
	if err := cluster.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	waitFor("/ready", 503, 5*time.Second)
	if d := time.Since(start); d > readyTimeout+time.Second {
		t.Errorf("/ready took %s to say 503", d)
	}
	if got := status("/health"); got != 200 {
		t.Errorf("/health while Postgres is stopped: %d", got)
	}
	// The API answers the outage in its one 503 shape, with the request id and nothing of the reason.
	code, b, id := postGraphQL(t, srv.URL, anon, `{"query": "{ __typename }"}`)
	if want := `{"data":null,"errors":[{"message":"Database unavailable (request id ` + id + `)"}]}`; code != 503 || b != want {
		t.Errorf("graphql while Postgres is stopped: %d %s, want 503 %s", code, b, want)
	}
	if !strings.Contains(logs.String(), `"request_id":"`+id+`"`) {
		t.Errorf("the outage was not logged under %s", id)
	}
	if err := cluster.Start(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor("/ready", 200, 15*time.Second)
}

func slogJSON(w io.Writer, t testing.TB) *slog.Logger {
	return slog.New(slog.NewJSONHandler(io.MultiWriter(w, testWriter{t}), nil))
}
