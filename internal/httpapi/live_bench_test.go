package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
)

// BenchmarkLiveQueries is issue 17's scenario: users each subscribed to ten live queries under row level
// security by auth.uid() (ten cohorts), over one WebSocket per user, while rows are written for random users at
// a steady rate. It reports the time from a write to the push that carries it (p50, p99), the statements the
// refreshes sent per second beside the naive way's (every subscription re-run on its own every second), the
// executions of queries within them, and the heap. PGREFLECT_LIVE_BENCH_USERS (default 1000), _WRITES (per
// second, default 100) and _SECONDS (default 10) size it.
func BenchmarkLiveQueries(b *testing.B) {
	users := envInt("PGREFLECT_LIVE_BENCH_USERS", 1000)
	rate := envInt("PGREFLECT_LIVE_BENCH_WRITES", 100)
	seconds := envInt("PGREFLECT_LIVE_BENCH_SECONDS", 10)
	const queries = 10
	f := newFixture(b, liveSchema+`create index on todo (owner);`)
	g := f.secondServer(LiveLimits{PerInstance: users * queries}, true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var mu sync.Mutex
	written := map[string]time.Time{} // marker -> when its insert was sent
	var latencies []time.Duration
	marker := regexp.MustCompile(`m[0-9]+x`)
	var readers sync.WaitGroup
	ids := make([]uuid.UUID, users)
	ready := make(chan struct{}, users)
	for u := range users {
		ids[u] = uuid.New()
		token := f.userToken(jwt.MapClaims{"sub": ids[u].String(), "role": "authenticated", "exp": time.Now().Add(time.Hour).Unix()})
		conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(g.srv.URL, "http")+"/graphql/v1",
			&websocket.DialOptions{Subprotocols: []string{wsProtocol}})
		if err != nil {
			b.Fatal(err)
		}
		defer conn.CloseNow()
		conn.SetReadLimit(1 << 20)
		send := func(s string) {
			if err := conn.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
				b.Fatal(err)
			}
		}
		send(fmt.Sprintf(`{"type":"connection_init","payload":{"apikey":%q,"Authorization":"Bearer %s"}}`, f.anon, token))
		for q := range queries {
			send(fmt.Sprintf(`{"id":"%d","type":"subscribe","payload":{"query":"subscription { todoCollection(first: %d, orderBy: [{id: DescNullsLast}]) { edges { node { id task } } } }"}}`, q, q+1))
		}
		readers.Go(func() {
			seen := make([]map[string]bool, queries)
			for i := range seen {
				seen[i] = map[string]bool{}
			}
			answered := 0
			for {
				_, data, err := conn.Read(ctx)
				if err != nil {
					return
				}
				now := time.Now()
				var m wsMessage
				if json.Unmarshal(data, &m) != nil || m.Type != "next" {
					continue
				}
				q, _ := strconv.Atoi(m.ID)
				if answered < queries {
					if answered++; answered == queries {
						ready <- struct{}{}
					}
				}
				mu.Lock()
				for _, mk := range marker.FindAllString(string(m.Payload), -1) {
					if !seen[q][mk] {
						seen[q][mk] = true
						if at, ok := written[mk]; ok {
							latencies = append(latencies, now.Sub(at))
						}
					}
				}
				mu.Unlock()
			}
		})
	}
	for range users {
		select {
		case <-ready:
		case <-time.After(2 * time.Minute):
			b.Fatal("the subscriptions' first answers did not all come within 2 minutes")
		}
	}
	before := g.server.live.Stats()
	var ms runtime.MemStats
	b.ResetTimer()
	start := time.Now()
	tick := time.NewTicker(time.Second / time.Duration(rate))
	for n := 0; time.Since(start) < time.Duration(seconds)*time.Second; n++ {
		<-tick.C
		mk := fmt.Sprintf("m%dx", n)
		mu.Lock()
		written[mk] = time.Now()
		mu.Unlock()
		if _, err := f.admin.Exec(ctx, `insert into todo (owner, task) values ($1, $2)`, ids[rand.IntN(users)], mk); err != nil {
			b.Fatal(err)
		}
	}
	tick.Stop()
	time.Sleep(3 * time.Second) // the last writes' pushes
	elapsed := time.Since(start).Seconds()
	b.StopTimer()
	after := g.server.live.Stats()
	runtime.ReadMemStats(&ms)
	cancel()
	mu.Lock()
	defer mu.Unlock()
	if len(latencies) == 0 {
		b.Fatal("no write reached a subscriber")
	}
	slices.Sort(latencies)
	pct := func(p float64) float64 { return float64(latencies[int(p*float64(len(latencies)-1))].Milliseconds()) }
	evaluations := float64(after.Evaluations-before.Evaluations) / elapsed
	statements := float64(after.Statements-before.Statements) / elapsed
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(after.Refreshes-before.Refreshes)/elapsed, "roundtrips/s")
	b.ReportMetric(statements, "statements/s")
	b.ReportMetric(evaluations, "executions/s")
	b.ReportMetric(float64(users*queries), "naive-statements/s")
	b.ReportMetric(float64(len(latencies)), "pushes-measured")
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MB")
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
