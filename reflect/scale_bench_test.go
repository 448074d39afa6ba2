package reflect_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/internal/devtools/benchdata"
	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/reflect"
)

// BenchmarkCatalogScale measures a full catalog read on issue 18's large catalogs (benchdata.Catalog, 1,000 and
// 5,000 tables): the catalog query, the privileges query, decoding both into the model, and building the GraphQL
// schema; then the heap that one loaded catalog and its schema keep.
func BenchmarkCatalogScale(b *testing.B) {
	for _, tables := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("tables=%d", tables), func(b *testing.B) { benchmarkCatalogScale(b, tables) })
	}
}

func benchmarkCatalogScale(b *testing.B, tables int) {
	ctx := context.Background()
	t0 := time.Now()
	_, conn := testenv.SetupDB(b, "")
	if err := benchdata.Catalog(ctx, conn, tables); err != nil {
		b.Fatal(err)
	}
	b.Logf("generated %d tables in %s", tables, time.Since(t0).Round(time.Millisecond))

	var query, decode, build time.Duration
	load := func() (*reflect.Catalog, *gqlschema.Schema) {
		t0 := time.Now()
		var privileges []byte
		tx, err := conn.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tx.Exec(ctx, reflect.CatalogSettings); err != nil {
			b.Fatal(err)
		}
		answer, err := reflect.Read(ctx, tx, nil, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := tx.QueryRow(ctx, reflect.PrivilegesQuery).Scan(&privileges); err != nil {
			b.Fatal(err)
		}
		if err := tx.Rollback(ctx); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		shared, err := reflect.Parse(answer)
		if err != nil {
			b.Fatal(err)
		}
		cat, err := shared.ForRole("postgres", privileges)
		if err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		schema := gqlschema.Build(cat, gqlschema.Options{})
		query, decode, build = query+t1.Sub(t0), decode+t2.Sub(t1), build+time.Since(t2)
		return cat, schema
	}

	b.ReportAllocs()
	n := 0
	for b.Loop() {
		cat, schema := load()
		if len(cat.Relations) < tables || schema == nil {
			b.Fatalf("catalog has %d relations, want %d", len(cat.Relations), tables)
		}
		n++
	}
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(n) }
	b.ReportMetric(per(query+decode+build), "ms/load+build")
	b.ReportMetric(per(query), "ms/query")
	b.ReportMetric(per(decode), "ms/decode")
	b.ReportMetric(per(build), "ms/build")

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cat, schema := load()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/(1<<20), "MB-retained")
	runtime.KeepAlive(cat)
	runtime.KeepAlive(schema)
}
