package dbsetup

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// applied returns a connection to a new database on which Apply has run.
func applied(t *testing.T) *pgx.Conn {
	t.Helper()
	conn := connect(t, pgtest.NewDB(t))
	if err := Apply(context.Background(), conn); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return conn
}

func schemaVersion(t *testing.T, conn *pgx.Conn) int64 {
	t.Helper()
	var v int64
	if err := conn.QueryRow(context.Background(), `select last_value from pgreflect.schema_version`).Scan(&v); err != nil {
		t.Fatalf("read schema version: %v", err)
	}
	return v
}

// TestApplyConcurrently releases appliers together on a cluster of its own, where neither the roles nor
// pgreflect's objects exist yet, so that whatever ran before (-count, -run, -shuffle) they race for the same
// creations: several per database contend for its lock, and the databases for the cluster-wide roles. Without
// the lock, the appliers of one database fail (duplicate schemas and types, "tuple concurrently updated").
func TestApplyConcurrently(t *testing.T) {
	cluster := pgtest.StartCluster(t)
	ctx := context.Background()
	admin := connect(t, cluster.URL("postgres"))
	databases := []string{"postgres", "one", "two"}
	for _, name := range databases[1:] {
		if _, err := admin.Exec(ctx, "create database "+name); err != nil {
			t.Fatal(err)
		}
	}
	const perDatabase = 3
	var conns []*pgx.Conn
	for _, name := range databases {
		for range perDatabase {
			conns = append(conns, connect(t, cluster.URL(name)))
		}
	}
	start := make(chan struct{})
	errs := make([]error, len(conns))
	var wg sync.WaitGroup
	for k, conn := range conns {
		wg.Go(func() {
			<-start
			errs[k] = Apply(ctx, conn)
		})
	}
	close(start) // every applier is connected: they start together
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			t.Errorf("Apply #%d (database %s): %v", k, databases[k/perDatabase], err)
		}
	}
	for _, name := range databases {
		ok, err := Installed(ctx, connect(t, cluster.URL(name)))
		if err != nil || !ok {
			t.Errorf("Installed(%s) = %v, %v", name, ok, err)
		}
	}
}

func TestApplyTwiceAndInstalled(t *testing.T) {
	ctx := context.Background()
	conn := connect(t, pgtest.NewDB(t))
	ok, err := Installed(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	// The roles may exist from other tests of this cluster, but the database objects cannot.
	if ok {
		t.Fatal("Installed is true on an empty database")
	}
	for i := 0; i < 2; i++ {
		if err := Apply(ctx, conn); err != nil {
			t.Fatalf("Apply #%d: %v", i+1, err)
		}
	}
	if ok, err = Installed(ctx, conn); err != nil || !ok {
		t.Fatalf("Installed after Apply = %v, %v", ok, err)
	}

	var bypass, login, inherit bool
	if err := conn.QueryRow(ctx, `select rolbypassrls from pg_roles where rolname = 'service_role'`).Scan(&bypass); err != nil || !bypass {
		t.Errorf("service_role bypassrls = %v, %v", bypass, err)
	}
	if err := conn.QueryRow(ctx, `select rolcanlogin, rolinherit from pg_roles where rolname = 'authenticator'`).Scan(&login, &inherit); err != nil || !login || inherit {
		t.Errorf("authenticator login=%v inherit=%v err=%v; want login noinherit", login, inherit, err)
	}
	for _, role := range []string{"anon", "authenticated", "service_role"} {
		var member, canLogin bool
		if err := conn.QueryRow(ctx, `select pg_has_role('authenticator', $1, 'member'), rolcanlogin from pg_roles where rolname = $1`, role).Scan(&member, &canLogin); err != nil {
			t.Fatal(err)
		}
		if !member || canLogin {
			t.Errorf("%s: authenticator member=%v, login=%v; want member, nologin", role, member, canLogin)
		}
	}
}

func TestDefaultGrantsAndRevokeSurvivesApply(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDB(t)
	conn := connect(t, url)
	if _, err := conn.Exec(ctx, `create table public.before_install (id int)`); err != nil {
		t.Fatal(err)
	}
	if err := Apply(ctx, conn); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `create table public.after_install (id serial primary key);
		create function public.f() returns int language sql as 'select 1'`); err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"anon", "authenticated", "service_role"} {
		var before, after, seq, fn, usage bool
		err := conn.QueryRow(ctx, `select
			has_table_privilege($1, 'public.before_install', 'select,insert,update,delete,truncate'),
			has_table_privilege($1, 'public.after_install', 'select,insert,update,delete,truncate,references,trigger'),
			has_sequence_privilege($1, 'public.after_install_id_seq', 'usage,select,update'),
			has_function_privilege($1, 'public.f()', 'execute'),
			has_schema_privilege($1, 'public', 'usage')`, role).Scan(&before, &after, &seq, &fn, &usage)
		if err != nil {
			t.Fatal(err)
		}
		// Issue 22: Apply granted every privilege on the tables that existed, opening an existing database
		// without row level security to the anon key.
		if before {
			t.Errorf("%s was granted a privilege on a table that existed before Apply", role)
		}
		if !after || !seq || !fn || !usage {
			t.Errorf("%s: new table %v, sequence %v, function %v, schema usage %v; want all true",
				role, after, seq, fn, usage)
		}
	}

	if _, err := conn.Exec(ctx, `revoke update on public.after_install from anon`); err != nil {
		t.Fatal(err)
	}
	if err := Apply(ctx, conn); err != nil {
		t.Fatal(err)
	}
	var canUpdate bool
	if err := conn.QueryRow(ctx, `select has_table_privilege('anon', 'public.after_install', 'update')`).Scan(&canUpdate); err != nil {
		t.Fatal(err)
	}
	if canUpdate {
		t.Error("a second Apply gave back the UPDATE privilege a user had revoked")
	}
}

