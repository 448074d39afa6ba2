// Package obs is the observability shared by the HTTP packages: the request id and what a request learns about
// itself (its role, its GraphQL operation type), the one log line per request, and the Prometheus metrics of a
// server. Everything is per server: the metrics live in a registry the server creates, never the global one.
package obs

import (
	"context"
	"encoding/binary"
	"log/slog"
	"math/rand/v2"
	"net/http"

	"github.com/google/uuid"
)

// Request is what one HTTP request has learnt about itself while being served; inner handlers fill in Role and
// Operation for the request's log line and metrics.
type Request struct {
	ID        string
	Role      string
	Operation string // query or mutation on /graphql/v1
	// Persisted is what an automatic persisted query came to (PersistedHit, PersistedMiss,
	// PersistedRegistered), "" for a request without one.
	Persisted string
}

// What a request's automatic persisted query came to, in its log line.
const (
	PersistedHit        = "hit"        // the hash named a stored document
	PersistedMiss       = "miss"       // the hash is unknown: the client sends the document next
	PersistedRegistered = "registered" // the document came with its hash and is stored
)

// SetPersisted records what the request's persisted query came to (for its log line).
func SetPersisted(ctx context.Context, outcome string) {
	if req := FromContext(ctx); req != nil {
		req.Persisted = outcome
	}
}

type requestKey struct{}

// WithRequest returns ctx carrying req.
func WithRequest(ctx context.Context, req *Request) context.Context {
	return context.WithValue(ctx, requestKey{}, req)
}

// FromContext returns the request ctx carries, or nil.
func FromContext(ctx context.Context) *Request {
	req, _ := ctx.Value(requestKey{}).(*Request)
	return req
}

// RequestID is the id of the request ctx carries, or "".
func RequestID(ctx context.Context) string {
	if req := FromContext(ctx); req != nil {
		return req.ID
	}
	return ""
}

// SetRole records the role a request runs as (for its log line).
func SetRole(ctx context.Context, role string) {
	if req := FromContext(ctx); req != nil {
		req.Role = role
	}
}

// RequestIDHeader carries the request id in both directions: a proxy in front may have chosen it already.
const RequestIDHeader = "X-Request-Id"

// maxRequestIDLength bounds an incoming id; a longer one is replaced.
const maxRequestIDLength = 128

// NewRequestID keeps an incoming id when it is sane (short, and only characters that cannot forge a log line
// or a header), and otherwise makes a random one.
func NewRequestID(incoming string) string {
	if incoming != "" && len(incoming) <= maxRequestIDLength && sane(incoming) {
		return incoming
	}
	return newUUID().String()
}

// newUUID is a random (version 4) UUID from the runtime's per-thread generator rather than crypto/rand (a
// system call or a lock per request): a request id must be unique, not secret.
func newUUID() uuid.UUID {
	var u uuid.UUID
	binary.LittleEndian.PutUint64(u[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(u[8:], rand.Uint64())
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return u
}

func sane(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}

// Ensure returns r carrying a Request, keeping the one an outer handler made; handlers that may be mounted on
// their own (the auth service) call it so their errors always have an id to carry.
func Ensure(w http.ResponseWriter, r *http.Request) (*http.Request, *Request) {
	if req := FromContext(r.Context()); req != nil {
		return r, req
	}
	req := &Request{ID: NewRequestID(r.Header.Get(RequestIDHeader))}
	w.Header().Set(RequestIDHeader, req.ID)
	return r.WithContext(WithRequest(r.Context(), req)), req
}

// Logger returns a logger for the request: logger with the request id attached when ctx carries one.
func Logger(ctx context.Context, logger *slog.Logger) *slog.Logger {
	if id := RequestID(ctx); id != "" {
		return logger.With(slog.String("request_id", id))
	}
	return logger
}
