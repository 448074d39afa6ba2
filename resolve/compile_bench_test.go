package resolve

import (
	"context"
	"encoding/json"
	"testing"
)

// BenchmarkCacheHit measures the engine's own work for a request whose compilation is cached: the session
// prelude, the schema and compiled-request lookups, and writing the response from the database's result. A
// miss (parse, validate, plan, generate) is BenchmarkPlan.
func BenchmarkCacheHit(b *testing.B) {
	d := newTestDB(b, blogFixture)
	ctx := context.Background()
	session := Session{Role: "anon", Claims: map[string]any{"role": "anon", "iss": "supabase", "exp": 2000000000}, SearchPath: []string{"public"}}
	req := Request{Query: benchQuery, Variables: json.RawMessage(`{"unused": 1}`)}
	want := string(d.engine.ExecuteAs(ctx, d.conn, session, req))
	rs, err := d.engine.schemas.Get(ctx, session.Role, session.SearchPath, nil)
	if err != nil {
		b.Fatal(err)
	}
	c := d.engine.compiled.get(ctx, rs.schema, req, false, nil)
	results, err := batch{role: session.Role, stmts: c.stmts}.run(ctx, d.conn)
	if err != nil {
		b.Fatal(err)
	}
	if got := string(c.respond(results)); got != want {
		b.Fatalf("respond: %s\nwant %s", got, want)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := sessionPrelude(session, newPreludeArgs(session.Role, quoteSearchPath(session.SearchPath), "8000"), false); err != nil {
			b.Fatal(err)
		}
		rs, _ := d.engine.schemas.Get(ctx, session.Role, session.SearchPath, nil)
		c := d.engine.compiled.get(ctx, rs.schema, req, false, nil)
		c.respond(results)
	}
}