// GrantExisting is the opt-in of `setup --grant-existing`: it grants what Apply leaves alone and names exactly
// what gained a privilege.
func TestGrantExistingNamesWhatItGrants(t *testing.T) {
	ctx := context.Background()
	conn := connect(t, pgtest.NewDB(t))
	if _, err := conn.Exec(ctx, `
create table public.orders (id serial primary key, total int);
create view public.order_totals as select id, total from public.orders;
create function public.secret() returns int language sql as 'select 1';
revoke execute on function public.secret() from public;
create function public.open() returns int language sql as 'select 2';
create schema other;
create table other.elsewhere (id int);`); err != nil {
		t.Fatal(err)
	}
	if err := Apply(ctx, conn); err != nil {
		t.Fatal(err)
	}
	want := []string{"function public.secret()", "sequence public.orders_id_seq", "table public.order_totals", "table public.orders"}
	before, err := Ungranted(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(before, want) {
		t.Errorf("Ungranted = %q, want %q", before, want)
	}
	granted, err := GrantExisting(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(granted, want) {
		t.Errorf("GrantExisting granted %q, want %q", granted, want)
	}
	var table, view, seq, fn, elsewhere bool
	if err := conn.QueryRow(ctx, `select
		has_table_privilege('anon', 'public.orders', 'select,insert,update,delete,truncate,references,trigger'),
		has_table_privilege('authenticated', 'public.order_totals', 'select'),
		has_sequence_privilege('service_role', 'public.orders_id_seq', 'usage'),
		has_function_privilege('anon', 'public.secret()', 'execute'),
		has_table_privilege('anon', 'other.elsewhere', 'select')`).Scan(&table, &view, &seq, &fn, &elsewhere); err != nil {
		t.Fatal(err)
	}
	if !table || !view || !seq || !fn || elsewhere {
		t.Errorf("after GrantExisting: table %v, view %v, sequence %v, function %v, other schema %v; want true, true, true, true, false",
			table, view, seq, fn, elsewhere)
	}
	if again, err := Ungranted(ctx, conn); err != nil || len(again) != 0 {
		t.Errorf("Ungranted after GrantExisting = %q, %v; want nothing", again, err)
	}
}

func TestAnonWritableWithoutRLS(t *testing.T) {
	ctx := context.Background()
	conn := applied(t)
	if _, err := conn.Exec(ctx, `
create table public.open_to_all (id int);                          -- default privileges: anon may write
create table public.guarded (id int);
alter table public.guarded enable row level security;
create table public.read_only (id int);
revoke insert, update, delete, truncate on public.read_only from anon;
create table public.one_column (id int, note text);
revoke all on public.one_column from anon;
grant select, update (note) on public.one_column to anon;
create table public."Odd Name" (id int);
create schema hidden;
create table hidden.not_exposed (id int);
grant usage on schema hidden to anon;
grant all on hidden.not_exposed to anon;`); err != nil {
		t.Fatal(err)
	}
	got, err := AnonWritableWithoutRLS(ctx, conn, []string{"public"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`public."Odd Name"`, "public.one_column", "public.open_to_all"}
	if !slices.Equal(got, want) {
		t.Errorf("AnonWritableWithoutRLS(public) = %q, want %q", got, want)
	}
}

// listen LISTENs on NotifyChannel on a connection of its own and delivers the payloads. The reader blocks
// without a deadline: a timed-out wait would disturb the connection.
func listen(t *testing.T, url string) <-chan string {
	t.Helper()
	conn := connect(t, url)
	if _, err := conn.Exec(context.Background(), "listen "+NotifyChannel); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan string, 100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			n, err := conn.WaitForNotification(ctx)
			if err != nil {
				return
			}
			if n.Channel == NotifyChannel {
				out <- n.Payload
			}
		}
	}()
	// Registered after connect's cleanup, so it runs first: stop the reader, then close the connection.
	t.Cleanup(func() { cancel(); <-done })
	return out
}

// announcedOIDs reads the oids that payload lists after prefix, sorted, once each; false when it lists none
// after prefix, or something else.
func announcedOIDs(payload, prefix string) ([]uint32, bool) {
	_, list, ok := strings.Cut(payload, prefix)
	var listed []uint32
	for field := range strings.SplitSeq(list, ",") {
		oid, err := strconv.ParseUint(field, 10, 32)
		ok = ok && err == nil
		listed = append(listed, uint32(oid))
	}
	slices.Sort(listed)
	return slices.Compact(listed), ok
}

// waitNotification waits up to d for a notification; it returns nil when none came.
func waitNotification(ch <-chan string, d time.Duration) *string {
	select {
	case p := <-ch:
		return &p
	case <-time.After(d):
		return nil
	}
}

func TestDDLBumpsVersionAndNotifiesAtCommit(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDB(t)
	ddl := connect(t, url)
	if err := Apply(ctx, ddl); err != nil {
		t.Fatal(err)
	}
	listener := listen(t, url)
	start := schemaVersion(t, ddl)

	tx, err := ddl.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `create table public.widget (id int primary key, name text)`); err != nil {
		t.Fatal(err)
	}
	if got := waitNotification(listener, 300*time.Millisecond); got != nil {
		t.Fatalf("notification %q arrived while the DDL transaction was still open", *got)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	payload := waitNotification(listener, 5*time.Second)
	if payload == nil {
		t.Fatal("no notification after commit of create table")
	}
	var widget uint32
	if err := ddl.QueryRow(ctx, `select 'public.widget'::regclass::oid`).Scan(&widget); err != nil {
		t.Fatal(err)
	}
	// the version, then what changed: the table alone (its index and sequence stand for it)
	relations := fmt.Sprintf(" relations %d", widget)
	version, what, _ := strings.Cut(*payload, " ")
	v, err := strconv.ParseInt(version, 10, 64)
	if err != nil || v <= start || " "+what != relations {
		t.Fatalf("payload %q: want a version above %d and%s", *payload, start, relations)
	}
	if now := schemaVersion(t, ddl); now < v {
		t.Fatalf("sequence at %d, below the announced %d", now, v)
	}

	// COMMENT, GRANT, REVOKE and DROP each move the version and announce it, with what changed.
	for _, c := range []struct{ stmt, what string }{
		{`comment on table public.widget is 'a widget'`, relations},
		{`revoke select on public.widget from anon`, " privileges"},
		{`grant select (id) on public.widget to anon`, " privileges"},
		{`create function public.widget_label(w public.widget) returns text language sql as 'select w.name'`, " relations "},
		{`drop function public.widget_label(public.widget)`, " relations "},
		// procedures and aggregates: the API shows neither, and functions are read whole
		{`create procedure public.widget_tidy() language sql as ''`, " relations "},
		{`comment on procedure public.widget_tidy() is 'tidies'`, " relations "},
		{`drop procedure public.widget_tidy()`, " relations "},
		{`create aggregate public.widget_total(int) (sfunc = int4pl, stype = int)`, " relations "},
		{`drop aggregate public.widget_total(int)`, " relations "},
		{`comment on schema public is 'the public schema'`, " relations "},
		// a type: the types read before are read again, and the relations whose columns use it
		{`create type public.widget_mood as enum ('ok')`, " relations "},
		{`alter table public.widget add column mood public.widget_mood[]`, relations},
		{`alter type public.widget_mood add value 'meh'`, relations},
		{`comment on type public.widget_mood is 'how a widget feels'`, relations},
		// what ALTER TABLE drops stands for its table
		{`alter table public.widget drop column name`, relations},
		// policies and triggers: nothing the catalog model holds
		{`create policy widget_all on public.widget using (true)`, " relations "},
		{`drop policy widget_all on public.widget`, " relations "},
		{`create trigger widget_same before update on public.widget for each row execute function suppress_redundant_updates_trigger()`, " relations "},
		{`drop trigger widget_same on public.widget`, " relations "},
		// a new schema holds nothing yet
		{`create schema widget_extras`, " relations "},
		// a schema, read whole every time; one renamed lists its relations (none here)
		{`alter schema widget_extras rename to widget_more`, " relations "},
		{`drop schema widget_more`, " relations "},
		// a type dropped with a column that used it: the column's table
		{`drop type public.widget_mood cascade`, relations},
		// any other change: everything is read again; an extension once, not for each command of its script
		{`create extension citext schema public`, ""},
		{`drop extension citext`, ""},
		{`drop table public.widget`, relations},
	} {
		stmt := c.stmt
		before := schemaVersion(t, ddl)
		if _, err := ddl.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		if after := schemaVersion(t, ddl); after <= before {
			t.Errorf("%s: version stayed at %d", stmt, before)
		}
		got := waitNotification(listener, 5*time.Second)
		if got == nil {
			t.Errorf("%s: no notification", stmt)
		} else if _, what, _ := strings.Cut(*got, " "); strings.TrimPrefix(c.what, " ") != what {
			t.Errorf("%s: announced %q, want the version and %q", stmt, *got, c.what)
		}
		// Drain any further notifications of the same statement (drop fires sql_drop and ddl_command_end): the
		// same announcement, and at most one more.
		for n := 0; ; n++ {
			more := waitNotification(listener, 100*time.Millisecond)
			if more == nil {
				break
			}
			if _, what, _ := strings.Cut(*more, " "); n > 0 || strings.TrimPrefix(c.what, " ") != what {
				t.Errorf("%s: announced %q as well", stmt, *more)
			}
		}
	}

	// A partition tree's change lists the tree from its root, in an announcement of its own kind, which a server
	// that knows no partition trees takes for a change of anything.
	if _, err := ddl.Exec(ctx, `create type public.ledger_kind as enum ('debit')`); err != nil {
		t.Fatal(err)
	}
	for waitNotification(listener, 300*time.Millisecond) != nil {
	}
	var root, partition uint32
	for _, c := range []struct {
		stmt string
		want func() []uint32
	}{
		{`create table public.ledger (id int, at date) partition by range (at)`, func() []uint32 { return []uint32{root} }},
		{`create table public.ledger_2026 partition of public.ledger for values from ('2026-01-01') to ('2027-01-01')`,
			func() []uint32 { return []uint32{root, partition} }},
		{`alter table public.ledger add column note text`, func() []uint32 { return []uint32{root, partition} }},
		// a type that the tree uses: the tree
		{`alter table public.ledger add column kind public.ledger_kind`, func() []uint32 { return []uint32{root, partition} }},
		{`alter type public.ledger_kind add value 'credit'`, func() []uint32 { return []uint32{root, partition} }},
	} {
		if _, err := ddl.Exec(ctx, c.stmt); err != nil {
			t.Fatalf("%s: %v", c.stmt, err)
		}
		if err := ddl.QueryRow(ctx, `select 'public.ledger'::regclass::oid, coalesce(to_regclass('public.ledger_2026')::oid, 0)`).Scan(&root, &partition); err != nil {
			t.Fatal(err)
		}
		got := waitNotification(listener, 5*time.Second)
		if got == nil {
			t.Fatalf("%s: no notification", c.stmt)
		}
		listed, ok := announcedOIDs(*got, " partitions ")
		want := c.want()
		slices.Sort(want)
		if !ok || !slices.Equal(listed, want) {
			t.Errorf("%s: announced %q, want the version and partitions %v", c.stmt, *got, want)
		}
		for waitNotification(listener, 100*time.Millisecond) != nil {
		}
	}

	// A dropped index no longer says its table: it is announced by its own oid, in an announcement of its own
	// kind, which a server that cannot find its table takes for a change of anything. Dropped with what needed
	// it (a foreign key, through CASCADE), the foreign key's table is listed too.
	if _, err := ddl.Exec(ctx, `create table public.shelf (id int primary key, label text);
		create unique index shelf_label on public.shelf (label);
		create table public.bin (id int primary key, label text references public.shelf (label));
		create index shelf_label_id on public.shelf (label, id)`); err != nil {
		t.Fatal(err)
	}
	for waitNotification(listener, 300*time.Millisecond) != nil {
	}
	var bin uint32
	if err := ddl.QueryRow(ctx, `select 'public.bin'::regclass::oid`).Scan(&bin); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		index, stmt string
		others      []uint32
	}{
		{index: "public.shelf_label_id", stmt: `drop index public.shelf_label_id`},
		{index: "public.shelf_label", stmt: `drop index public.shelf_label cascade`, others: []uint32{bin}},
	} {
		var index uint32
		if err := ddl.QueryRow(ctx, `select $1::regclass::oid`, c.index).Scan(&index); err != nil {
			t.Fatal(err)
		}
		if _, err := ddl.Exec(ctx, c.stmt); err != nil {
			t.Fatalf("%s: %v", c.stmt, err)
		}
		want := append([]uint32{index}, c.others...)
		slices.Sort(want)
		got := waitNotification(listener, 5*time.Second)
		if got == nil {
			t.Fatalf("%s: no notification", c.stmt)
		}
		if listed, ok := announcedOIDs(*got, " indexes "); !ok || !slices.Equal(listed, want) {
			t.Errorf("%s: announced %q, want the version and indexes %v", c.stmt, *got, want)
		}
		for waitNotification(listener, 100*time.Millisecond) != nil {
		}
	}

	// What changes nothing the catalog model holds moves no version: a materialized view's refresh and
	// temporary objects are not announced, a publication's change once, with the version as it is, for the live
	// queries' change feed.
	if _, err := ddl.Exec(ctx, `create table public.gadget (id int primary key);
		create materialized view public.gadget_ids as select id from public.gadget`); err != nil {
		t.Fatal(err)
	}
	for waitNotification(listener, 300*time.Millisecond) != nil {
	}
	for _, c := range []struct{ stmt, what string }{
		{`refresh materialized view public.gadget_ids`, ""},
		{`reindex table public.gadget`, ""}, // an event since PostgreSQL 17
		// temporary objects: in no API's search path
		{`create temp table gadget_scratch (id serial primary key, n int)`, ""},
		{`create index on gadget_scratch (n)`, ""},
		{`alter table gadget_scratch add column m int`, ""},
		{`comment on table gadget_scratch is 'scratch'`, ""},
		{`alter table gadget_scratch drop column m`, ""},
		{`create temp view gadget_scratch_ids as select id from gadget_scratch`, ""},
		{`drop view gadget_scratch_ids`, ""},
		{`drop table gadget_scratch`, ""},
		{`begin; create temp table gadget_per_call (id int) on commit drop; commit`, ""},
		// what did nothing (as migrations and programs at their start run)
		{`create table if not exists public.gadget (id int primary key)`, ""},
		{`create index if not exists gadget_pkey on public.gadget (id)`, ""},
		{`create sequence if not exists pgreflect.schema_version`, ""},
		{`create schema if not exists public`, ""},
		{`create extension if not exists plpgsql`, ""},
		{`drop table if exists public.no_such_gadget`, ""},
		{`create publication gadget_changes`, " publications"},
		{`alter publication gadget_changes add table public.gadget`, " publications"},
		{`alter publication gadget_changes drop table public.gadget`, " publications"},
		{`drop publication gadget_changes`, " publications"},
	} {
		before := schemaVersion(t, ddl)
		if _, err := ddl.Exec(ctx, c.stmt); err != nil {
			t.Fatalf("%s: %v", c.stmt, err)
		}
		if after := schemaVersion(t, ddl); after != before {
			t.Errorf("%s: version moved from %d to %d", c.stmt, before, after)
		}
		var announced []string
		for got := waitNotification(listener, 300*time.Millisecond); got != nil; got = waitNotification(listener, 300*time.Millisecond) {
			announced = append(announced, *got)
		}
		want := []string{}
		if c.what != "" {
			want = append(want, fmt.Sprint(before, c.what))
		}
		if !slices.Equal(announced, want) {
			t.Errorf("%s: announced %q, want %q", c.stmt, announced, want)
		}
	}
	// a temporary table dropped with a permanent one is a change
	var gadget uint32
	if _, err := ddl.Exec(ctx, `create temp table gadget_scratch (id int)`); err != nil {
		t.Fatal(err)
	}
	if err := ddl.QueryRow(ctx, `select 'public.gadget'::regclass::oid`).Scan(&gadget); err != nil {
		t.Fatal(err)
	}
	before := schemaVersion(t, ddl)
	if _, err := ddl.Exec(ctx, `drop table gadget_scratch, public.gadget cascade`); err != nil {
		t.Fatal(err)
	}
	if got := waitNotification(listener, 5*time.Second); got == nil || !strings.Contains(*got, fmt.Sprint(gadget)) || schemaVersion(t, ddl) <= before {
		t.Errorf("drop of a temporary and a permanent table: announced %v, want public.gadget (%d) and a new version", got, gadget)
	}
}

