package benchcmp

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// NewClient is the load generator's HTTP client: keep-alive connections to one loopback server, at most conns
// of them, no compression (none of the servers compresses these small answers the same way).
func NewClient(conns int) *http.Client {
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			MaxIdleConns:        conns,
			MaxIdleConnsPerHost: conns,
			MaxConnsPerHost:     conns,
			DisableCompression:  true,
			IdleConnTimeout:     time.Minute,
		},
	}
}

// Sample is what one stretch of load measured.
type Sample struct {
	Requests   int
	Errors     int
	FirstError string
	Elapsed    time.Duration
	Latencies  []time.Duration
	// Bytes is the sum of the answers' body sizes, for throughput in bytes per second.
	Bytes int64
}

// Add merges another sample (another round of the same contender and query).
func (s *Sample) Add(o Sample) {
	s.Requests += o.Requests
	s.Errors += o.Errors
	if s.FirstError == "" {
		s.FirstError = o.FirstError
	}
	s.Elapsed += o.Elapsed
	s.Bytes += o.Bytes
	s.Latencies = append(s.Latencies, o.Latencies...)
}

// Percentile is the p-th percentile (0–100) of the latencies.
func (s *Sample) Percentile(p float64) time.Duration {
	if len(s.Latencies) == 0 {
		return 0
	}
	sorted := slices.Clone(s.Latencies)
	slices.Sort(sorted)
	i := int(p / 100 * float64(len(sorted)-1))
	return sorted[i]
}

// Drive sends the requests round-robin from conns concurrent workers, each waiting for its answer before the
// next request (a closed loop: throughput is what the server sustains, not what is offered), until d has
// passed. An answer that is not a 200 without "errors" counts as an error.
func Drive(ctx context.Context, client *http.Client, t Target, reqs []Request, conns int, d time.Duration) Sample {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	samples := make([]Sample, conns)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < conns; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			s := &samples[w]
			s.Latencies = make([]time.Duration, 0, 4096)
			for i := w; ctx.Err() == nil; i += conns {
				r := reqs[i%len(reqs)]
				t0 := time.Now()
				n, err := send(ctx, client, t, r)
				if ctx.Err() != nil {
					break // cut off by the deadline: neither a success nor an error
				}
				s.Latencies = append(s.Latencies, time.Since(t0))
				s.Requests++
				s.Bytes += int64(n)
				if err != nil {
					s.Errors++
					if s.FirstError == "" {
						s.FirstError = err.Error()
					}
				}
			}
		}(w)
	}
	wg.Wait()
	var total Sample
	for _, s := range samples {
		total.Add(s)
	}
	total.Elapsed = time.Since(start)
	return total
}

var errorsKey = []byte(`"errors"`)

// send returns the size of the answer's body.
func send(ctx context.Context, client *http.Client, t Target, r Request) (int, error) {
	body, err := t.Do(ctx, client, r)
	if err == nil && bytes.Contains(body, errorsKey) {
		err = fmt.Errorf("%s: %.300s", t.Name, body)
	}
	return len(body), err
}
