package resolve

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

type tracedStatementsKey struct{}

// WithTracedStatements returns a context whose trace span, when it records, gets the text of the statements
// the request runs (db.query.text). The text holds no values: they are bound parameters.
func WithTracedStatements(ctx context.Context) context.Context {
	return context.WithValue(ctx, tracedStatementsKey{}, true)
}

// noteStatements puts the statements' text on the span of ctx when WithTracedStatements asked for it.
func noteStatements(ctx context.Context, stmts []statement) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() || ctx.Value(tracedStatementsKey{}) == nil || len(stmts) == 0 {
		return
	}
	texts := make([]string, len(stmts))
	for i, s := range stmts {
		texts[i] = s.sql
	}
	span.SetAttributes(attribute.String("db.query.text", strings.Join(texts, ";\n")))
}
