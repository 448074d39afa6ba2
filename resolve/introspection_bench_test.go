package resolve

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/pgreflect/pgreflect/internal/devtools/benchdata"
)

// BenchmarkIntrospectionAnswer measures making the standard introspection answer at 1,000 and 5,000 tables
// (benchdata.Catalog) without the database or the compile cache, in one run: "fast" as the engine makes it
// (the answer written without a tree of values, its types by GOMAXPROCS goroutines), "fast-one-goroutine"
// the same on one goroutine, "tree" by the general path (the tree, then the answer
// written from it into a buffer of its size, as the engine made it before). B/op is what one answer allocates.
func BenchmarkIntrospectionAnswer(b *testing.B) {
	for _, tables := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("tables=%d", tables), func(b *testing.B) {
			d := newTestDB(b, "")
			if err := benchdata.Catalog(context.Background(), d.conn, tables); err != nil {
				b.Fatal(err)
			}
			schema := introLoadSchema(b, d)
			schema.Introspection = true
			want := compile(context.Background(), schema, planning{}, Request{Query: IntrospectionQuery}).response
			for _, fast := range []struct {
				name    string
				workers int
			}{{"fast", runtime.GOMAXPROCS(0)}, {"fast-one-goroutine", 1}} {
				b.Run(fast.name, func(b *testing.B) {
					p := planning{introWorkers: fast.workers}
					if got := compile(context.Background(), schema, p, Request{Query: IntrospectionQuery}).response; !bytes.Equal(got, want) {
						b.Fatalf("the answer of %d goroutines differs from one's", fast.workers)
					}
					b.ReportAllocs()
					for b.Loop() {
						if got := compile(context.Background(), schema, p, Request{Query: IntrospectionQuery}).response; len(got) != len(want) {
							b.Fatalf("an answer of %d bytes, then of %d", len(want), len(got))
						}
					}
					b.ReportMetric(float64(len(want))/1e6, "MB-answer")
				})
			}
			b.Run("tree", func(b *testing.B) {
				doc, op, variables, err := parse(IntrospectionQuery, "", nil)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					r := &request{schema: schema, doc: doc, op: op, variables: variables}
					roots, err := r.collect(op.SelectionSet, "Query")
					if err != nil {
						b.Fatal(err)
					}
					tree, err := newIntrospector(r).schemaValue(roots[0])
					if err != nil {
						b.Fatal(err)
					}
					var out bytes.Buffer
					out.Grow(len(`{"data": {"__schema": }}`) + jsonLen(tree))
					out.WriteString(`{"data": {"__schema": `)
					writeJSON(&out, tree)
					out.WriteString("}}")
					if !bytes.Equal(out.Bytes(), want) {
						b.Fatal("the tree's answer differs from the fast path's")
					}
				}
			})
		})
	}
}
