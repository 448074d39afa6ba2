package httpapi

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/pgreflect/pgreflect/resolve"
)

// tracerName names the spans' instrumentation scope.
const tracerName = "github.com/pgreflect/pgreflect/internal/httpapi"

// traced starts a server span for each request, as the child of the client's span when the request carries a
// W3C traceparent. obs.Handler (inside) adds the request id, status and role to it. The span has the method
// and path, never the query string (which may hold an apikey) or a header value.
func traced(tracer trace.Tracer, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := tracer.Start(ctx, r.Method+" "+r.URL.Path, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("url.path", r.URL.Path)))
		defer span.End()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// endAuthenticate ends the span of a request's API key and JWT checks with their outcome: the role, or why
// the credentials were refused. Never the key or the token.
func endAuthenticate(span trace.Span, session resolve.Session, status int, err error) {
	defer span.End()
	if !span.IsRecording() {
		return // nobody keeps what would be said (and the attributes would be made for nothing)
	}
	switch {
	case err != nil:
		span.SetStatus(codes.Error, "the roles could not be read")
	case status != 0:
		span.SetAttributes(attribute.Int("pgreflect.refused_status", status))
		span.SetStatus(codes.Error, "credentials refused")
	default:
		span.SetAttributes(attribute.String("pgreflect.role", session.Role))
	}
}

// startSpan starts a span of the request in ctx; with tracing off it starts nothing and returns a no-op span,
// so that tracing off costs a nil check: not a look through ctx, whose span, if an embedding program's handler
// put one there, is not pgreflect's to annotate or to end.
func (s *Server) startSpan(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if s.tracer == nil {
		return ctx, noop.Span{}
	}
	return s.tracer.Start(ctx, name, opts...)
}

// applicationName is what a request's transaction shows Postgres of the trace (pg_stat_activity,
// log_line_prefix %a), "" when the request is not traced: "pgreflect <trace id>-<span id>", 59 bytes, within
// application_name's 63.
func applicationName(span trace.Span) string {
	sc := span.SpanContext()
	if !sc.IsValid() || !sc.IsSampled() {
		return ""
	}
	return "pgreflect " + sc.TraceID().String() + "-" + sc.SpanID().String()
}

// startExecute starts the span of a request's round trip to Postgres (compile when not cached, then the
// statements).
func (s *Server) startExecute(ctx context.Context, op, name string, replica bool) (context.Context, trace.Span) {
	if s.tracer == nil {
		return ctx, noop.Span{} // off: not even the attributes (see startSpan)
	}
	return s.tracer.Start(ctx, "graphql.execute", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("db.system.name", "postgresql"), attribute.String("graphql.operation.type", op),
		attribute.String("graphql.operation.name", name), attribute.Bool("pgreflect.replica", replica)))
}
