package benchcmp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/internal/devtools/benchdata"
	"github.com/pgreflect/pgreflect/internal/httpapi"
	"github.com/pgreflect/pgreflect/internal/obs"
	"github.com/pgreflect/pgreflect/internal/procstat"
	"github.com/pgreflect/pgreflect/pgtest"
	"github.com/pgreflect/pgreflect/resolve"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// The ceiling must give pgreflect's exact answers, or the comparison measures different work. PostGraphile's
// dialect is checked by every `make bench` run, which needs Node; this test does not.
func TestCeilingAnswersAsPgreflect(t *testing.T) {
	ctx := context.Background()
	const accounts = 500
	c := newContenders(t, accounts)
	pgreflectSrv := httptest.NewServer(c.pgreflect)
	defer pgreflectSrv.Close()
	ceilingSrv := httptest.NewServer(c.ceiling)
	defer ceilingSrv.Close()
	dutiesSrv := httptest.NewServer(c.duties)
	defer dutiesSrv.Close()
	tokens := c.tokens
	pgreflect := Target{Name: "pgreflect", URL: pgreflectSrv.URL + "/graphql/v1"}
	ceiling := Target{Name: "ceiling", URL: ceilingSrv.URL + "/graphql/v1"}
	duties := Target{Name: "ceiling-duties", URL: dutiesSrv.URL + "/graphql/v1"}
	client := pgreflectSrv.Client()
	// The rows curve's request at sizes below and above pg_graphql's default max_rows (30), and all accounts.
	rowsQueries := []Query{RowsQuery(1), RowsQuery(100), RowsQuery(accounts)}
	for _, q := range append(Queries(accounts), rowsQueries...) {
		for _, v := range []int{0, Variants(accounts) - 1} {
			answer := func(target Target) []byte {
				t.Helper()
				req, err := target.Request(q, v, tokens)
				if err != nil {
					t.Fatal(err)
				}
				body, err := target.Do(ctx, client, req)
				if err != nil {
					t.Fatalf("%s variant %d: %v", q.Name, v, err)
				}
				return body
			}
			want := answer(pgreflect)
			var w any
			if err := json.Unmarshal(want, &w); err != nil {
				t.Fatalf("%s: pgreflect: %v: %s", q.Name, err, want)
			}
			for _, other := range []Target{ceiling, duties} {
				got := answer(other)
				var g any
				if err := json.Unmarshal(got, &g); err != nil {
					t.Fatalf("%s: %s: %v: %s", q.Name, other.Name, err, got)
				}
				if !reflect.DeepEqual(w, g) {
					t.Errorf("%s variant %d:\npgreflect %.1500s\n%s %.1500s", q.Name, v, want, other.Name, got)
				}
			}
			if n := RowCount(want); n == 0 {
				t.Errorf("%s variant %d: no rows, nothing compared: %s", q.Name, v, want)
			}
		}
	}
	// The rows curve measures answers of the size it says: max_rows (CurveSQL) lets every size through.
	for _, n := range []int{1, 100, accounts} {
		if got := RowCount(must(t, pgreflect, client, RowsQuery(n), 0, tokens)); got != n {
			t.Errorf("RowsQuery(%d): %d rows", n, got)
		}
	}
	// The layout the variants rely on: a full answer for every variant.
	if n := RowCount(must(t, pgreflect, client, Queries(accounts)[2], Variants(accounts)-1, tokens)); n != 10 {
		t.Errorf("Q3 last variant: %d accounts, want 10", n)
	}
}

func must(t *testing.T, target Target, client *http.Client, q Query, v int, tokens Tokens) []byte {
	t.Helper()
	req, err := target.Request(q, v, tokens)
	if err != nil {
		t.Fatal(err)
	}
	body, err := target.Do(context.Background(), client, req)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// contenders is pgreflect's server and the ceiling on one database of benchdata with the given accounts, both
// connecting as authenticator through one pool.
type contenders struct {
	pgreflect http.Handler
	ceiling   *Ceiling
	// duties is the ceiling with pgreflect's per-request duties (WithDuties), its request lines discarded.
	duties http.Handler
	tokens Tokens
	// postmaster is the database cluster's postmaster, whose processes' CPU time ClusterTimes reads.
	postmaster int
}

func newContenders(tb testing.TB, accounts int, opts ...func(*httpapi.Options)) contenders {
	tb.Helper()
	ctx := context.Background()
	superURL := pgtest.NewDB(tb)
	conn, err := pgx.Connect(ctx, superURL)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close(ctx) })
	if err := benchdata.Load(ctx, conn, accounts); err != nil {
		tb.Fatal(err)
	}
	if _, err := conn.Exec(ctx, CurveSQL); err != nil {
		tb.Fatal(err)
	}
	var backend int
	if err := conn.QueryRow(ctx, "select pg_backend_pid()").Scan(&backend); err != nil {
		tb.Fatal(err)
	}
	backendStat, err := procstat.Read(backend)
	if err != nil {
		tb.Fatal(err)
	}
	postmaster := backendStat.Parent
	u, _ := url.Parse(superURL)
	u.User = url.User("authenticator")
	pool, err := pgxpool.New(ctx, u.String())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)

	keys, err := auth.NewKeys("a-benchmark-secret-of-at-least-32-characters")
	if err != nil {
		tb.Fatal(err)
	}
	anonKey, _ := keys.SignAPIKey("anon", "benchbenchbenchbench")
	serviceKey, _ := keys.SignAPIKey("service_role", "benchbenchbenchbench")
	o := httpapi.Options{Pool: pool, Keys: keys, AnonKey: anonKey, ServiceRoleKey: serviceKey, SearchPath: []string{"public"}}
	for _, opt := range opts {
		opt(&o)
	}
	o.Engine = resolve.NewEngine(resolve.Options{Pool: pool, Logger: o.Logger})
	api, err := httpapi.New(ctx, o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(api.Close)
	ceiling := NewCeiling(pool, keys, auth.APIKeys{Anon: anonKey, ServiceRole: serviceKey}, accounts)
	return contenders{
		pgreflect:  api,
		ceiling:    ceiling,
		duties:     ceiling.WithDuties(slog.New(obs.NewTextHandler(io.Discard, slog.LevelInfo))),
		tokens:     Tokens{Keys: keys, AnonKey: anonKey, UserID: func(a int) (string, error) { return benchdata.UserID(ctx, conn, a) }},
		postmaster: postmaster,
	}
}

