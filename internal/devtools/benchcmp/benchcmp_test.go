package benchcmp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/internal/devtools/benchdata"
	"github.com/pgreflect/pgreflect/internal/httpapi"
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
	tokens := c.tokens
	pgreflect := Target{Name: "pgreflect", URL: pgreflectSrv.URL + "/graphql/v1"}
	ceiling := Target{Name: "ceiling", URL: ceilingSrv.URL + "/graphql/v1"}
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
			want, got := answer(pgreflect), answer(ceiling)
			var w, g any
			if err := json.Unmarshal(want, &w); err != nil {
				t.Fatalf("%s: pgreflect: %v: %s", q.Name, err, want)
			}
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("%s: ceiling: %v: %s", q.Name, err, got)
			}
			if !reflect.DeepEqual(w, g) {
				t.Errorf("%s variant %d:\npgreflect %.1500s\nceiling   %.1500s", q.Name, v, want, got)
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
	pgreflect, ceiling http.Handler
	tokens             Tokens
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
	postmaster, _, err := procStat(backend)
	if err != nil {
		tb.Fatal(err)
	}
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
	return contenders{
		pgreflect:  api,
		ceiling:    NewCeiling(pool, keys, auth.APIKeys{Anon: anonKey, ServiceRole: serviceKey}, accounts),
		tokens:     Tokens{Keys: keys, AnonKey: anonKey, UserID: func(a int) (string, error) { return benchdata.UserID(ctx, conn, a) }},
		postmaster: postmaster,
	}
}
