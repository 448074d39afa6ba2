package resolve

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/internal/devtools/benchdata"
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

// benchAccounts sizes the benchmarks' data (package benchdata, as `make bench` uses): 2,000 accounts, 4,000
// blogs and 40,000 posts, so that plans and indexes are those of a real database, not of a handful of rows.
const benchAccounts = 2000

func benchConn(b *testing.B) *pgx.Conn {
	conn := newTestDB(b, "select").conn
	if err := benchdata.Load(context.Background(), conn, benchAccounts); err != nil {
		b.Fatal(err)
	}
	return conn
}

// canonicalJSON re-encodes a JSON document with sorted keys and no spacing, so that two encodings of one
// answer compare equal.
func canonicalJSON(b *testing.B, doc []byte) []byte {
	b.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		b.Fatalf("not JSON: %v: %.300s", err, doc)
	}
	out, _ := json.Marshal(v)
	return out
}

// BenchmarkRequest and BenchmarkHandWrittenSQL run on the same data: their ratio is the engine's overhead
// over the cheapest equivalent statement (parse, plan, generate, set role and claims, jsonb assembly).
func BenchmarkRequest(b *testing.B) {
	conn := benchConn(b)
	engine := NewEngine(Options{})
	session := Session{Role: "anon", Claims: map[string]any{"role": "anon"}, SearchPath: []string{"public"}}
	req := Request{Query: benchQuery}
	var want string
	if err := conn.QueryRow(context.Background(), benchSQL).Scan(&want); err != nil {
		b.Fatal(err)
	}
	first := engine.ExecuteAs(context.Background(), conn, session, req)
	if got, exp := canonicalJSON(b, first), canonicalJSON(b, []byte(`{"data": `+want+`}`)); !bytes.Equal(got, exp) {
		b.Fatalf("engine and hand-written SQL differ:\n%.500s\n%.500s", got, exp)
	}
	b.ReportAllocs()
	for b.Loop() {
		if out := engine.ExecuteAs(context.Background(), conn, session, req); !bytes.Equal(out, first) {
			b.Fatalf("answer changed:\n%.500s\n%.500s", out, first)
		}
	}
}

func BenchmarkHandWrittenSQL(b *testing.B) {
	conn := benchConn(b)
	var first string
	if err := conn.QueryRow(context.Background(), benchSQL).Scan(&first); err != nil {
		b.Fatal(err)
	}
	if n := bytes.Count([]byte(first), []byte(`"name"`)); n != 10*benchdata.BlogsPerOwner {
		b.Fatalf("answer has %d blogs, want %d: %.300s", n, 10*benchdata.BlogsPerOwner, first)
	}
	b.ReportAllocs()
	for b.Loop() {
		var out string
		if err := conn.QueryRow(context.Background(), benchSQL).Scan(&out); err != nil {
			b.Fatal(err)
		}
		if out != first {
			b.Fatalf("answer changed:\n%.500s\n%.500s", out, first)
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
	for b.Loop() {
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
		sqlgen.Query(sqlgen.Server{}, []sqlgen.RootField{*p.sql})
	}
}

// BenchmarkCatalogLoad measures a schema cache miss: the catalog query plus building the type system.
func BenchmarkCatalogLoad(b *testing.B) {
	conn := benchConn(b)
	b.ReportAllocs()
	for b.Loop() {
		cat, err := reflect.Load(context.Background(), conn)
		if err != nil {
			b.Fatal(err)
		}
		gqlschema.Build(cat, gqlschema.Options{})
	}
}
