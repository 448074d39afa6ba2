package benchcmp

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"

	"github.com/pgreflect/pgreflect/internal/httpapi"
	"github.com/pgreflect/pgreflect/internal/obs"
)

// BenchmarkServerCPU is the comparison's queries served in this process by pgreflect's handler (as the binary
// runs it: a text request log line, metrics), by the ceiling and by the ceiling with pgreflect's per-request
// duties (its request lines discarded as pgreflect's are), through ServeHTTP without sockets: the CPU each spends
// per request in the server (server-µs/op: this process, so the requests' building too, alike for all) and in
// Postgres (pg-µs/op: every process of the cluster). Where make bench gives the ratio of
// throughput, this says on which side of the wire the difference is, and -cpuprofile on one contender's
// sub-benchmark (e.g. -bench 'ServerCPU/Q1/pgreflect') shows where.
func BenchmarkServerCPU(b *testing.B) {
	const accounts = 2000
	c := newContenders(b, accounts, func(o *httpapi.Options) {
		o.Logger = slog.New(obs.NewTextHandler(io.Discard, slog.LevelInfo))
		o.Metrics = obs.NewMetrics()
	})
	for _, q := range Queries(accounts) {
		reqs := make([]Request, Variants(accounts))
		for v := range reqs {
			var err error
			if reqs[v], err = (Target{}).Request(q, v, c.tokens); err != nil {
				b.Fatal(err)
			}
		}
		for _, h := range []struct {
			name    string
			handler http.Handler
		}{{"pgreflect", c.pgreflect}, {"ceiling", c.ceiling}, {"ceiling-duties", c.duties}} {
			b.Run(q.Name+"/"+h.name, func(b *testing.B) {
				serve := func(r Request) bool {
					// A cancelable context, as net/http gives every request: what the handlers derive from it
					// and watch costs what it costs behind a socket.
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/graphql/v1", bytes.NewReader(r.Body))
					req.Header = r.Header.Clone()
					w := httptest.NewRecorder()
					h.handler.ServeHTTP(w, req)
					if w.Code != http.StatusOK || bytes.Contains(w.Body.Bytes(), []byte(`"errors"`)) {
						b.Errorf("%s %s: %d %.300s", q.Name, h.name, w.Code, w.Body)
						return false
					}
					return true
				}
				for _, r := range reqs {
					serve(r) // prepared and cached outside the measurement
				}
				var next atomic.Int64
				pg0, err := ClusterTimes(c.postmaster)
				if err != nil {
					b.Fatal(err)
				}
				cpu0, err := ProcessCPU(os.Getpid())
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.SetParallelism(8)
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if !serve(reqs[int(next.Add(1))%len(reqs)]) {
							return
						}
					}
				})
				b.StopTimer()
				cpu1, err := ProcessCPU(os.Getpid())
				if err != nil {
					b.Fatal(err)
				}
				cpu := cpu1 - cpu0
				pg1, err := ClusterTimes(c.postmaster)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "server-µs/op")
				b.ReportMetric(float64(ClusterCPUBetween(pg0, pg1).Microseconds())/float64(b.N), "pg-µs/op")
			})
		}
	}
}
