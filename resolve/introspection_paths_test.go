package resolve

import (
	"bytes"
	"context"
	"testing"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/internal/devtools/benchdata"
	"github.com/pgreflect/pgreflect/reflect"
)

// introFullQuery is graphql-js's getIntrospectionQuery with every option on (descriptions, specifiedByUrl,
// directiveIsRepeatable, schemaDescription, inputValueDeprecation, oneOf), as GraphiQL's newest versions ask.
const introFullQuery = `query IntrospectionQuery { __schema { description queryType { name kind } mutationType { name kind }
		subscriptionType { name kind } types { ...FullType } directives { name description isRepeatable locations
		args(includeDeprecated: true) { ...InputValue } } } }
	fragment FullType on __Type { kind name description specifiedByURL isOneOf
		fields(includeDeprecated: true) { name description args(includeDeprecated: true) { ...InputValue } type { ...TypeRef }
		isDeprecated deprecationReason } inputFields(includeDeprecated: true) { ...InputValue } interfaces { ...TypeRef }
		enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason } possibleTypes { ...TypeRef } }
	fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue isDeprecated deprecationReason }
	fragment TypeRef on __Type { kind name ofType { kind name ofType { kind name ofType { kind name ofType {
		kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } } } }`

// introOddQueries are selections off the standard query's track: aliases, __typename, fragments on the meta
// types, directives, __type; and failures, which the general path answers (its error is the first in the
// document's order, where the fast path goes in the answer's key order).
var introOddQueries = []struct {
	name, query string
	fails       bool
}{
	{name: "aliases and typenames", query: `{ s: __schema { __typename q: queryType { n: name k: kind __typename }
		all: types { __typename name x: name fields { __typename name t: type { __typename kind ofType { name } } }
		enumValues { __typename name } inputFields { __typename name defaultValue } } } }`},
	{name: "fragments and directives", query: `query { __schema { ... on __Schema { types { ...T } }
		directives { name locations args { name type { name ofType { name } } } __typename }
		types @skip(if: true) { name } } } fragment T on __Type { name ... on __Type { kind @include(if: true)
		possibleTypes { name } interfaces { name } } description @skip(if: false) }`},
	{name: "the same reference under two selections", query: `{ __schema { types { fields { a: type { name } b: type { kind ofType { kind } } } } } }`},
	{name: "__type and __schema", query: `{ __type(name: "Query") { name fields { name args { name type { kind name ofType { name } } } } }
		__schema { queryType { name } } }`},
	{name: "__type of a meta type", query: `{ __type(name: "__Type") { name kind fields { name type { kind name ofType { kind name } } } } }`},
	{name: "__type unknown", query: `{ __type(name: "NoSuchType") { name } }`},
	// lists of many types outside __schema.types, and two of them, each written in parts by the root's workers
	{name: "the implementations of Node", query: `{ __type(name: "Node") { possibleTypes { name fields { name } } } }`},
	{name: "two type lists", query: `{ __schema { a: types { name } b: types { kind name possibleTypes { name } } } }`},
	{name: "unknown field", query: `{ __schema { types { name bogus } } }`, fails: true},
	{name: "two failures in one object", query: `{ __schema { types { aaaaaaaaaa: fields { nope } b: bogus } } }`, fails: true},
	{name: "unknown field of a nested type", query: `{ __schema { types { fields { type { ofType { nope } } } } } }`, fails: true},
	{name: "unknown field of __type", query: `{ __type(name: "Query") { name wrong } }`, fails: true},
}

