package benchcmp

import (
	"context"
	"sync"
	"time"
)

// The slow-clients scenario of issue 21: clients whose requests each hold a database connection for seconds
// must not starve the cheap requests of everyone else.

// SlowFunctionSQL creates the function the slow clients call: a stable function granted to anon, so that it
// is a query field (`{ slow }`), which holds its connection for two seconds.
const SlowFunctionSQL = `create function public.slow() returns int stable language sql as $$ select 1 from pg_sleep(2) $$;
grant execute on function public.slow() to anon;`

// SlowDocument is the slow clients' request.
const SlowDocument = `query Slow { slow }`

// SlowClients is what the scenario measured on one contender.
type SlowClients struct {
	Contender    string  `json:"contender"`
	PoolSize     int     `json:"pool_size"`
	SlowClients  int     `json:"slow_clients"`
	CheapClients int     `json:"cheap_clients"`
	Seconds      float64 `json:"seconds"`
	// SlowRequests and SlowErrors count the slow clients' answers (an error is anything but a 200 with data).
	SlowRequests int          `json:"slow_requests"`
	SlowErrors   int          `json:"slow_errors"`
	Cheap        []StarvedRun `json:"cheap"`
}

// StarvedRun is one cheap query's load while the slow clients ran.
type StarvedRun struct {
	Query      string  `json:"query"`
	As         string  `json:"as"`
	Requests   int     `json:"requests"`
	Errors     int     `json:"errors"`
	FirstError string  `json:"first_error,omitempty"`
	ReqPerSec  float64 `json:"req_per_sec"`
	P50Ms      float64 `json:"p50_ms"`
	P99Ms      float64 `json:"p99_ms"`
}

// SlowClientsTargetP99Ms is issue 21's target for the cheap requests' p99.
const SlowClientsTargetP99Ms = 100

// DriveBesideSlow sends cheap from cheapConns workers for d while slowConns workers send slow, each on its own
// connections, and returns both samples. The slow clients start first, so that they hold their connections
// when the cheap ones arrive.
func DriveBesideSlow(ctx context.Context, t Target, slow Request, slowConns int, cheap []Request, cheapConns int, d time.Duration) (cheapSample, slowSample Sample) {
	const headStart = 300 * time.Millisecond
	var wg sync.WaitGroup
	wg.Go(func() { slowSample = Drive(ctx, NewClient(slowConns), t, []Request{slow}, slowConns, d+headStart) })
	time.Sleep(headStart)
	cheapSample = Drive(ctx, NewClient(cheapConns), t, cheap, cheapConns, d)
	wg.Wait()
	return cheapSample, slowSample
}
