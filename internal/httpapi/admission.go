package httpapi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/internal/admission"
	"github.com/pgreflect/pgreflect/internal/obs"
)

// DefaultPoolTimeout is how long a request waits for a database connection by default: PostgREST's
// db-pool-acquisition-timeout.
const DefaultPoolTimeout = 10 * time.Second

// DefaultPoolShare lets one credential hold at most three quarters of a pool with requests that are slow or
// not known yet: the anon key's slow requests leave a quarter to signed-in users and to the service_role key,
// and one user's to everyone else. Known cheap requests are not counted (see Options.PoolShare).
const DefaultPoolShare = 0.75

// DefaultSlowShare lets the slow operations of all clients together hold half of a pool, so that the other half
// stays free for cheap requests, whoever sends them.
const DefaultSlowShare = 0.5

// DefaultSlowThreshold is how long an operation holds its connection to count as slow: a hundred times an API
// request's usual few milliseconds, so that a busy machine does not make cheap operations look slow.
const DefaultSlowThreshold = 250 * time.Millisecond

// rememberedOperations bounds the operations whose costs are remembered (about 100 bytes each).
const rememberedOperations = 10000

// The kinds of client admission counts, as the prefixes of their keys, and the key of the slow operations.
const (
	shareRole       = "role"
	shareCredential = "API key or token"
	shareAddress    = "client address"
	slowOperations  = "slow operations"
)

// gate is a pool with what admits requests to it: each client's share (perClient connections at once; 0: no
// limit) and the slow operations' (slow; 0: no limit).
type gate struct {
	pool            *pgxpool.Pool
	limiter         *admission.Limiter
	perClient, slow int
}

// newGate limits each client to share of pool's connections and the slow operations to slowShare (at least
// one each); a share >= 1 is no limit.
func newGate(pool *pgxpool.Pool, share, slowShare float64) gate {
	g := gate{pool: pool}
	limit := func(share float64) int {
		if share >= 1 {
			return 0
		}
		return max(int(math.Floor(share*float64(pool.Config().MaxConns))), 1)
	}
	g.perClient, g.slow = limit(share), limit(slowShare)
	if g.perClient > 0 || g.slow > 0 {
		g.limiter = admission.New()
	}
	return g
}

// keys are what a request of class counts against: a known cheap request nothing (it holds its connection for
// a few milliseconds, so the pool's turnover serves everyone), an unknown one its client's shares, a slow one
// also the slow operations' share.
func (g gate) keys(c requester, role string, class admission.Class, opts *Options) []admission.Key {
	if class == admission.Cheap || g.limiter == nil {
		return nil
	}
	var keys []admission.Key
	if g.perClient > 0 {
		keys = append(keys, admission.Key{Name: shareCredential + ":" + c.credential, Max: g.perClient})
		if opts.ShareByRole {
			keys = append(keys, admission.Key{Name: shareRole + ":" + role, Max: g.perClient})
		}
		if opts.ShareByAddress {
			host, _, _ := net.SplitHostPort(c.address)
			keys = append(keys, admission.Key{Name: shareAddress + ":" + host, Max: g.perClient})
		}
	}
	if class == admission.Slow && g.slow > 0 {
		keys = append(keys, g.slowKey())
	}
	return keys
}

func (g gate) slowKey() admission.Key { return admission.Key{Name: slowOperations, Max: g.slow} }

// requester is who a request counts against in the pool's shares, however it came (an HTTP request, or an
// operation on a WebSocket, whose credentials came in connection_init).
type requester struct {
	credential string // the bearer token, else the API key
	address    string // the remote address, host:port
}

func requesterOf(r *http.Request) requester {
	return requester{credential: credentialOf(auth.APIKeyFromRequest(r), r.Header.Get("Authorization")), address: r.RemoteAddr}
}

// acquire admits the request of operation op (see Options.PoolShare and Options.SlowShare) and takes a
// connection of g's pool, both within PoolTimeout and before the request's deadline (none when zero); the
// connection's release gives both back and notes how long op held the connection.
func (s *Server) acquire(c requester, g gate, role string, op admission.Operation, deadline time.Time) (held, error) {
	if wait := time.Now().Add(s.opts.PoolTimeout); deadline.IsZero() || wait.Before(deadline) {
		deadline = wait
	}
	ctx := s.waits.until(deadline)
	class := s.costs.Class(op)
	h := held{s: s, op: op, leave: func() {}}
	if keys := g.keys(c, role, class, &s.opts); len(keys) > 0 {
		var err error
		if h.leave, err = g.limiter.Admit(ctx, keys...); err != nil {
			return held{}, err
		}
	}
	conn, err := g.pool.Acquire(ctx)
	if err != nil {
		h.leave()
		return held{}, err
	}
	h.conn, h.start, h.watch = conn, time.Now(), s.watchSlow(g, class, op)
	return h, nil
}

