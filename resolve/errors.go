package resolve

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgreflect/pgreflect/reflect"
	"github.com/pgreflect/pgreflect/sqlgen"
)

type requestIDKey struct{}

// WithRequestID returns a context carrying the request id that internal failures are logged and answered
// with.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

type deadlineKey struct{}

// WithDeadline returns a context carrying a deadline for all of a request's database work (the schema load and
// the statements), beside the statement timeout: Answer applies the sooner of the two to the connection's
// socket (setSocketDeadline), where a context.WithDeadline of the caller's would cost every request a timer
// and a context more.
func WithDeadline(ctx context.Context, deadline time.Time) context.Context {
	return context.WithValue(ctx, deadlineKey{}, deadline)
}

// withBudget returns ctx bounded by d from now (none when d <= 0) and by the deadline WithDeadline put in ctx,
// whichever comes first, or ctx itself when neither applies.
func withBudget(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	deadline, bounded := budgetDeadline(ctx, d)
	if !bounded {
		return ctx, func() {}
	}
	return context.WithDeadline(ctx, deadline)
}

// budgetDeadline is the sooner of d from now (none when d <= 0) and the deadline WithDeadline put in ctx;
// bounded is false when neither applies.
func budgetDeadline(ctx context.Context, d time.Duration) (deadline time.Time, bounded bool) {
	deadline, bounded = ctx.Value(deadlineKey{}).(time.Time)
	if d > 0 {
		if own := time.Now().Add(d); !bounded || own.Before(deadline) {
			deadline, bounded = own, true
		}
	}
	return deadline, bounded
}

// setSocketDeadline bounds all reading and writing on conn by deadline until clearSocketDeadline. For the
// statements of a request this does what a deadline context does under pgx's default context watcher, which
// sets the socket's deadline when the context ends and so closes the connection, but without the context, its
// timer and the watch that every request would pay for (the binary's connections keep such a far deadline
// without a timer at all: internal/connwatch). Two functions rather than one returning its reset: the reset, a
// closure, would be one more allocation every request.
func setSocketDeadline(conn *pgx.Conn, deadline time.Time) {
	_ = conn.PgConn().Conn().SetDeadline(deadline)
}

// clearSocketDeadline lifts setSocketDeadline's deadline. It leaves a connection that a failure closed alone:
// pgx's closing goroutine has set a deadline of its own for its last words to the server.
func clearSocketDeadline(conn *pgx.Conn) {
	if !conn.IsClosed() {
		_ = conn.PgConn().Conn().SetDeadline(time.Time{})
	}
}

// RequestID returns the request id WithRequestID put in ctx, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// internal logs a failure that is not the client's doing and returns the error the client sees instead: a
// generic message with the request id, never the failure's text (addresses, internal messages).
func (e *Engine) internal(ctx context.Context, err error) error {
	id := RequestID(ctx)
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		// The client went away or its deadline passed; nobody reads the answer.
		e.opts.Logger.InfoContext(ctx, "graphql: request cancelled", "request_id", id, "err", err)
	} else {
		e.opts.Logger.ErrorContext(ctx, "graphql: internal error", "request_id", id, "err", err)
	}
	return errInternal(id)
}

// databaseError answers a failed statement: Postgres' own message verbatim, as pg_graphql passes it on (it is
// about the request: a constraint, a permission, a timeout).
func databaseError(pgErr *pgconn.PgError) error {
	if msg, ok := sqlgen.TooManyFailure(pgErr.Code, pgErr.Message); ok {
		return errPassThrough(msg)
	}
	return errPassThrough(pgErr.Message)
}

// statementFailure is the error a failed statement gives where every failure is answered in the GraphQL
// shape (live queries): Postgres' own message, else the internal error.
func (e *Engine) statementFailure(ctx context.Context, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return databaseError(pgErr)
	}
	return e.internal(ctx, err)
}

// schemaAnswer is schemaFailure where every failure is answered in the GraphQL shape (Execute, live queries):
// an internal failure gets the internal error's body.
func (e *Engine) schemaAnswer(ctx context.Context, req Request, err error) []byte {
	if body := schemaFailure(req, err); body != nil {
		return body
	}
	return errorsOnly(e.internal(ctx, err))
}

// schemaFailure answers a request whose schema could not be loaded, or returns nil for a failure that is
// internal. A document that does not parse is reported first, as it would be with a schema.
func schemaFailure(req Request, err error) []byte {
	if _, _, _, perr := parse(req.Query, req.OperationName, req.Variables); perr != nil {
		return errorsOnly(perr)
	}
	var je *reflect.DirectiveJSONError
	if errors.As(err, &je) {
		return dataNull(errPassThrough(je.Error()))
	}
	var de *reflect.DirectiveError
	if errors.As(err, &de) {
		return errorsOnly(errPassThrough(de.Error()))
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return errorsOnly(errPassThrough(pgErr.Message))
	}
	return nil
}
