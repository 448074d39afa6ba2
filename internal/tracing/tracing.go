// Package tracing sets up OpenTelemetry traces from the standard OTEL_* environment variables: with an OTLP
// endpoint configured, spans go to it over OTLP/HTTP in batches; without one there is no provider, and the
// servers skip tracing altogether (BenchmarkTracingOff in httpapi measures what is left).
package tracing

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// Enabled reports whether getenv configures traces: an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), OTEL_TRACES_EXPORTER not "none" and OTEL_SDK_DISABLED not "true".
func Enabled(getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || getenv("OTEL_TRACES_EXPORTER") == "none" {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Statements reports whether getenv asks for the SQL text of requests in their spans:
// PGREFLECT_TRACE_STATEMENTS=true (never values, which are bound parameters).
func Statements(getenv func(string) string) bool {
	return strings.EqualFold(getenv("PGREFLECT_TRACE_STATEMENTS"), "true")
}

// Setup returns the tracer provider the environment asks for, nil when it asks for none, and the function that
// flushes and stops it (call it on shutdown, so that the last spans are sent). The exporter reads its own OTEL_EXPORTER_OTLP_*
// variables (endpoint, headers, timeout); the SDK reads OTEL_TRACES_SAMPLER and OTEL_RESOURCE_ATTRIBUTES, and
// OTEL_SERVICE_NAME names the service (default pgreflect).
func Setup(ctx context.Context, version string) (trace.TracerProvider, func(context.Context) error, error) {
	if !Enabled(os.Getenv) {
		return nil, func(context.Context) error { return nil }, nil
	}
	exporter, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("OpenTelemetry: the OTLP exporter: %w", err)
	}
	name := os.Getenv("OTEL_SERVICE_NAME")
	if name == "" {
		name = "pgreflect"
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		semconv.ServiceName(name), semconv.ServiceVersion(version)))
	if err != nil {
		return nil, nil, fmt.Errorf("OpenTelemetry: the resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	return tp, tp.Shutdown, nil
}

// Transport is base with a client span around each call, the child of the span in the request's context,
// and the W3C traceparent sent along: for the server's calls to identity providers. The span has the method,
// host and path, never the query string or a header value (which may hold a code or a secret). tp nil: base.
func Transport(tp trace.TracerProvider, base http.RoundTripper) http.RoundTripper {
	if tp == nil {
		return base
	}
	return &transport{tracer: tp.Tracer("github.com/pgreflect/pgreflect/internal/tracing"), base: base}
}

type transport struct {
	tracer trace.Tracer
	base   http.RoundTripper
}

func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx, span := t.tracer.Start(r.Context(), r.Method+" "+r.URL.Host, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("server.address", r.URL.Host),
			attribute.String("url.path", r.URL.Path)))
	defer span.End()
	r = r.Clone(ctx) // a RoundTripper must not change the caller's request
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(r.Header))
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		span.SetStatus(codes.Error, "the call failed")
		return nil, err
	}
	span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	if resp.StatusCode >= 500 {
		span.SetStatus(codes.Error, http.StatusText(resp.StatusCode))
	}
	return resp, nil
}