// The ceiling with duties does what it stands for: each answer carries a request id and pgreflect's CORS and
// version headers, and each request writes one request line with its role and operation.
func TestCeilingWithDutiesDoesThem(t *testing.T) {
	const accounts = 50
	c := newContenders(t, accounts)
	var log bytes.Buffer
	h := c.ceiling.WithDuties(slog.New(obs.NewTextHandler(&log, slog.LevelInfo)))
	for i, q := range Queries(accounts)[:2] {
		r, err := (Target{}).Request(q, 0, c.tokens)
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPost, "/graphql/v1", bytes.NewReader(r.Body))
		req.Header = r.Header.Clone()
		// The first as a browser's cross-origin request, whose answer exposes headers; the second as the load
		// generator's, whose answer does not.
		crossOrigin := i == 0
		if crossOrigin {
			req.Header.Set("Origin", "http://localhost:3000")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK || RowCount(w.Body.Bytes()) == 0 {
			t.Fatalf("%s: %d %s", q.Name, w.Code, w.Body)
		}
		hd := w.Result().Header
		if hd.Get("X-Request-Id") == "" || hd.Get("Access-Control-Allow-Origin") != "*" ||
			strings.Contains(hd.Get("Access-Control-Expose-Headers"), "X-Request-Id") != crossOrigin || hd.Get(httpapi.VersionHeader) == "" {
			t.Errorf("%s: headers %v", q.Name, hd)
		}
		lines := strings.Split(strings.TrimSpace(log.String()), "\n")
		if len(lines) != i+1 {
			t.Fatalf("%s: %d request lines after %d requests:\n%s", q.Name, len(lines), i+1, log.String())
		}
		line := lines[i]
		for _, want := range []string{"msg=request", "status=200", "operation=query", "request_id=" + hd.Get("X-Request-Id")} {
			if !strings.Contains(line, want) {
				t.Errorf("%s: no %q in %q", q.Name, want, line)
			}
		}
	}
}

// Every round runs each contender once, pgreflect next to the plain ceiling; over four rounds each of the two
// goes first twice, and the ceiling with duties stands before the pair twice and after it twice.
func TestSlotOrder(t *testing.T) {
	names := []string{"pgreflect", "ceiling", "ceiling-duties", "postgraphile", "postgraphile5"}
	pgreflectFirst, dutiesFirst := 0, 0
	restFirst := map[string]bool{}
	for r := range 8 {
		order := SlotOrder(names, r)
		pos := map[string]int{}
		for k, i := range order {
			if _, twice := pos[names[i]]; twice {
				t.Fatalf("round %d runs %s twice: %v", r, names[i], order)
			}
			pos[names[i]] = k
		}
		if len(pos) != len(names) {
			t.Fatalf("round %d runs %d contenders, want %d: %v", r, len(pos), len(names), order)
		}
		if d := pos["pgreflect"] - pos["ceiling"]; d != 1 && d != -1 {
			t.Errorf("round %d: pgreflect and the ceiling not back to back: %v", r, order)
		}
		if pos["postgraphile"] < 3 || pos["postgraphile5"] < 3 {
			t.Errorf("round %d: PostGraphile between the ceilings and pgreflect: %v", r, order)
		}
		if r < 4 {
			if pos["pgreflect"] < pos["ceiling"] {
				pgreflectFirst++
			}
			if pos["ceiling-duties"] < pos["pgreflect"] {
				dutiesFirst++
			}
		}
		restFirst[names[order[3]]] = true
	}
	if pgreflectFirst != 2 || dutiesFirst != 2 {
		t.Errorf("in four rounds pgreflect went first %d times, the ceiling with duties before it %d times; want 2 and 2",
			pgreflectFirst, dutiesFirst)
	}
	if len(restFirst) != 2 {
		t.Errorf("the other contenders' order does not rotate: %v", restFirst)
	}
	// Without the ceilings, every contender still runs once a round, in rotation.
	only := []string{"postgraphile", "pgreflect"}
	if a, b := SlotOrder(only, 0), SlotOrder(only, 1); len(a) != 2 || len(b) != 2 || a[0] == a[1] || b[0] == b[1] {
		t.Errorf("two contenders: %v then %v", a, b)
	}
}
