package resolve

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/reflect"
	"github.com/pgreflect/pgreflect/sqlgen"
)

// fanOutQuery is issue 13's denial of service: each fragment spreads the previous one twice, once directly and
// once through a relationship, so n fragments expand to about 2^n fields.
func fanOutQuery(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{ blogCollection { edges { node { ...F%d } } } }\n", n-1)
	b.WriteString("fragment F0 on Blog { id name }\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "fragment F%d on Blog { ...F%d owner { blogCollection(first: 1) { edges { node { ...F%d } } } } }\n", i, i-1, i-1)
	}
	return b.String()
}

func TestFragmentFanOutIsRefusedBeforePlanning(t *testing.T) {
	d := newTestDB(t, blogFixture)
	// Warm the schema cache so that the measured allocations are the request's own.
	d.expect(`{ blogCollection(first: 1) { edges { node { id } } } }`, `{"data": {"blogCollection": {"edges": [{"node": {"id": 1}}]}}}`)
	for _, n := range []int{20, 25} {
		q := fanOutQuery(n)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start := time.Now()
		got := d.query(q)
		elapsed := time.Since(start)
		runtime.ReadMemStats(&after)
		want := `{"errors": [{"message": "Query selects more than 10000 fields after fragments are spread"}]}`
		if got != want {
			t.Errorf("%d fragments (%d bytes):\n got: %s\nwant: %s", n, len(q), got, want)
		}
		// Planning the expansion took gigabytes and tens of seconds; refusing it takes a parse and a walk.
		if grown := after.TotalAlloc - before.TotalAlloc; grown > 16<<20 {
			t.Errorf("%d fragments: the request allocated %d MB", n, grown>>20)
		}
		// Generous, for the race detector on a busy machine: unbounded, this took 19 s and 5 GB.
		if elapsed > 5*time.Second {
			t.Errorf("%d fragments: refused after %v", n, elapsed)
		}
	}
	// Below the limits the same shape is answered: the limit refuses the expansion, not fragments.
	got := d.query(fanOutQuery(3))
	if !strings.HasPrefix(got, `{"data": {"blogCollection": {"edges": [{"node": {`) {
		t.Errorf("3 fragments: %s", got)
	}
}

// Many fields each reaching many fragments cost fields × fragments to expand, even when the
// expansion would stay small once merged: the measurement has a budget, so such a document is refused in
// bounded time instead of occupying a core.
func TestFragmentChainsUnderManyFieldsAreRefusedFast(t *testing.T) {
	d := newTestDB(t, blogFixture)
	var b strings.Builder
	b.WriteString("{ blogCollection { edges { node { ...G } } } }\nfragment G on Blog {")
	for i := 0; i < 3000; i++ {
		b.WriteString(" owner { ...F0 }")
	}
	b.WriteString(" }\n")
	b.WriteString("fragment F0 on Account { id")
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&b, " ...A%d", i)
	}
	b.WriteString(" }\n")
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&b, "fragment A%d on Account { id }\n", i)
	}
	// The message is the evidence that the walk stopped at its budget (about a ninth of what this document asks);
	// the time it takes is a benchmark's business, not a test's.
	got := d.query(b.String())
	if want := `{"errors": [{"message": "Query is too complex: spreading its fragments takes more than 1000000 steps"}]}`; got != want {
		t.Errorf("%d bytes:\n got: %s\nwant: %s", b.Len(), got, want)
	}
}