// held is a connection acquire took for a request, with what its release needs: a value rather than a
// closure, which every request would allocate.
type held struct {
	conn  *pgxpool.Conn
	s     *Server
	op    admission.Operation
	start time.Time
	watch *slowWatch
	leave func()
}

// release gives the connection and the request's admission back.
func (h held) release() {
	h.conn.Release()
	h.s.costs.Observe(h.op, time.Since(h.start))
	h.watch.stop()
	h.leave()
}

// slowWatch turns a request that was not known to be slow into a slow one once it has held its connection
// for the threshold: its operation is then known to be slow to the requests that come next, and it counts
// against the slow operations' share until it ends, so that an operation never seen before (a new document
// each time, or the first burst of one) cannot take the whole pool for long. A watch that ended before its
// timer fired goes back to the server's pool and is armed again by a later request: its timer is made once.
type slowWatch struct {
	timer *time.Timer
	// What the timer's function needs, set before each arming.
	s         *Server
	g         gate
	op        admission.Operation
	threshold time.Duration

	mu    sync.Mutex
	ended bool
	// unhold releases the request's count against the slow operations, once it has become slow.
	unhold func()
}

// watchSlow watches a request of class holding a connection of g for op; nil when there is nothing to watch.
func (s *Server) watchSlow(g gate, class admission.Class, op admission.Operation) *slowWatch {
	if class == admission.Slow || g.slow == 0 {
		return nil
	}
	w, reused := s.watches.Get().(*slowWatch)
	if !reused {
		w = &slowWatch{s: s}
	}
	w.g, w.op, w.threshold, w.ended, w.unhold = g, op, s.costs.Threshold(), false, nil
	if reused {
		w.timer.Reset(w.threshold)
	} else {
		w.timer = time.AfterFunc(w.threshold, w.fire)
	}
	return w
}

func (w *slowWatch) fire() {
	w.s.costs.Observe(w.op, w.threshold)
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.ended {
		w.unhold = w.g.limiter.Hold(w.g.slowKey())
	}
}

// stop ends the watch when the request gives its connection back.
func (w *slowWatch) stop() {
	if w == nil {
		return
	}
	if w.timer.Stop() {
		w.s.watches.Put(w) // its function never ran and never will: the watch can be armed again
		return
	}
	w.mu.Lock()
	w.ended = true
	unhold := w.unhold
	w.mu.Unlock()
	if unhold != nil {
		unhold()
	}
}

// credentialOf is what a client authenticates with, for its share: the bearer token of authorization, else
// the API key.
func credentialOf(key, authorization string) string {
	if token, ok := auth.ParseBearer(authorization); ok {
		return token
	}
	return key
}

// acquireFailure is why a request got no connection: the client's share was taken (429), every connection
// stayed busy (503 busy), or the database could not be reached (the outage's 503).
func (s *Server) acquireFailure(pool *pgxpool.Pool, err error) *failure {
	var full *admission.Full
	switch {
	case errors.As(err, &full) && full.Key == slowOperations:
		s.opts.Metrics.Refused(obs.RefusedSlowShare)
		return &failure{status: http.StatusServiceUnavailable, retry: true, err: err,
			what:    "graphql: the slow operations' share of the pool is in use",
			message: func(id string) string { return fmt.Sprintf(msgSlowFull, full.Max, id) }}
	case errors.As(err, &full):
		s.opts.Metrics.Refused(obs.RefusedPoolShare)
		kind, _, _ := strings.Cut(full.Key, ":")
		return &failure{status: http.StatusTooManyRequests, retry: true, err: err,
			what:    "graphql: the client's share of the pool is in use",
			message: func(id string) string { return fmt.Sprintf(msgShareFull, kind, full.Max, id) }}
	case errors.Is(err, context.DeadlineExceeded) && pool.Stat().AcquiredConns() >= pool.Config().MaxConns:
		// Every connection was in use all along (else the wait was for a new connection to a server that
		// did not answer: an outage).
		s.opts.Metrics.Refused(obs.RefusedPoolTimeout)
		return &failure{status: http.StatusServiceUnavailable, retry: true, err: err,
			what:    "graphql: no connection free in time",
			message: func(id string) string { return fmt.Sprintf(msgPoolTimeout, s.opts.PoolTimeout, id) }}
	default:
		return &failure{status: http.StatusServiceUnavailable, outage: true, err: err,
			what: "graphql: acquire a connection", message: unavailableMessage}
	}
}
