package resolve

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/reflect"
	"github.com/pgreflect/pgreflect/sqlgen"
)

var (
	fuzzSchemaOnce sync.Once
	fuzzSchema     *gqlschema.Schema
)

// FuzzRequest feeds arbitrary documents and variables through parsing, validation, planning and SQL
// generation (everything but the database): whatever comes in, the engine must answer with an error or a
// plan, never panic.
func FuzzRequest(f *testing.F) {
	for _, seed := range []struct{ q, v string }{
		{`{ accountCollection(first: 2, after: "WzFd", filter: {or: [{id: {in: [1, 2]}}, {email: {ilike: "%a"}}]}, orderBy: [{email: DescNullsFirst}]) { totalCount edges { cursor node { nodeId id blogCollection(last: 1) { pageInfo { hasNextPage } edges { node { owner { email } } } } } } } }`, `{}`},
		{`query Q($f: AccountFilter, $n: Int = 3) { accountCollection(filter: $f, first: $n) { edges { node { ...F } } } } fragment F on Account { id email @skip(if: false) }`, `{"f": {"id": {"eq": 1}}, "n": 2}`},
		{`{ node(nodeId: "WyJwdWJsaWMiLCAiYmxvZyIsIDFd") { nodeId ... on Blog { name } } accountByPk(id: 1) { id } }`, ``},
		{`mutation { insertIntoAccountCollection(objects: [{email: "a"}, {}]) { affectedCount records { id } } deleteFromBlogCollection(atMost: 2, filter: {not: {id: {is: NULL}}}) { records { name } } }`, `null`},
		{`mutation { updateBlogPostCollection(set: {status: RELEASED}, filter: {status: {in: [PENDING]}}) { affectedCount } }`, `[]`},
		{`{ __typename a: __typename ...on Query { __typename } }`, `{"x": [1, {"y": null}]}`},
	} {
		f.Add(seed.q, seed.v)
	}
	f.Fuzz(func(t *testing.T, query, variables string) {
		fuzzSchemaOnce.Do(func() {
			d := newTestDB(t, blogFixture)
			cat, err := reflect.Load(context.Background(), d.conn)
			if err != nil {
				t.Fatal(err)
			}
			fuzzSchema = gqlschema.Build(cat, gqlschema.Options{})
		})
		if fuzzSchema == nil {
			t.Skip("no schema")
		}
		doc, op, vars, err := parse(query, "", json.RawMessage(variables))
		if err != nil {
			return
		}
		r := &request{schema: fuzzSchema, doc: doc, op: op, variables: vars}
		if op.Operation == "mutation" {
			if fuzzSchema.Mutation != nil {
				_, _, _ = r.planMutation()
			}
			return
		}
		roots, err := r.collect(op.SelectionSet, "Query")
		if err != nil {
			return
		}
		for _, sel := range roots {
			p, err := r.planQueryField(sel)
			if err == nil && p.sql != nil {
				sqlgen.Query([]sqlgen.RootField{*p.sql})
			}
		}
	})
}

func TestFragmentSpreadsDoNotMultiply(t *testing.T) {
	// F0 spreads F1 twice, F1 spreads F2 twice, …: 2^40 paths if fragments were expanded per path.
	var b []byte
	b = append(b, "{ ...F0 }\n"...)
	for i := 0; i < 40; i++ {
		b = append(b, fmt.Sprintf("fragment F%d on Query { __typename ...F%d ...F%d }\n", i, i+1, i+1)...)
	}
	b = append(b, "fragment F40 on Query { __typename }\n"...)
	d := newTestDB(t, "")
	done := make(chan string, 1)
	go func() { done <- d.query(string(b)) }()
	select {
	case got := <-done:
		if got != `{"data": {"__typename": "Query"}}` {
			t.Fatalf("got %s", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("fragment expansion did not finish within 5s")
	}
}