func TestLimitsAreConfigurable(t *testing.T) {
	d := newTestDB(t, blogFixture)
	wide := `{ a: accountCollection(first: 1) { edges { node { id } } } b: accountCollection(first: 1) { edges { node { id } } } }`
	cat, err := reflect.Load(context.Background(), d.conn)
	if err != nil {
		t.Fatal(err)
	}
	schema := gqlschema.Build(cat, gqlschema.Options{})
	deep := `{ blogCollection(first: 1) { edges { node { owner { blogCollection(first: 1) { edges { node { id } } } } } } } }`
	for _, tc := range []struct {
		limits Limits
		query  string
		want   string // "" means the query is answered
	}{
		{Limits{MaxFields: 7}, wide, "Query selects more than 7 fields after fragments are spread"},
		{Limits{MaxFields: 8}, wide, ""},
		{Limits{MaxAliases: 1}, wide, "Query uses more than 1 aliases"},
		{Limits{MaxAliases: -1}, wide, ""},
		{Limits{MaxDepth: 7}, deep, "Query is nested more than 7 levels deep"},
		{Limits{MaxDepth: 8}, deep, ""},
		{Limits{MaxDepth: -1, MaxFields: -1}, fanOutQuery(4), ""},
		// A mutation is refused in its own shape (data null), like its other validation errors.
		{Limits{MaxDepth: 2}, `mutation { deleteFromBlogPostCollection(atMost: 0) { records { id } } }`, "Query is nested more than 2 levels deep"},
	} {
		doc, op, vars, err := parse(tc.query, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		r := &request{schema: schema, doc: doc, op: op, variables: vars, limits: tc.limits}
		if op.Operation == "mutation" {
			_, _, err = r.planMutation()
		} else {
			_, err = r.collect(op.SelectionSet, "Query")
		}
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%+v %s:\n got: %q\nwant: %q", tc.limits, tc.query, got, tc.want)
		}
	}
}

func TestParametersPerStatementAreBounded(t *testing.T) {
	d := newTestDB(t, blogFixture)
	// 70000 rows of one column bind more parameters than Postgres accepts in a statement: refused before it
	// is sent, with a message the client can act on, and nothing written.
	rows := strings.Repeat(`{email: "x"}, `, 70000)
	got := d.query(`mutation { insertIntoAccountCollection(objects: [` + rows + `]) { affectedCount } }`)
	var n int
	if _, err := fmt.Sscanf(got, `{"data": null, "errors": [{"message": "Query needs %d parameters in one statement; the limit is 65535"}]}`, &n); err != nil || n <= 65535 {
		t.Errorf("got: %s", got)
	}
	if n := d.scalar("select count(*) from account"); n != "5" {
		t.Errorf("%s accounts after the refused insert, want 5", n)
	}
}

// The queries clients send every day stay well inside the default limits: GraphiQL's introspection query
// (graphql-js getIntrospectionQuery, descriptions on).
func TestDefaultLimitsAdmitIntrospection(t *testing.T) {
	q := IntrospectionQuery
	doc, op, _, err := parse(q, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	m := &measurer{doc: doc, fields: map[*ast.Field]shape{}, fragments: map[string]*fragmentShape{}, budget: -1}
	s := m.level(op.SelectionSet)
	// By hand: TypeRef is 26 fields 9 deep, InputValue 30, FullType 3 + 63 + 31 + 27 + 5 + 27 = 156, and
	// __schema { … } 1 + 2 + 2 + 2 + 157 + 35; the deepest path is __schema types fields args type ofType⁸.
	if s.fields != 199 || s.depth != 14 {
		t.Errorf("measured %+v", s)
	}
	if err := (Limits{}).checkDocument(doc, op); err != nil {
		t.Error(err)
	}
}

// TestThousandsOfAliasesInOneObject: with the alias limit lifted, one object of 5,000 aliased fields is answered.
// The object's text is concatenated in Postgres, and a chain of 10,000 concatenations is deeper than Postgres'
// stack allows ("stack depth limit exceeded"); sqlgen nests it in halves.
func TestThousandsOfAliasesInOneObject(t *testing.T) {
	d := newTestDB(t, blogFixture)
	d.engine = NewEngine(Options{Limits: Limits{MaxAliases: -1, MaxFields: -1}})
	const n = 5000
	var q, want strings.Builder
	q.WriteString(`{ accountCollection(first: 1) { edges { node {`)
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("a%d", i)
		fmt.Fprintf(&q, " %s: id", keys[i])
	}
	q.WriteString(` } } } }`)
	sort.Slice(keys, func(i, j int) bool { return sqlgen.JSONBKeyLess(keys[i], keys[j]) })
	want.WriteString(`{"data": {"accountCollection": {"edges": [{"node": {`)
	for i, k := range keys {
		if i > 0 {
			want.WriteString(", ")
		}
		fmt.Fprintf(&want, `"%s": 1`, k)
	}
	want.WriteString(`}}]}}}`)
	if got := d.query(q.String()); got != want.String() {
		t.Errorf("got %.300s", got)
	}
}
