package benchcmp

import (
	"os"
	"slices"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/pgreflect/pgreflect/internal/devtools/benchdata"
	"github.com/pgreflect/pgreflect/internal/sdl"
)

// postGraphile5Schema is the SDL PostGraphile v5 generates for the benchmark's database, printed by
// `node server.mjs --print-schema` in testdata/bench/postgraphile5 (run it again when benchdata's schema
// changes), so that the v5 documents are checked without Node.
const postGraphile5Schema = "../../../testdata/bench/postgraphile5/schema.graphql"

// Every v5 document must be valid against v5's schema, and must not select v5's id, the global node id (an
// ID, where pg_graphql's id is the primary key): the key is rowId, aliased to id.
func TestPostGraphile5DocumentsMatchItsSchema(t *testing.T) {
	src, err := os.ReadFile(postGraphile5Schema)
	if err != nil {
		t.Fatal(err)
	}
	schema, err := sdl.Parse(postGraphile5Schema, src)
	if err != nil {
		t.Fatal(err)
	}
	mapped := 0
	for _, q := range Queries(benchdata.Full) {
		if q.PostGraphile5 == "" {
			continue
		}
		mapped++
		doc, errs := gqlparser.LoadQueryWithRules(schema, q.PostGraphile5, nil) // nil: the default rules
		if len(errs) > 0 {
			t.Errorf("%s: not valid against PostGraphile v5's schema: %v", q.Name, errs)
			continue
		}
		for _, op := range doc.Operations {
			walkFields(op.SelectionSet, func(f *ast.Field) {
				if f.Definition != nil && f.Definition.Type.Name() == "ID" {
					t.Errorf("%s: %s selects v5's node id (%s), not the primary key rowId", q.Name, f.Alias, f.Definition.Type)
				}
			})
		}
	}
	// Q1–Q5 and Q8: everything v4 is asked, v5 is asked too.
	if mapped != 6 {
		t.Errorf("%d queries have a v5 document, want 6 (Q1–Q5, Q8)", mapped)
	}
}

// Each PostGraphile document must ask for the same response keys as pg_graphql's, once the connection and
// payload wrappers that Rows takes away are gone: otherwise the answers compare unequal, or equal by luck.
func TestDialectsAskForTheSameRows(t *testing.T) {
	for _, q := range Queries(benchdata.Full) {
		want := responseShape(t, q.PgGraphQL)
		for _, d := range []Dialect{PostGraphile4, PostGraphile5} {
			doc := q.Document(d)
			if doc == "" {
				continue
			}
			if got := responseShape(t, doc); !slices.Equal(got, want) {
				t.Errorf("%s dialect %d: response keys\n%v\nwant (pg_graphql's)\n%v", q.Name, d, got, want)
			}
		}
	}
}

// responseShape lists the response keys of a document as paths, leaving out the wrappers that Rows removes
// (edges and node, nodes, records, and PostGraphile's mutation payload blogPost).
func responseShape(t *testing.T, document string) []string {
	t.Helper()
	doc, err := parser.ParseQuery(&ast.Source{Input: document})
	if err != nil {
		t.Fatalf("%v in\n%s", err, document)
	}
	var paths []string
	var walk func(prefix string, set ast.SelectionSet)
	walk = func(prefix string, set ast.SelectionSet) {
		for _, sel := range set {
			f, ok := sel.(*ast.Field)
			if !ok {
				t.Fatalf("the benchmark's documents select fields only: %T in\n%s", sel, document)
			}
			path := prefix
			switch f.Alias {
			case "edges", "node", "nodes", "records", "blogPost":
			default:
				path = prefix + "/" + f.Alias
				paths = append(paths, path)
			}
			walk(path, f.SelectionSet)
		}
	}
	for _, op := range doc.Operations {
		walk("", op.SelectionSet)
	}
	slices.Sort(paths)
	return paths
}

func walkFields(set ast.SelectionSet, visit func(*ast.Field)) {
	for _, sel := range set {
		if f, ok := sel.(*ast.Field); ok {
			visit(f)
			walkFields(f.SelectionSet, visit)
		}
	}
}
