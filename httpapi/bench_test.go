package httpapi

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pgreflect/pgreflect/internal/obs"
	"github.com/pgreflect/pgreflect/pgtest"
)

// BenchmarkGraphQLOverHTTP is pg_graphql's published benchmark request (`accountCollection(first: 1)`, which
// upstream measured at 2,205 req/s through PostgREST on 4 vCPU) sent by parallel clients over loopback HTTP,
// through API-key and JWT checks, the role switch and the database. ns/op is wall time per request across all
// clients, so 1e9/ns_per_op is requests per second on this machine.
func BenchmarkGraphQLOverHTTP(b *testing.B) {
	f := newFixture(b, `create table account(id serial primary key, email text not null);
		insert into account(email) select 'user' || i || '@example.com' from generate_series(1, 100) i;`)
	body := `{"query": "{ accountCollection(first: 1) { edges { node { id } } } }", "variables": {}}`
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.ReportAllocs()
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/graphql/v1", strings.NewReader(body))
			req.Header.Set("apikey", f.anon)
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(got) != `{"data": {"accountCollection": {"edges": [{"node": {"id": 1}}]}}}` {
				b.Errorf("%d %s", resp.StatusCode, got)
				return
			}
		}
	})
}

// BenchmarkServeHTTP is one anonymous request through the server's handler as a production server runs it (a
// text request log line, metrics, the pool of 8), with neither an HTTP client nor a socket: what the server
// spends per request beside the database's work, for `-cpuprofile`. cpu-µs/op is the CPU time of this process
// (server and the benchmark's requests, not Postgres) per request: on a shared machine it varies far less than
// the wall time.
func BenchmarkServeHTTP(b *testing.B) {
	f := newFixtureOn(b, pgtest.NewDB(b), `create table account(id serial primary key, email text not null);
		insert into account(email) select 'user' || i || '@example.com' from generate_series(1, 100) i;`, 8,
		Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: obs.NewMetrics()})
	body := `{"query": "query Q1 { accountCollection(first: 1) { edges { node { id } } } }", "variables": {}}`
	const want = `{"data": {"accountCollection": {"edges": [{"node": {"id": 1}}]}}}`
	b.ReportAllocs()
	b.SetParallelism(4)
	cpu0 := processCPU(b)
	b.ResetTimer()
	defer func() { b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op") }()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest(http.MethodPost, "/graphql/v1", strings.NewReader(body))
			req.Header.Set("apikey", f.anon)
			req.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			f.server.ServeHTTP(w, req)
			if w.Code != 200 || w.Body.String() != want {
				b.Errorf("%d %s", w.Code, w.Body)
				return
			}
		}
	})
}

// processCPU is the CPU time (user and system) this process has used.
func processCPU(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
