package reflect_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	goreflect "reflect"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/reflect"
)

// announcement is what Watch passed on of one announcement: a change of privileges only, of the relations
// listed (none: of functions, types or a schema's comment), or of anything (all).
type announcement struct {
	privileges bool
	relations  []uint32
	all        bool
}

// recorder is a server's cache as Watch sees it, which notes what it is told.
type recorder chan announcement

func (r recorder) Invalidate()           { r <- announcement{all: true} }
func (r recorder) InvalidatePrivileges() { r <- announcement{privileges: true} }
func (r recorder) InvalidateRelations(relations []uint32) {
	r <- announcement{relations: relations}
}

// For each kind of change, the catalog brought up to date the way a server does after dbsetup's event triggers
// announced it (privileges only: the read kept; some relations: Shared.Update with those relations and the
// types read before; anything else: a full read) is the model a full read gives, deep-equal, for every role.
// Each change also says which of the three it must be, so that a change that falls back to a full read fails.
func TestIncrementalReadEqualsAFullRead(t *testing.T) {
	ctx := t.Context()
	url, conn := testenv.SetupDB(t, "")
	exec := func(sql string) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec(`
		create type mood as enum ('happy');
		create type pair as (a int, b text);
		create table author (id int primary key, name text, m mood);
		create table book (id int primary key, author_id int references author (id), title text, p pair);
		create table shelf (id int primary key, book_id int);
		create table gone (id int primary key, author_id int references author (id));
		create table gadget (id int primary key, addr inet, moods mood[]);
		create table quote (id int primary key, book_id int references book (id));
		comment on schema public is '@graphql({"inflect_names": true})';`)

	// schemas created below, on the search path before they exist (current_schemas leaves them out until then)
	exec(`set search_path = public, api, extras`)
	announced := make(recorder, 64)
	ready := make(chan struct{})
	watchCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		reflect.Watch(watchCtx, func(ctx context.Context) (*pgx.Conn, error) { return pgx.Connect(ctx, url) },
			"pgreflect_schema_version", announced, ready, t.Logf)
	}()
	t.Cleanup(func() { stop(); <-done })
	<-ready
	for len(announced) > 0 {
		<-announced // the invalidation of the watcher's start
	}

	// read runs the catalog query as the engine does (nil relations: all of them).
	read := func(relations, types []uint32) *reflect.Answer {
		t.Helper()
		var answer *reflect.Answer
		if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, reflect.CatalogSettings); err != nil {
				return err
			}
			var err error
			answer, err = reflect.Read(ctx, tx, nil, relations, types)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return answer
	}
	full := func() *reflect.Shared {
		t.Helper()
		s, err := reflect.Parse(read(nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	privilegesOf := func(role string) []byte {
		t.Helper()
		var doc []byte
		if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "set local role "+pgx.Identifier{role}.Sanitize()); err != nil {
				return err
			}
			return tx.QueryRow(ctx, reflect.PrivilegesQuery).Scan(&doc)
		}); err != nil {
			t.Fatal(err)
		}
		return doc
	}
	// next waits for the statement's announcements and merges them as the engine's caches do
	next := func(sql string) announcement {
		t.Helper()
		var got announcement
		select {
		case got = <-announced:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: nothing announced", sql)
		}
		// a drop announces at ddl_command_end and sql_drop; any more come within moments
		for {
			select {
			case more := <-announced:
				got.all = got.all || more.all
				got.privileges = got.privileges && more.privileges
				got.relations = append(got.relations, more.relations...)
				continue
			case <-time.After(150 * time.Millisecond):
			}
			return got
		}
	}

	const (
		privileges = "privileges"
		relations  = "relations"
		all        = "all"
		// announced as relations, whose read found a partition tree that no announcement named
		wholeAfterAll = "relations, then a whole read"
	)
	current := full()
	for _, c := range []struct{ sql, want string }{
		{`alter table book add column pages int`, relations},
		{`comment on table book is '@graphql({"name": "Volume", "totalCount": {"enabled": true}})'`, relations},
		{`comment on column author.name is '@graphql({"name": "fullName"})'`, relations},
		{`alter table shelf add foreign key (book_id) references book (id)`, relations},
		{`comment on constraint shelf_book_id_fkey on shelf is '@graphql({"local_name": "shelves", "foreign_name": "volume"})'`, relations},
		{`alter table book rename column id to ident`, relations},
		{`alter table book drop column pages`, relations},
		{`alter table quote drop constraint quote_book_id_fkey`, relations},
		{`drop table gone`, relations},
		// the one table with an inet column, and one with mood[]: types no longer used go
		{`drop table gadget`, relations},
		{`create table review (id int primary key, book_id int references book (ident), stars int, at timestamptz)`, relations},
		{`alter table review alter column stars type numeric(3, 1)`, relations},
		{`create view book_titles as select ident, title from book`, relations},
		{`revoke select on book from anon`, privileges},
		{`grant select (ident, title) on book to anon`, privileges},
		{`create function author_initial(a author) returns text stable language sql as 'select left(a.name, 1)'`, relations},
		{`create function authors_named(n text) returns setof author stable language sql as 'select * from author where name = n'`, relations},
		{`comment on function author_initial(author) is '@graphql({"name": "initial"})'`, relations},
		{`revoke execute on function author_initial(author) from public, anon`, privileges},
		{`drop function authors_named(text)`, relations},
		{`alter type mood add value 'sad'`, relations},
		{`comment on type mood is '@graphql({"mappings": {"sad": "SAD"}})'`, relations},
		// a column's format_type names its type: the users of a renamed type are read again
		{`alter type mood rename to feeling`, relations},
		{`create type colour as enum ('red', 'green')`, relations},
		{`alter table shelf add column c colour, add column cs colour[]`, relations},
		{`create domain positive as int check (value > 0)`, relations},
		{`alter table review add column votes positive`, relations},
		{`alter table review drop column votes`, relations},
		{`drop domain positive`, relations},
		{`alter type pair add attribute c macaddr`, relations},
		{`comment on type pair is 'two things'`, relations},
		{`create policy everyone on author using (true)`, relations},
		{`drop policy everyone on author`, relations},
		{`comment on schema public is '@graphql({"inflect_names": false})'`, relations},
		// a partitioned table and its partitions: a new one or a comment reads its whole tree again
		{`create table payment (id int, paid_on date, book_id int references book (ident), primary key (id, paid_on)) partition by range (paid_on)`, relations},
		{`create table payment_2025 partition of payment for values from ('2025-01-01') to ('2026-01-01')`, relations},
		{`create table payment_2026 partition of payment for values from ('2026-01-01') to ('2027-01-01') partition by range (paid_on)`, relations},
		{`create table payment_2026_h1 partition of payment_2026 for values from ('2026-01-01') to ('2026-07-01')`, relations},
		{`create table refund (id int primary key, payment_id int, paid_on date, foreign key (payment_id, paid_on) references payment (id, paid_on))`, relations},
		// Postgres adds the foreign key from refund to the new partition
		{`create table payment_2027 partition of payment for values from ('2027-01-01') to ('2028-01-01')`, relations},
		{`comment on table payment is '@graphql({"partitions": "hidden"})'`, relations},
		{`comment on column payment_2025.paid_on is 'when'`, relations},
		{`comment on table payment is null`, relations},
		// ALTER TABLE on a tree: the tree as it is, and the partitions the last read had of its root
		{`alter table payment add column note text`, relations},
		{`alter table payment drop column note`, relations},
		{`create unique index payment_paid on payment (paid_on, id)`, relations},
		{`create table payment_2028 (id int not null, paid_on date not null, book_id int, primary key (id, paid_on))`, relations},
		{`alter table payment attach partition payment_2028 for values from ('2028-01-01') to ('2029-01-01')`, relations},
		{`alter table payment detach partition payment_2028`, relations},
		// a type that a partition tree uses: the tree is read again
		{`create type status as enum ('new')`, relations},
		{`alter table payment add column st status`, relations},
		{`alter type status add value 'paid'`, relations},
		{`comment on type status is 'where a payment is'`, relations},
		{`drop type status cascade`, relations},
		// a partition's own default dropped with its function: the partition's tree
		{`create function one() returns int language sql as 'select 1'`, relations},
		{`alter table payment_2025 alter column book_id set default one()`, relations},
		{`drop function one() cascade`, relations},
		// a partitioned table detached with partitions of its own: a tree no announcement named
		{`alter table payment detach partition payment_2026`, wholeAfterAll},
		// a dropped index is announced by its oid: its relation is the last read's (unique indexes only), and
		// the index on a partitioned table takes its partitions' along
		{`create unique index book_title on book (title)`, relations},
		{`drop index book_title`, relations},
		{`create index book_title_plain on book (title)`, relations},
		{`drop index book_title_plain`, relations},
		{`drop index payment_paid`, relations},
		// a foreign key dropped with the index it needed
		{`create unique index author_name on author (name)`, relations},
		{`create table fan (id int primary key, author_name text references author (name))`, relations},
		{`drop index author_name cascade`, relations},
		// procedures and aggregates, which the API does not show
		{`create procedure tidy() language sql as ''`, relations},
		{`drop procedure tidy()`, relations},
		{`create aggregate total(int) (sfunc = int4pl, stype = int)`, relations},
		{`drop aggregate total(int)`, relations},
		{`drop table refund`, relations},
		{`drop table payment_2027`, relations},
		// a schema renamed onto the search path and off it: its relations show and hide
		{`create schema outside create table outer_thing (id int primary key, book_id int references public.book (ident))`, relations},
		{`alter schema outside rename to api`, relations},
		{`alter schema api rename to outside`, relations},
		{`alter schema outside owner to anon`, relations},
		// a new schema on the search path, and one made with a table in it
		{`create schema api`, relations},
		{`create schema extras create table tool (id int primary key, book_id int references public.book (ident))`, relations},
		// what CASCADE takes along: a default, a foreign key and a column of a table in another schema, a view
		{`create function extras.next_stars() returns int language sql as 'select 3'`, relations},
		{`create type extras.grade as enum ('a', 'b')`, relations},
		{`alter table review alter column stars set default extras.next_stars(), add column g extras.grade`, relations},
		{`create view stocked as select t.id, t.book_id from extras.tool t`, relations},
		{`alter table quote add column tool_id int references extras.tool (id)`, relations},
		{`drop schema extras cascade`, relations},
		{`drop type colour cascade`, relations},
		{`create function three() returns int language sql as 'select 3'`, relations},
		{`alter table review alter column stars set default three()`, relations},
		{`drop function three() cascade`, relations},
		// not read again in part: the fallback
		{`create extension citext`, all},
		{`drop extension citext`, all},
	} {
		exec(c.sql)
		a := next(c.sql)
		var kind string
		var updated *reflect.Shared
		switch {
		case a.all:
			kind, updated = all, full()
		case a.privileges:
			kind, updated = privileges, current
		default:
			kind = relations
			changed := append([]uint32{}, slices.Compact(slices.Sorted(slices.Values(a.relations)))...) // not nil: nil reads all
			changed = current.ToRead(changed)
			var err error
			updated, err = current.Update(read(changed, current.TypeOIDs()), changed)
			switch {
			case errors.Is(err, reflect.ErrWholeReadNeeded):
				kind, updated = wholeAfterAll, full()
			case err != nil:
				t.Fatal(err)
			}
		}
		if kind != c.want {
			t.Errorf("%s: announced as a change of %s, want %s", c.sql, kind, c.want)
		}
		want := full()
		for _, role := range []string{"postgres", "anon", "authenticated"} {
			p := privilegesOf(role)
			got, err := updated.ForRole(role, p)
			if err != nil {
				t.Fatal(err)
			}
			wantCat, err := want.ForRole(role, p)
			if err != nil {
				t.Fatal(err)
			}
			if !goreflect.DeepEqual(got, wantCat) {
				t.Errorf("%s: %s's model brought up to date differs from a full read's: %s", c.sql, role, firstDifference(t, got, wantCat))
			}
		}
		current = updated
	}
}

// firstDifference shows where two models' JSON first differ.
func firstDifference(t *testing.T, got, want *reflect.Catalog) string {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(g, w) {
		return "equal as JSON, not deep-equal (an unexported field)"
	}
	i := 0
	for i < len(g) && i < len(w) && g[i] == w[i] {
		i++
	}
	from := max(i-200, 0)
	return fmt.Sprintf("\ngot  ...%s\nwant ...%s", g[from:min(i+200, len(g))], w[from:min(i+200, len(w))])
}
