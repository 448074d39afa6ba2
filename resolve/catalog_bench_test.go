package resolve

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/pgreflect/pgreflect/internal/devtools/benchdata"
)

// signalling passes the schema watcher's invalidations on to an engine, then tells.
type signalling struct {
	*Engine
	done chan<- struct{}
}

func (s signalling) Invalidate()           { s.Engine.Invalidate(); s.done <- struct{}{} }
func (s signalling) InvalidatePrivileges() { s.Engine.InvalidatePrivileges(); s.done <- struct{}{} }
func (s signalling) InvalidateRelations(relations []uint32) {
	s.Engine.InvalidateRelations(relations)
	s.done <- struct{}{}
}

// BenchmarkLargeCatalog measures issue 18's large catalogs at 1,000 and 5,000 tables: the first request after a
// schema change (one role, and three roles at once), announced by the event triggers and passed on by the
// schema watcher as a server runs them, for a change of one relation, of privileges, of a type, of anything
// else, and of what the API does not show; and an introspection request (the first after a change, then the ones answered from the same schema
// generation), with the heap an introspection answer keeps.
func BenchmarkLargeCatalog(b *testing.B) {
	for _, tables := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("tables=%d", tables), func(b *testing.B) {
			ctx := context.Background()
			d := newTestDB(b, "")
			t0 := time.Now()
			if err := benchdata.Catalog(ctx, d.conn, tables); err != nil {
				b.Fatal(err)
			}
			b.Logf("generated %d tables in %s", tables, time.Since(t0).Round(time.Millisecond))
			const probe = `{ t1Collection(first: 1) { edges { node { id } } } }`
			wantProbe := `{"data": {"t1Collection": {"edges": []}}}`
			// the connections of the roles that ask at once, each with its own session as a server's pool has
			conns := []*testDB{d, d.sibling(), d.sibling()}
			roles := []string{"anon", "authenticated", "service_role"}
			// the server's schema watcher, telling when it has passed an announcement on
			announced := make(chan struct{}, 16)
			d.watch(signalling{d.engine, announced})
			for len(announced) > 0 {
				<-announced // the invalidation of the watcher's start
			}
			// change runs sql and waits until the watcher has passed its announcements on: at least announces of
			// them (those of one transaction come together, and may be passed on one by one)
			changeIn := func(sql string, announces int) {
				if _, err := d.conn.Exec(ctx, sql); err != nil {
					b.Fatal(err)
				}
				for range max(announces, 1) {
					<-announced
				}
				for len(announced) > 0 {
					<-announced
				}
			}
			change := func(sql string) { changeIn(sql, 1) }
			change("create schema unseen")
			change("create table parted (id int primary key) partition by list (id)")
			change("create table parted_a partition of parted for values in (1)")
			changes := 0 // each change's number, which its statements may use (a new type's name)
			middle := tables / 2
			for _, c := range []struct {
				name string
				// prepare, when set, makes a change first that is not measured (and not asked after)
				prepare, sql func(n int) string
				// announces is how many announcements sql makes, when more than one
				announces int
				// restore, when set, undoes what the case's last change left different among the roles (it is not
				// measured): the cases after it find the three roles' privileges alike, and one schema for them
				restore string
			}{
				// a comment on a table: that relation is read again
				{name: "after-table-comment", sql: func(n int) string { return fmt.Sprintf("comment on table t_%d is 'changed %d'", middle, n) }},
				// a GRANT or REVOKE that changes what anon may do: the privileges are read again, and anon's schema
				// is built again (the other roles' privileges are as they were: they keep their schemas)
				{name: "after-grant", sql: func(n int) string {
					if n%2 == 0 {
						return fmt.Sprintf("revoke delete on t_%d from anon", middle)
					}
					return fmt.Sprintf("grant delete on t_%d to anon", middle)
				}, restore: fmt.Sprintf("grant delete on t_%d to anon", middle)},
				// a comment on a type: the types read before and the ten tables that use it are read again
				{name: "after-type-comment", sql: func(n int) string { return fmt.Sprintf("comment on type e_1 is 'changed %d'", n) }},
				// a change the API shows, with one of another kind of object in the same transaction (a collation):
				// the whole catalog is read again, and every role's schema built again
				{name: "after-other-ddl", announces: 2, sql: func(n int) string {
					return fmt.Sprintf(`create collation k_%d from "C"; comment on table t_%d is 'whole %d'`, n, middle+1, n)
				}},
				// a partition attached, as pg_partman adds them: its partition tree is read again
				{name: "after-attach-partition",
					prepare: func(n int) string { return fmt.Sprintf("create table parted_%d (id int primary key)", n) },
					sql: func(n int) string {
						return fmt.Sprintf("alter table parted attach partition parted_%d for values in (%d)", n, n+2)
					}},
				// a unique index dropped: the relation the last read had it on is read again
				{name: "after-drop-index",
					prepare: func(n int) string {
						return fmt.Sprintf("create unique index t_%d_u%d on t_%d (id, name)", middle, n, middle)
					},
					sql: func(n int) string { return fmt.Sprintf("drop index t_%d_u%d", middle, n) }},
				// a table in a schema the API does not show (as Supabase's auth, storage and realtime are): that
				// relation is read again, and the catalog found as it was
				{name: "after-unseen-ddl", sql: func(n int) string { return fmt.Sprintf("create table unseen.t_%d (id int primary key)", n) }},
			} {
				// every role's schema built, as on a server in use: what a change retires is then known
				warm := func() {
					for r := range roles {
						if got := conns[r].as(roles[r], nil, probe, ""); got != wantProbe {
							b.Fatalf("%s got %.300s", roles[r], got)
						}
					}
				}
				// measure times ask, the first request(s) after each change
				measure := func(b *testing.B, ask func()) {
					warm()
					for b.Loop() {
						b.StopTimer()
						if c.prepare != nil {
							change(c.prepare(changes))
						}
						changeIn(c.sql(changes), c.announces)
						changes++
						b.StartTimer()
						ask()
					}
				}
				b.Run(c.name, func(b *testing.B) {
					measure(b, func() {
						if got := d.as("anon", nil, probe, ""); got != wantProbe {
							b.Fatalf("got %.300s", got)
						}
					})
				})
				b.Run(c.name+"-3-roles", func(b *testing.B) {
					measure(b, func() {
						var wg sync.WaitGroup
						answers := make([]string, len(roles))
						for r := range roles {
							wg.Go(func() { answers[r] = conns[r].as(roles[r], nil, probe, "") })
						}
						wg.Wait()
						for r, got := range answers {
							if got != wantProbe {
								b.Fatalf("%s got %.300s", roles[r], got)
							}
						}
					})
				})
				if c.restore != "" {
					change(c.restore)
				}
			}
			b.Run("introspection", func(b *testing.B) {
				change("comment on function f_1(t_5) is 'before introspection'")
				d.as("anon", nil, probe, "") // the schema is built: what follows is introspection alone
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				t0 := time.Now()
				introspect := func() []byte {
					return d.engine.ExecuteAs(ctx, d.conn, Session{Role: "anon", Claims: map[string]any{"role": "anon"},
						SearchPath: []string{"public"}}, Request{Query: IntrospectionQuery})
				}
				first := introspect()
				firstTook := time.Since(t0)
				if !bytes.Contains(first, []byte(`"name": "T1Connection"`)) {
					b.Fatalf("introspection lacks T1Connection: %.300s", first)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportAllocs()
				for b.Loop() {
					if got := introspect(); len(got) != len(first) {
						b.Fatalf("answer of %d bytes, the first had %d", len(got), len(first))
					}
				}
				// reported after the loop, which resets what was reported before it
				b.ReportMetric(float64(firstTook.Milliseconds()), "ms-first")
				b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/(1<<20), "MB-retained")
				// what writing the first answer allocated, most of it garbage at once (its tree, its buffer)
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), "MB-allocated-first")
				b.ReportMetric(float64(len(first))/(1<<20), "MB-answer")
			})
		})
	}
}
