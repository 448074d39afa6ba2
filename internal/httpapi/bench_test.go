package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/pgreflect/pgreflect/internal/obs"
	"github.com/pgreflect/pgreflect/pgtest"
)

// benchSchema and benchBody are pg_graphql's published benchmark request (`accountCollection(first: 1)`, which
// upstream measured at 2,205 req/s through PostgREST on 4 vCPU), and benchAnswer its answer.
const (
	benchSchema = `create table account(id serial primary key, email text not null);
		insert into account(email) select 'user' || i || '@example.com' from generate_series(1, 100) i;`
	benchBody   = `{"query": "{ accountCollection(first: 1) { edges { node { id } } } }", "variables": {}}`
	benchAnswer = `{"data": {"accountCollection": {"edges": [{"node": {"id": 1}}]}}}`
)

// BenchmarkGraphQLOverHTTP is the benchmark request sent by parallel clients over loopback HTTP, through API-key
// and JWT checks, the role switch and the database. ns/op is wall time per request across all clients, so
// 1e9/ns_per_op is requests per second on this machine.
func BenchmarkGraphQLOverHTTP(b *testing.B) {
	f := newFixture(b, benchSchema)
	client := benchClient()
	b.ReportAllocs()
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if !benchRequest(b, client, f.srv.URL, f.anon) {
				return
			}
		}
	})
}

// BenchmarkTracing is what traces cost a request: BenchmarkGraphQLOverHTTP's request on three servers of one
// database, tracing off (no provider, as without OTEL_* variables), on with a sampler that samples nothing (the
// middleware and unrecorded spans), and on with every request sampled into a batching exporter that drops the
// spans (the SDK's whole work short of the network). The servers take turns, a batch of requests each per round
// in a rotating order, so that the machine's drift (other processes, the database's own state) falls on all
// three alike; the metrics are each one's wall time per request and its ratio to off.
func BenchmarkTracing(b *testing.B) {
	f := newFixture(b, benchSchema)
	servers := []struct {
		name     string
		provider *sdktrace.TracerProvider
		url      string
		elapsed  time.Duration
	}{
		{name: "off"},
		{name: "unsampled", provider: sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))},
		{name: "sampled", provider: sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()),
			sdktrace.WithBatcher(discardSpans{}))},
	}
	for i := range servers {
		f.opts.TracerProvider = nil
		if p := servers[i].provider; p != nil {
			f.opts.TracerProvider = p
			b.Cleanup(func() { _ = p.Shutdown(context.Background()) })
		}
		_, srv := f.start(nil)
		servers[i].url = srv.URL
	}
	const clients, perClient = 8, 8 // a batch: 64 requests by 8 clients at once
	client := benchClient()
	batch := func(url string) {
		var wg sync.WaitGroup
		for range clients {
			wg.Go(func() {
				for range perClient {
					if !benchRequest(b, client, url, f.anon) {
						return
					}
				}
			})
		}
		wg.Wait()
	}
	for _, s := range servers {
		batch(s.url) // compile and prepare outside the measurement
	}
	b.ResetTimer()
	for round := 0; b.Loop(); round++ {
		for i := range servers {
			s := &servers[(round+i)%len(servers)]
			start := time.Now()
			batch(s.url)
			s.elapsed += time.Since(start)
		}
	}
	requests := float64(b.N * clients * perClient)
	off := float64(servers[0].elapsed)
	for _, s := range servers {
		b.ReportMetric(float64(s.elapsed)/requests, "ns/req-"+s.name)
		if s.name != "off" {
			b.ReportMetric(float64(s.elapsed)/off, s.name+"/off")
		}
	}
}

// discardSpans is an exporter that drops what it is given.
type discardSpans struct{}

func (discardSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardSpans) Shutdown(context.Context) error                             { return nil }

func benchClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
}

// benchRequest POSTs benchBody to the server at url and checks the answer; false when it failed (b is told).
func benchRequest(b *testing.B, client *http.Client, url, anon string) bool {
	req, _ := http.NewRequest(http.MethodPost, url+"/graphql/v1", strings.NewReader(benchBody))
	req.Header.Set("apikey", anon)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		b.Error(err)
		return false
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(got) != benchAnswer {
		b.Errorf("%d %s", resp.StatusCode, got)
		return false
	}
	return true
}

// BenchmarkServeHTTP is one anonymous request through the server's handler as a production server runs it (a
// text request log line, metrics, the pool of 8), with neither an HTTP client nor a socket: what the server
// spends per request beside the database's work, for `-cpuprofile`. cpu-µs/op is the CPU time of this process
// (server and the benchmark's requests, not Postgres) per request: on a shared machine it varies far less than
// the wall time.
func BenchmarkServeHTTP(b *testing.B) {
	f := newFixtureOn(b, pgtest.NewDB(b), benchSchema, 8,
		Options{Logger: slog.New(obs.NewTextHandler(io.Discard, slog.LevelInfo)), Metrics: obs.NewMetrics()})
	body := `{"query": "query Q1 { accountCollection(first: 1) { edges { node { id } } } }", "variables": {}}`
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
			if w.Code != 200 || w.Body.String() != benchAnswer {
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
