package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/pgreflect/pgreflect/internal/obs"
	"github.com/pgreflect/pgreflect/resolve"
)

// failure is why a query or mutation has no answer, for each transport to tell in its own way: a POST or GET
// with its status, an operation on a WebSocket with an error message (or, for an outage, a close that
// graphql-ws clients retry).
type failure struct {
	status int
	// retry: the client may try again in a second (a share of the pool was in use, or every connection).
	retry bool
	// outage: the database could not be reached or did not answer.
	outage  bool
	message func(requestID string) string
	// what and err are for the log.
	what string
	err  error
}

// logFailure writes f to the log of the request (or WebSocket) ctx belongs to.
func (s *Server) logFailure(ctx context.Context, f *failure) {
	obs.Logger(ctx, s.log).ErrorContext(ctx, f.what, slog.Any("error", f.err))
}

// writeFailure answers a POST or GET that f failed.
func (s *Server) writeFailure(w http.ResponseWriter, r *http.Request, f *failure) {
	if f.retry {
		w.Header().Set("Retry-After", "1")
	}
	s.writeInternal(w, r, f.status, f.message, f.what, f.err)
}

// answerOnce answers a query or mutation of session, which src runs (Engine.Route), over every transport
// alike: it waits for admission and a connection as c (within PoolTimeout), runs within the request
// timeout, and is traced. It returns the answer or why there is none; neither when ctx ended first (the
// client has gone, and nobody reads an answer).
func (s *Server) answerOnce(ctx context.Context, c requester, src resolve.Source, op string, session resolve.Session, req resolve.Request) ([]byte, *failure) {
	g := s.gates[src.Replica]
	// Answer logs nothing with the request id (the caller does, from the failure): no resolve.WithRequestID.
	ctx, span := s.startExecute(ctx, op, req.OperationName, src.Replica > 0)
	defer span.End()
	session.ApplicationName = applicationName(span)
	if s.opts.TraceStatements {
		ctx = resolve.WithTracedStatements(ctx)
	}
	var deadline time.Time
	if s.opts.RequestTimeout > 0 {
		// The wait for a connection and the engine's statements each apply it in the context they make anyway.
		deadline = time.Now().Add(s.opts.RequestTimeout)
		ctx = resolve.WithDeadline(ctx, deadline)
	}
	held, err := s.acquire(c, g, session.Role, s.costs.Operation(req.Query, req.OperationName), deadline)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil
		}
		return nil, s.acquireFailure(g.pool, err)
	}
	defer held.release()
	body, err := src.Engine.Answer(ctx, held.conn.Conn(), session, req)
	switch {
	case err == nil:
		return body, nil
	case ctx.Err() != nil:
		return nil, nil
	case errors.Is(err, resolve.ErrUnavailable):
		// The database went away or did not answer in time: the outage's one answer, whatever pgx made of it.
		return nil, &failure{status: http.StatusServiceUnavailable, outage: true, message: unavailableMessage,
			what: "graphql: database unavailable during the request", err: err}
	default:
		// Not the client's doing and not an outage: a 500, never a 200 that looks like a GraphQL result.
		return nil, &failure{status: http.StatusInternalServerError, message: resolve.InternalErrorMessage,
			what: "graphql: internal error", err: err}
	}
}
