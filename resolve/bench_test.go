package resolve

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/reflect"
	"github.com/pgreflect/pgreflect/sqlgen"
)

// benchQuery is pg_graphql's published benchmark request, with one level of nesting added.
const benchQuery = `{ accountCollection(first: 10) { edges { node { id email blogCollection { edges { node { name } } } } } } }`

// benchSQL returns the same JSON as benchQuery, written by hand: the floor any engine pays.
const benchSQL = `select jsonb_build_object('accountCollection', jsonb_build_object('edges', coalesce((
  select jsonb_agg(jsonb_build_object('node', jsonb_build_object('id', a.id, 'email', a.email,
    'blogCollection', jsonb_build_object('edges', coalesce((select jsonb_agg(jsonb_build_object('node',
      jsonb_build_object('name', b.name)) order by b.id) from blog b where b.owner_id = a.id), '[]'::jsonb)))) order by a.id)
  from (select * from account order by id limit 10) a), '[]'::jsonb)))::text`

func benchConn(b *testing.B) *pgx.Conn { return newTestDB(b, blogFixture).conn }

// BenchmarkRequest and BenchmarkHandWrittenSQL run on the same data: their ratio is the engine's overhead
// over the cheapest equivalent statement (parse, plan, generate, set role and claims, jsonb assembly).
func BenchmarkRequest(b *testing.B) {
	conn := benchConn(b)
	engine := NewEngine(Options{})
	session := Session{Role: "anon", Claims: map[string]any{"role": "anon"}, SearchPath: []string{"public"}}
	req := Request{Query: benchQuery}
	engine.ExecuteAs(context.Background(), conn, session, req)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		engine.ExecuteAs(context.Background(), conn, session, req)
	}
}

func BenchmarkHandWrittenSQL(b *testing.B) {
	conn := benchConn(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var out string
		if err := conn.QueryRow(context.Background(), benchSQL).Scan(&out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlan measures the engine's own work for a request, without the database.
func BenchmarkPlan(b *testing.B) {
	conn := benchConn(b)
	cat, err := reflect.Load(context.Background(), conn)
	if err != nil {
		b.Fatal(err)
	}
	schema := gqlschema.Build(cat, gqlschema.Options{})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		doc, op, vars, err := parse(benchQuery, "", nil)
		if err != nil {
			b.Fatal(err)
		}
		r := &request{schema: schema, doc: doc, op: op, variables: vars}
		roots, err := r.collect(op.SelectionSet, "Query")
		if err != nil {
			b.Fatal(err)
		}
		p, err := r.planQueryField(roots[0])
		if err != nil {
			b.Fatal(err)
		}
		sqlgen.Query([]sqlgen.RootField{*p.sql})
	}
}

// BenchmarkCatalogLoad measures a schema cache miss: the catalog query plus building the type system.
func BenchmarkCatalogLoad(b *testing.B) {
	conn := benchConn(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cat, err := reflect.Load(context.Background(), conn)
		if err != nil {
			b.Fatal(err)
		}
		gqlschema.Build(cat, gqlschema.Options{})
	}
}
