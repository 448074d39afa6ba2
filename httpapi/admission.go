package httpapi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/internal/admission"
	"github.com/pgreflect/pgreflect/internal/obs"
)

// DefaultPoolTimeout is how long a request waits for a database connection by default: PostgREST's
// db-pool-acquisition-timeout.
const DefaultPoolTimeout = 10 * time.Second

// DefaultPoolShare lets one credential hold at most three quarters of a pool: the anon key's slow requests
// leave a quarter to signed-in users and to the service_role key, and one user's to everyone else, while a
// server whose traffic is one key loses only a quarter of its connections (the share is a reservation).
const DefaultPoolShare = 0.75

// The texts of the answers of a request that got no connection.
const (
	msgPoolTimeout = "Database busy: no connection free within %s (request id %s)"
	msgShareFull   = "Too many concurrent requests of this %s: at most %d of them may use the database at once (request id %s)"
)

// The kinds of client admission counts, as the prefixes of its keys.
const (
	shareRole       = "role"
	shareCredential = "API key or token"
	shareAddress    = "client address"
)

// newLimiter limits each client to share of pool's connections (at least one); share >= 1 is no limit.
func newLimiter(pool *pgxpool.Pool, share float64) *admission.Limiter {
	if share >= 1 {
		return nil
	}
	return admission.New(int(math.Floor(share * float64(pool.Config().MaxConns))))
}

// acquire admits the request (see Options.PoolShare) and takes a connection of pool, both within
// PoolTimeout; release gives both back.
func (s *Server) acquire(ctx context.Context, r *http.Request, pool *pgxpool.Pool, limiter *admission.Limiter, role string) (_ *pgxpool.Conn, release func(), err error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.PoolTimeout)
	defer cancel()
	leave := func() {}
	if limiter != nil {
		keys := []string{shareCredential + ":" + credential(r)}
		if s.opts.ShareByRole {
			keys = append(keys, shareRole+":"+role)
		}
		if s.opts.ShareByAddress {
			host, _, _ := net.SplitHostPort(r.RemoteAddr)
			keys = append(keys, shareAddress+":"+host)
		}
		if leave, err = limiter.Admit(ctx, keys...); err != nil {
			return nil, nil, err
		}
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		leave()
		return nil, nil, err
	}
	return conn, func() { conn.Release(); leave() }, nil
}

// credential is what the request authenticates with: the bearer token, else the API key.
func credential(r *http.Request) string {
	if token, ok := auth.BearerToken(r); ok {
		return token
	}
	return auth.APIKeyFromRequest(r)
}

// writeAcquireFailure answers a request that got no connection: the client's share was taken (429), every
// connection stayed busy (503 busy), or the database could not be reached (the outage's 503).
func (s *Server) writeAcquireFailure(w http.ResponseWriter, r *http.Request, pool *pgxpool.Pool, err error) {
	if r.Context().Err() != nil {
		return // the client has gone; nobody reads an answer
	}
	var full *admission.Full
	switch {
	case errors.As(err, &full):
		s.opts.Metrics.Refused(obs.RefusedPoolShare)
		kind, _, _ := strings.Cut(full.Key, ":")
		w.Header().Set("Retry-After", "1")
		s.writeInternal(w, r, http.StatusTooManyRequests, func(id string) string {
			return fmt.Sprintf(msgShareFull, kind, full.Max, id)
		}, "graphql: the client's share of the pool is in use", err)
	case errors.Is(err, context.DeadlineExceeded) && pool.Stat().AcquiredConns() >= pool.Config().MaxConns:
		// Every connection was in use all along (else the wait was for a new connection to a server that
		// did not answer: an outage).
		s.opts.Metrics.Refused(obs.RefusedPoolTimeout)
		w.Header().Set("Retry-After", "1")
		s.writeInternal(w, r, http.StatusServiceUnavailable, func(id string) string {
			return fmt.Sprintf(msgPoolTimeout, s.opts.PoolTimeout, id)
		}, "graphql: no connection free in time", err)
	default:
		s.writeInternal(w, r, http.StatusServiceUnavailable, unavailableMessage, "graphql: acquire a connection", err)
	}
}