// introBothPaths answers each introspection root field of query on schema by the fast path, its type lists
// written by workers goroutines, and by the general path, and fails the test unless both give the same bytes
// or the same error. fast reports whether the document's every root field answered by the fast path (which
// writes what it sized).
func introBothPaths(t *testing.T, schema *gqlschema.Schema, query string, workers int) (fast bool, failed bool) {
	t.Helper()
	shown := *schema
	shown.Introspection = true
	doc, op, variables, err := parse(query, "", nil)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	r := &request{schema: &shown, doc: doc, op: op, variables: variables, introWorkers: workers}
	roots, err := r.collect(op.SelectionSet, "Query")
	if err != nil {
		t.Fatalf("collect: %v", err)
	}
	fast = true
	for _, sel := range roots {
		var got, want any
		var gotErr, wantErr error
		switch sel.Name {
		case "__schema":
			got, gotErr = r.resolveSchema(sel)
			want, wantErr = newIntrospector(r).schemaValue(sel)
		case "__type":
			got, gotErr = r.resolveType(sel)
			want, wantErr = newIntrospector(r).typeValue(sel, gqlschema.Named(sel.Args["name"].(string)))
		default:
			t.Fatalf("not an introspection field: %s", sel.Name)
		}
		if gotErr != nil || wantErr != nil {
			if gotErr == nil || wantErr == nil || gotErr.Error() != wantErr.Error() {
				t.Fatalf("%s: the fast path's error %v, the general path's %v", sel.Key, gotErr, wantErr)
			}
			failed = true
			continue
		}
		if _, ok := got.(*introAnswer); !ok {
			fast = false
		}
		var gotJSON, wantJSON bytes.Buffer
		size := jsonLen(got)
		gotJSON.Grow(size)
		gotJSON.WriteString("prefix ") // the answer is written after the response's beginning
		writeJSON(&gotJSON, got)
		writeJSON(&wantJSON, want)
		gotBytes := bytes.TrimPrefix(gotJSON.Bytes(), []byte("prefix "))
		if len(gotBytes) != size {
			t.Errorf("%s: the fast path sized %d bytes and wrote %d", sel.Key, size, len(gotBytes))
		}
		if !bytes.Equal(gotBytes, wantJSON.Bytes()) {
			at := 0
			for at < min(len(gotBytes), wantJSON.Len()) && gotBytes[at] == wantJSON.Bytes()[at] {
				at++
			}
			t.Fatalf("%s: the paths differ at byte %d of %d/%d:\nfast:    %.300s\ngeneral: %.300s", sel.Key, at,
				len(gotBytes), wantJSON.Len(), gotBytes[at:], wantJSON.Bytes()[at:])
		}
	}
	return fast, failed
}

// introCheckPaths runs the standard and full graphql-js queries and the odd selections against schema, the
// fast path on one goroutine and on three.
func introCheckPaths(t *testing.T, schema *gqlschema.Schema) {
	t.Helper()
	for _, workers := range []int{1, 3} {
		for _, q := range []string{IntrospectionQuery, introFullQuery} {
			if fast, failed := introBothPaths(t, schema, q, workers); !fast || failed {
				t.Errorf("%d goroutines: the graphql-js query did not take the fast path (fast %v, failed %v)", workers, fast, failed)
			}
		}
		for _, q := range introOddQueries {
			if _, failed := introBothPaths(t, schema, q.query, workers); failed != q.fails {
				t.Errorf("%d goroutines, %s: failed %v, want %v", workers, q.name, failed, q.fails)
			}
		}
	}
}

func introLoadSchema(t testing.TB, d *testDB) *gqlschema.Schema {
	t.Helper()
	cat, err := reflect.Load(context.Background(), d.conn)
	if err != nil {
		t.Fatal(err)
	}
	return gqlschema.Build(cat, gqlschema.Options{})
}

// TestIntrospectionFastPathEqualsGeneralPath checks that the answer written without a tree of values is, byte
// for byte, the one written from the tree, on the introspection fixtures and a generated catalog of issue 18's
// shape.
func TestIntrospectionFastPathEqualsGeneralPath(t *testing.T) {
	for _, tc := range []struct{ name, setup, searchPath string }{
		{name: "demo", setup: introDemoSQL},
		{name: "subscriptions", setup: introDemoSQL + `comment on table blog is e'@graphql({"features": ["subscriptions"]})';`},
		{name: "every type", setup: introAllTypesSQL},
		{name: "hidden schema", setup: introHiddenSQL, searchPath: "public, private"},
		{name: "no tables", setup: `comment on schema public is '@graphql({"introspection": true})';`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newTestDB(t, tc.setup)
			if tc.searchPath != "" {
				d.exec("set search_path = " + tc.searchPath)
			}
			introCheckPaths(t, introLoadSchema(t, d))
		})
	}
	t.Run("generated catalog", func(t *testing.T) {
		d := newTestDB(t, "")
		if err := benchdata.Catalog(context.Background(), d.conn, 200); err != nil {
			t.Fatal(err)
		}
		introCheckPaths(t, introLoadSchema(t, d))
	})
}
