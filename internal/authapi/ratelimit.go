package authapi

import (
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/pgreflect/pgreflect/internal/config"
	"github.com/pgreflect/pgreflect/internal/obs"
)

// maxRateLimitClients bounds the addresses a limiter remembers (about 100 bytes each).
const maxRateLimitClients = 10000

// rateLimiter allows each client address n requests per window, as a token bucket that starts full and refills
// continuously (so n at once, then one every window/n), which is how GoTrue's limiter behaves.
type rateLimiter struct {
	limit rate.Limit
	burst int

	mu      sync.Mutex
	clients map[string]*clientBucket
}

type clientBucket struct {
	lim  *rate.Limiter
	seen time.Time
}

// newRateLimiter returns nil (no limit) for n <= 0.
func newRateLimiter(n int, window time.Duration) *rateLimiter {
	if n <= 0 {
		return nil
	}
	return &rateLimiter{limit: rate.Limit(float64(n) / window.Seconds()), burst: n, clients: map[string]*clientBucket{}}
}

// allow takes one request of client from its bucket.
func (l *rateLimiter) allow(client string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.clients[client]
	if !ok {
		if len(l.clients) >= maxRateLimitClients {
			l.evict(now)
		}
		b = &clientBucket{lim: rate.NewLimiter(l.limit, l.burst)}
		l.clients[client] = b
	}
	b.seen = now
	return b.lim.AllowN(now, 1)
}

// evict forgets clients whose bucket has refilled (forgetting them changes nothing); if a flood of addresses
// leaves none such, it forgets a tenth at random, which at worst hands those clients a full bucket again.
func (l *rateLimiter) evict(now time.Time) {
	refill := time.Duration(float64(l.burst) / float64(l.limit) * float64(time.Second))
	for k, b := range l.clients {
		if now.Sub(b.seen) >= refill {
			delete(l.clients, k)
		}
	}
	for k := range l.clients {
		if len(l.clients) < maxRateLimitClients*9/10 {
			break
		}
		delete(l.clients, k)
	}
}

// retryAfter is the wait, in whole seconds, until a refused client has one request again.
func (l *rateLimiter) retryAfter() string {
	return strconv.Itoa(int(math.Ceil(1 / float64(l.limit))))
}

// clientAddress is the address requests are counted by: the configured header's last entry (the one the
// nearest proxy wrote; earlier entries come from the client) or else the TCP peer's IP.
func clientAddress(r *http.Request, header string) string {
	if header != "" {
		if v := r.Header.Values(header); len(v) > 0 {
			last := v[len(v)-1]
			if i := strings.LastIndexByte(last, ','); i >= 0 {
				last = last[i+1:]
			}
			if last = strings.TrimSpace(last); last != "" {
				return last
			}
		}
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// rateLimits are the limiters of the sign-in routes.
type rateLimits struct {
	header    string
	refresh   *rateLimiter // POST /token?grant_type=refresh_token
	signIn    *rateLimiter // POST /token, other grants
	authorize *rateLimiter // GET /authorize
}

func newRateLimits(c config.RateLimit) rateLimits {
	window := config.RateLimitWindow * time.Second
	return rateLimits{
		header:    c.Header,
		refresh:   newRateLimiter(c.TokenRefresh, window),
		signIn:    newRateLimiter(c.SignInSignUps, window),
		authorize: newRateLimiter(c.SignInSignUps, window),
	}
}

// limit answers 429 in Supabase Auth's shape (over_request_rate_limit) once the client has used its requests,
// and otherwise passes on to next. pick chooses the limiter of a request (nil: unlimited).
func (s *Service) limit(pick func(*http.Request) *rateLimiter, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l := pick(r)
		if l == nil || l.allow(clientAddress(r, s.limits.header), s.now()) {
			next.ServeHTTP(w, r)
			return
		}
		s.opts.Metrics.Refused(obs.RefusedRateLimit)
		w.Header().Set("Retry-After", l.retryAfter())
		s.writeAPIError(w, r, newError(http.StatusTooManyRequests, codeOverRequestRateLimit, "Request rate limit reached"))
	})
}
