package resolve

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
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

// fuzzSchemaFor loads the blog fixture's schema once per test binary; every fuzz input plans against it.
func fuzzSchemaFor(t *testing.T) *gqlschema.Schema {
	fuzzSchemaOnce.Do(func() {
		d := newTestDB(t, blogFixture)
		cat, err := reflect.Load(context.Background(), d.conn)
		if err != nil {
			t.Fatal(err)
		}
		fuzzSchema = gqlschema.Build(cat, gqlschema.Options{})
	})
	if fuzzSchema == nil {
		t.Fatal("the fuzz schema failed to load (see the first failure)")
	}
	return fuzzSchema
}

// maxFuzzPlanAlloc bounds what planning an input of n bytes may allocate: a fixed allowance plus a constant
// factor of the input (a request body is at most 1 MiB). The fan-out seed, 2 KB, allocated gigabytes before
// the limits.
func maxFuzzPlanAlloc(n int) uint64 { return 32<<20 + 128*uint64(n) }

// FuzzRequest feeds arbitrary documents and variables through parsing, validation, planning and SQL
// generation (everything but the database): whatever comes in, the engine must answer with an error or a
// plan, never panic, allocate more than maxFuzzPlanAlloc, and never produce a statement with more parameters
// than Postgres accepts. Seeds beyond those below live in testdata/fuzz/FuzzRequest.
func FuzzRequest(f *testing.F) {
	for _, seed := range []struct{ q, v string }{
		{`{ accountCollection(first: 2, after: "WzFd", filter: {or: [{id: {in: [1, 2]}}, {email: {ilike: "%a"}}]}, orderBy: [{email: DescNullsFirst}]) { totalCount edges { cursor node { nodeId id blogCollection(last: 1) { pageInfo { hasNextPage } edges { node { owner { email } } } } } } } }`, `{}`},
		{`query Q($f: AccountFilter, $n: Int = 3) { accountCollection(filter: $f, first: $n) { edges { node { ...F } } } } fragment F on Account { id email @skip(if: false) }`, `{"f": {"id": {"eq": 1}}, "n": 2}`},
		{`{ node(nodeId: "WyJwdWJsaWMiLCAiYmxvZyIsIDFd") { nodeId ... on Blog { name } } accountByPk(id: 1) { id } }`, ``},
		{`mutation { insertIntoAccountCollection(objects: [{email: "a"}, {}]) { affectedCount records { id } } deleteFromBlogCollection(atMost: 2, filter: {not: {id: {is: NULL}}}) { records { name } } }`, `null`},
		{`mutation { updateBlogPostCollection(set: {status: RELEASED}, filter: {status: {in: [PENDING]}}) { affectedCount } }`, `[]`},
		{`{ __typename a: __typename ...on Query { __typename } }`, `{"x": [1, {"y": null}]}`},
		{fanOutQuery(20), `{}`},
	} {
		f.Add(seed.q, seed.v)
	}
	f.Fuzz(func(t *testing.T, query, variables string) {
		schema := fuzzSchemaFor(t)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		stmts := planForFuzz(schema, query, variables)
		runtime.ReadMemStats(&after)
		if grown := after.TotalAlloc - before.TotalAlloc; grown > maxFuzzPlanAlloc(len(query)+len(variables)) {
			t.Errorf("planning %d bytes allocated %d MB", len(query)+len(variables), grown>>20)
		}
		for _, st := range stmts {
			if len(st.Args) > postgresMaxParameters {
				t.Errorf("a statement with %d parameters got through", len(st.Args))
			}
		}
	})
}

// planForFuzz does what Engine.resolve does before it talks to the database, including the parameter check
// the engine applies to the query statement, and returns the statements that would be sent.
func planForFuzz(schema *gqlschema.Schema, query, variables string) []sqlgen.Statement {
	doc, op, vars, err := parse(query, "", json.RawMessage(variables))
	if err != nil {
		return nil
	}
	r := &request{schema: schema, doc: doc, op: op, variables: vars}
	if op.Operation == "mutation" {
		stmts, _, err := r.planMutation()
		if err != nil {
			return nil
		}
		out := make([]sqlgen.Statement, len(stmts))
		for i, st := range stmts {
			out[i] = sqlgen.Statement{SQL: st.sql, Args: st.args}
		}
		return out
	}
	roots, err := r.collect(op.SelectionSet, "Query")
	if err != nil {
		return nil
	}
	var fields []sqlgen.RootField
	for _, sel := range roots {
		p, err := r.planQueryField(sel)
		if err == nil && p.sql != nil {
			fields = append(fields, *p.sql)
		}
	}
	if len(fields) == 0 {
		return nil
	}
	st := sqlgen.Query(sqlgen.Server{}, fields)
	if r.limits.checkParameters(len(st.Args)) != nil {
		return nil
	}
	return []sqlgen.Statement{st}
}

// FuzzCursor decodes arbitrary cursors: an error or one text per array element, never a panic.
func FuzzCursor(f *testing.F) {
	for _, seed := range []string{"WzFd", "WyJhIiwgbnVsbCwgMS41LCB0cnVlXQ==", "W3siYSI6IFsxXX1d", "", "!!", "e30=", "WzFdWzJd"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, cursor string) {
		values, err := decodeCursor(cursor)
		if err != nil {
			var ce *clientError
			if !errors.As(err, &ce) {
				t.Errorf("%q: not a client error: %v", cursor, err)
			}
			return
		}
		raw, _ := base64.StdEncoding.DecodeString(cursor)
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil || len(list) != len(values) {
			t.Errorf("%q decoded to %d values from %s", cursor, len(values), raw)
		}
	})
}

// FuzzNodeID decodes arbitrary node ids against the blog schema: an error the client may see, or a table of
// the schema with one value per primary key column.
func FuzzNodeID(f *testing.F) {
	for _, seed := range []string{"WyJwdWJsaWMiLCAiYmxvZyIsIDFd", "WyJwdWJsaWMiLCAiYWNjb3VudCIsIDJd", "WyJwdWJsaWMiLCAiYmxvZyJd",
		"WyJwdWJsaWMiLCAibm9wZSIsIDFd", "WzEsIDIsIDNd", "e30=", "", "WyJwdWJsaWMiLCAiYmxvZyIsIDEsIDJd",
		"WyJwdWJsaWMiLCAiYmxvZyIsIDFdWzFd"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, id string) {
		r := &request{schema: fuzzSchemaFor(t)}
		table, values, err := r.decodeNodeID(id)
		if err != nil {
			var ce *clientError
			if !errors.As(err, &ce) {
				t.Errorf("%q: not a client error: %v", id, err)
			}
			return
		}
		if table == nil || len(values) != len(table.PK) {
			t.Errorf("%q: table %v with %d values", id, table, len(values))
		}
		if raw, _ := base64.StdEncoding.DecodeString(id); !json.Valid(raw) {
			t.Errorf("%q: accepted %q, which is not one JSON value", id, raw)
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
