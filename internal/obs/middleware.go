package obs

import (
	"context"
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
		line := requestLine{method: r.Method, path: r.URL.Path, status: status,
			micros: elapsed.Microseconds(), role: req.Role, id: req.ID, client: r.RemoteAddr,
			operation: req.Operation, persisted: req.Persisted}
		// An outer handler may have started a trace span (httpapi's tracing): the line names its trace, and the
		// span gets what the line has.
		if span := trace.SpanFromContext(r.Context()); span.SpanContext().IsValid() {
			line.traceID = span.SpanContext().TraceID().String()
			span.SetAttributes(attribute.String("pgreflect.request_id", req.ID), attribute.Int("http.response.status_code", status),
				attribute.String("http.route", route), attribute.String("pgreflect.role", req.Role))
			if req.Operation != "" {
				span.SetAttributes(attribute.String("graphql.operation.type", req.Operation))
			}
			if status >= 500 {
				span.SetStatus(codes.Error, http.StatusText(status))
			}
		}
		line.log(r.Context(), logger.Handler())
	})
}

// requestLine is what the log line of a request says.
type requestLine struct {
	method, path                  string
	status                        int
	micros                        int64 // the duration, logged as duration_ms
	role, id, client              string
	operation, persisted, traceID string
}

// log writes the line to h: straight in the text handler's format where h is NewTextHandler's and every value
// is written as it is (a busy server's most frequent line, without a record and its attributes), else as a
// record. The record is made here rather than by LogAttrs, which looks up its caller's program counter for every
// line whether or not the handler shows the source.
func (l *requestLine) log(ctx context.Context, h slog.Handler) {
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	now := time.Now()
	if text, ok := h.(*textHandler); ok && text.writeRequestLine(now, l) {
		return
	}
	// Room for every attribute, so that appending the optional ones does not copy the slice to the heap.
	attrs := append(make([]slog.Attr, 0, 10), slog.String("method", l.method), slog.String("path", l.path),
		slog.Int("status", l.status), slog.Float64("duration_ms", float64(l.micros)/1000), slog.String("role", l.role),
		slog.String("request_id", l.id), slog.String("client", l.client))
	for _, a := range l.optional() {
		if a.value != "" {
			attrs = append(attrs, slog.String(a.key, a.value))
		}
	}
	rec := slog.NewRecord(now, slog.LevelInfo, "request", 0)
	rec.AddAttrs(attrs...)
	_ = h.Handle(ctx, rec)
}

// optional are the line's attributes that it has only when they are not empty, in their order.
func (l *requestLine) optional() [3]struct{ key, value string } {
	return [3]struct{ key, value string }{{"operation", l.operation}, {"persisted_query", l.persisted}, {"trace_id", l.traceID}}
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