func TestDDLByNonSuperuserStillWorks(t *testing.T) {
	ctx := context.Background()
	conn := applied(t)
	// The event trigger function runs as definer: an unprivileged owner's DDL must not fail on the sequence.
	role := "dbsetup_owner_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if _, err := conn.Exec(ctx, `create role `+role+` nologin`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c := context.Background()
		conn.Exec(c, `reset role`)
		conn.Exec(c, `drop owned by `+role)
		conn.Exec(c, `drop role `+role)
	})
	if _, err := conn.Exec(ctx, `grant create on schema public to `+role); err != nil {
		t.Fatal(err)
	}
	before := schemaVersion(t, conn)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `set local role `+role+`; create table public.owned_by_other (id int)`); err != nil {
		t.Fatalf("DDL by a non-superuser: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if after := schemaVersion(t, conn); after <= before {
		t.Errorf("version stayed at %d after a non-superuser's DDL", before)
	}
}

func TestAuthHelpers(t *testing.T) {
	ctx := context.Background()
	conn := applied(t)
	const uid = "5b0d5c3e-8f7a-4d8e-9a63-2a4c1f0e9b11"

	query := func(t *testing.T, setup string, args ...any) (gotUID *string, gotRole, gotEmail *string, gotJWT *string) {
		t.Helper()
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if setup != "" {
			if _, err := tx.Exec(ctx, setup, args...); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := tx.Exec(ctx, `set local role authenticated`); err != nil {
			t.Fatal(err)
		}
		if err := tx.QueryRow(ctx, `select auth.uid()::text, auth.role(), auth.email(), auth.jwt()::text`).Scan(&gotUID, &gotRole, &gotEmail, &gotJWT); err != nil {
			t.Fatal(err)
		}
		return
	}

	t.Run("claims", func(t *testing.T) {
		claims := `{"sub":"` + uid + `","role":"authenticated","email":"a@example.com","app_metadata":{"provider":"google"}}`
		u, r, e, j := query(t, `select set_config('request.jwt.claims', $1, true)`, claims)
		if u == nil || *u != uid || r == nil || *r != "authenticated" || e == nil || *e != "a@example.com" {
			t.Fatalf("uid=%v role=%v email=%v", deref(u), deref(r), deref(e))
		}
		var provider string
		if err := conn.QueryRow(ctx, `select $1::jsonb -> 'app_metadata' ->> 'provider'`, deref(j)).Scan(&provider); err != nil || provider != "google" {
			t.Fatalf("auth.jwt() = %v: provider %q, %v", deref(j), provider, err)
		}
	})
	t.Run("legacy per-claim settings win", func(t *testing.T) {
		other := "00000000-0000-4000-8000-0000000000aa"
		u, r, _, _ := query(t, `select set_config('request.jwt.claims', $1, true), set_config('request.jwt.claim.sub', $2, true), set_config('request.jwt.claim.role', 'anon', true)`,
			`{"sub":"`+uid+`","role":"authenticated"}`, other)
		if deref(u) != other || deref(r) != "anon" {
			t.Fatalf("uid=%v role=%v, want %s anon", deref(u), deref(r), other)
		}
	})
	t.Run("nothing set", func(t *testing.T) {
		u, r, e, j := query(t, "")
		if u != nil || r != nil || e != nil || j != nil {
			t.Fatalf("want all null, got uid=%v role=%v email=%v jwt=%v", deref(u), deref(r), deref(e), deref(j))
		}
	})
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func TestRLSWithAuthUID(t *testing.T) {
	ctx := context.Background()
	conn := applied(t)
	const alice, bob = "00000000-0000-4000-8000-00000000000a", "00000000-0000-4000-8000-00000000000b"
	if _, err := conn.Exec(ctx, `
		create table public.note (id serial primary key, user_id uuid not null, body text);
		alter table public.note enable row level security;
		create policy own on public.note for select to authenticated using (auth.uid() = user_id);
		insert into public.note (user_id, body) values
		  ('`+alice+`', 'a1'), ('`+alice+`', 'a2'), ('`+bob+`', 'b1');`); err != nil {
		t.Fatal(err)
	}
	count := func(role, sub string) int {
		t.Helper()
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if _, err := tx.Exec(ctx, `select set_config('request.jwt.claims', $1, true)`, `{"sub":"`+sub+`","role":"`+role+`"}`); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `set local role `+role); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := tx.QueryRow(ctx, `select count(*) from public.note where body is not null`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count("authenticated", alice); n != 2 {
		t.Errorf("alice sees %d notes, want 2", n)
	}
	if n := count("authenticated", bob); n != 1 {
		t.Errorf("bob sees %d notes, want 1", n)
	}
	if n := count("anon", alice); n != 0 {
		t.Errorf("anon sees %d notes, want 0", n)
	}
	if n := count("service_role", alice); n != 3 {
		t.Errorf("service_role (bypassrls) sees %d notes, want 3", n)
	}
}

func TestLoadDemo(t *testing.T) {
	ctx := context.Background()
	conn := applied(t)
	for i := 0; i < 2; i++ {
		if err := LoadDemo(ctx, conn); err != nil {
			t.Fatalf("LoadDemo #%d: %v", i+1, err)
		}
	}
	var accounts, posts, fks int
	var comment string
	if err := conn.QueryRow(ctx, `select (select count(*) from public.account), (select count(*) from public.blog_post),
		(select count(*) from pg_constraint where contype = 'f' and connamespace = 'public'::regnamespace),
		obj_description('public'::regnamespace, 'pg_namespace')`).Scan(&accounts, &posts, &fks, &comment); err != nil {
		t.Fatal(err)
	}
	if accounts != 2 || posts != 3 || fks != 2 {
		t.Errorf("accounts=%d posts=%d foreign keys=%d; want 2, 3, 2 (a second LoadDemo must not reload)", accounts, posts, fks)
	}
	if comment != `@graphql({"introspection": true, "features": ["subscriptions"]})` {
		t.Errorf("comment on schema public = %q", comment)
	}
	// The anon key cannot write the demo: start has nothing to warn of.
	if writable, err := AnonWritableWithoutRLS(ctx, conn, []string{"public"}); err != nil || len(writable) > 0 {
		t.Errorf("anon can write %v without row level security (%v)", writable, err)
	}
	// The view checks the caller's privileges where the server can (15 and later; 14 lacks the option).
	var options string
	if err := conn.QueryRow(ctx, `select coalesce(array_to_string(reloptions, ','), '') from pg_class
		where oid = 'public.released_post'::regclass`).Scan(&options); err != nil {
		t.Fatal(err)
	}
	if want := map[bool]string{true: "security_invoker=true", false: ""}[pgtest.ServerMajor(t) >= 15]; options != want {
		t.Errorf("released_post options = %q on PostgreSQL %d, want %q", options, pgtest.ServerMajor(t), want)
	}

	// The to-do table: each user sees their own rows, inserts default to their id, anon sees nothing.
	const owner = "00000000-0000-4000-8000-000000000001"
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `select set_config('request.jwt.claims', $1, true)`, `{"sub":"`+owner+`","role":"authenticated"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `set local role authenticated; insert into public.todo (task) values ('new one')`); err != nil {
		t.Fatalf("insert own to-do: %v", err)
	}
	var mine int
	if err := tx.QueryRow(ctx, `select count(*) from public.todo`).Scan(&mine); err != nil || mine != 3 {
		t.Errorf("owner sees %d to-dos (%v), want 3", mine, err)
	}
	if _, err := tx.Exec(ctx, `savepoint s; insert into public.todo (user_id, task) values ('00000000-0000-4000-8000-000000000002', 'not mine')`); err == nil {
		t.Error("inserting a to-do for another user succeeded")
	}
	if _, err := tx.Exec(ctx, `rollback to savepoint s; set local role anon`); err != nil {
		t.Fatal(err)
	}
	var anon int
	if err := tx.QueryRow(ctx, `select count(*) from public.todo`).Scan(&anon); err != nil || anon != 0 {
		t.Errorf("anon sees %d to-dos (%v), want 0", anon, err)
	}
	var released int
	if err := tx.QueryRow(ctx, `select count(*) from public.released_post`).Scan(&released); err != nil || released != 2 {
		t.Errorf("anon sees %d released posts (%v), want 2", released, err)
	}
}

func TestInstalledAsUnprivilegedRole(t *testing.T) {
	ctx := context.Background()
	conn := connect(t, pgtest.NewDB(t))
	// Some other auth.uid() is not an install.
	if _, err := conn.Exec(ctx, `create schema auth; create function auth.uid() returns uuid language sql as 'select null::uuid'`); err != nil {
		t.Fatal(err)
	}
	ok, err := Installed(ctx, conn)
	if err != nil || ok {
		t.Fatalf("Installed with only an auth.uid() = %v, %v; want false", ok, err)
	}
	if err := Apply(ctx, conn); err != nil {
		t.Fatal(err)
	}
	// A login role without USAGE on schemas auth and pgreflect must still get an answer.
	role := "dbsetup_nobody_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if _, err := conn.Exec(ctx, `revoke usage on schema pgreflect from public; create role `+role+` nologin`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c := context.Background()
		conn.Exec(c, `reset role`)
		conn.Exec(c, `drop role if exists `+role)
	})
	if _, err := conn.Exec(ctx, `set role `+role); err != nil {
		t.Fatal(err)
	}
	ok, err = Installed(ctx, conn)
	if err != nil || !ok {
		t.Fatalf("Installed as a role without USAGE on auth and pgreflect = %v, %v; want true", ok, err)
	}
}
