package obs

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Handler wraps next with what every request gets: a request id (kept from a sane X-Request-Id, echoed in the
// answer), one log line when it is answered, and its count and latency. The line has method, path (never the
// query, which may hold an apikey), status, duration, role and request id; never a header value.
func Handler(logger *slog.Logger, m *Metrics, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		req := &Request{ID: NewRequestID(r.Header.Get(RequestIDHeader))}
		w.Header().Set(RequestIDHeader, req.ID)
		sw := &statusWriter{ResponseWriter: w}
		serve(logger, sw, r.WithContext(WithRequest(r.Context(), req)), next)
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		elapsed := time.Since(start)
		route := Route(r.URL.Path)
		m.observeRequest(route, req.Operation, status, elapsed.Seconds())
		// Room for every attribute the line may get, so that appending the optional ones does not copy the
		// slice to the heap.
		attrs := append(make([]slog.Attr, 0, 10),
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", status),
			slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
			slog.String("role", req.Role),
			slog.String("request_id", req.ID),
			slog.String("client", r.RemoteAddr),
		)
		if req.Operation != "" {
			attrs = append(attrs, slog.String("operation", req.Operation))
		}
		if req.Persisted != "" {
			attrs = append(attrs, slog.String("persisted_query", req.Persisted))
		}
		// An outer handler may have started a trace span (httpapi's tracing): the line names its trace, and the
		// span gets what the line has.
		if span := trace.SpanFromContext(r.Context()); span.SpanContext().IsValid() {
			attrs = append(attrs, slog.String("trace_id", span.SpanContext().TraceID().String()))
			span.SetAttributes(attribute.String("pgreflect.request_id", req.ID), attribute.Int("http.response.status_code", status),
				attribute.String("http.route", route), attribute.String("pgreflect.role", req.Role))
			if req.Operation != "" {
				span.SetAttributes(attribute.String("graphql.operation.type", req.Operation))
			}
			if status >= 500 {
				span.SetStatus(codes.Error, http.StatusText(status))
			}
		}
		// The record is made here rather than by LogAttrs, which looks up its caller's program counter for every
		// line whether or not the handler shows the source.
		if h := logger.Handler(); h.Enabled(r.Context(), slog.LevelInfo) {
			rec := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
			rec.AddAttrs(attrs...)
			_ = h.Handle(r.Context(), rec)
		}
	})
}

// serve runs next and turns a panic that its own handler did not catch (the GraphQL handler catches its own)
// into a logged 500 that carries the request id, instead of a connection reset without a word in the log's
// request line.
func serve(logger *slog.Logger, w *statusWriter, r *http.Request, next http.Handler) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if v == http.ErrAbortHandler {
			panic(v)
		}
		id := RequestID(r.Context())
		logger.ErrorContext(r.Context(), "panic", slog.String("request_id", id), slog.Any("panic", v),
			slog.String("stack", string(debug.Stack())))
		if w.status == 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, `{"message":"Internal server error (request id %s)"}`, id)
		}
	}()
	next.ServeHTTP(w, r)
}

// Route names the route of a path for metrics: a fixed set, so that clients cannot grow the label space.
func Route(path string) string {
	switch path {
	case "/graphql/v1", "/health", "/ready", "/metrics",
		"/auth/v1/token", "/auth/v1/authorize", "/auth/v1/callback", "/auth/v1/user", "/auth/v1/logout":
		return path
	}
	switch {
	case strings.HasPrefix(path, "/auth/v1/"):
		return "/auth/v1/other"
	case strings.HasPrefix(path, "/v1/"):
		return "/v1"
	case strings.HasPrefix(path, "/console/"):
		return "/console"
	}
	return "other"
}

// statusWriter remembers the status of the answer.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (deadlines, flushing).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
