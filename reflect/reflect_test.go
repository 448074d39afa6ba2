package reflect

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func connect(t *testing.T, sql string) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.NewDB(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	if sql != "" {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	return conn
}

func TestLoadReflectsTablesKeysAndDirectives(t *testing.T) {
	ctx := context.Background()
	conn := connect(t, `
		create type mood as enum ('happy', 'sad');
		comment on type mood is '@graphql({"mappings": {"sad": "SAD"}})';
		create table account(id serial primary key, email varchar(255) not null unique, m mood, big bigint generated always as (id * 2) stored);
		create table blog(id int generated always as identity primary key, owner_id int not null references account(id), title text);
		create index on blog(title) where title is not null;
		create unique index on blog(title) where title <> '';
		comment on table blog is '@graphql({"totalCount": {"enabled": true}, "name": "BlogPost"})';
		create view blog_view as select id, title from blog;
		comment on view blog_view is e'@graphql({"primary_key_columns": ["id"], "foreign_keys": [{"local_columns": ["id"], "foreign_schema": "public", "foreign_table": "blog", "foreign_columns": ["id"]}]})';
		create function blog_upper(b blog) returns text stable language sql as $$ select upper(b.title) $$;
		create table partitioned(id int, primary key (id)) partition by range (id);
		create table part1 partition of partitioned for values from (0) to (10);
		comment on schema public is '@graphql({"inflect_names": true})';
	`)
	cat, err := Load(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	if len(cat.Schemas) != 1 || cat.Schemas[0].Name != "public" || !cat.Schemas[0].Directives.InflectNames {
		t.Fatalf("schemas = %+v", cat.Schemas)
	}
	if major := cat.ServerVersion / 10000; major != pgtest.ServerMajor(t) {
		t.Errorf("ServerVersion = %d, the server is PostgreSQL %d", cat.ServerVersion, pgtest.ServerMajor(t))
	}
	byName := map[string]*Relation{}
	for _, r := range cat.Relations {
		byName[r.Name] = r
	}
	if _, ok := byName["partitioned"]; ok {
		t.Error("partitioned parent reflected")
	}
	if _, ok := byName["part1"]; !ok {
		t.Error("partition not reflected")
	}
	acc := byName["account"]
	if got := acc.PrimaryKey; len(got) != 1 || got[0] != "id" {
		t.Errorf("account pk = %v", got)
	}
	if len(acc.UniqueIndexes) != 2 {
		t.Errorf("account unique indexes = %v", acc.UniqueIndexes)
	}
	if got := fmt.Sprint(acc.UniqueKeys); got != "[{account_email_key [email]} {account_pkey [id]}]" {
		t.Errorf("account unique keys = %s", got)
	}
	if c := acc.Column("id"); !c.Serial || c.FormatType != "integer" || !c.NotNull {
		t.Errorf("id column = %+v", c)
	}
	if c := acc.Column("email"); c.FormatType != "character varying(255)" {
		t.Errorf("email format = %q", c.FormatType)
	}
	if c := acc.Column("big"); !c.Generated {
		t.Errorf("generated column not flagged: %+v", c)
	}
	blog := byName["blog"]
	if !blog.Column("id").Serial {
		t.Error("identity column not flagged serial")
	}
	if len(blog.UniqueIndexes) != 1 {
		t.Errorf("partial unique index counted: %v", blog.UniqueIndexes)
	}
	if len(blog.UniqueKeys) != 1 {
		t.Errorf("partial unique index named as a key: %v", blog.UniqueKeys)
	}
	if !blog.Directives.TotalCountEnabled() || blog.Directives.Name != "BlogPost" {
		t.Errorf("blog directives = %+v", blog.Directives)
	}
	view := byName["blog_view"]
	if len(view.PrimaryKey) != 1 || view.Kind != "v" {
		t.Errorf("view = %+v", view)
	}
	var real, synthetic int
	for _, fk := range cat.ForeignKeys {
		if fk.Synthetic {
			synthetic++
			if fk.Local != view || fk.Foreign != blog {
				t.Errorf("synthetic fk = %+v", fk)
			}
		} else {
			real++
		}
	}
	if real != 1 || synthetic != 1 {
		t.Errorf("foreign keys: %d real, %d synthetic", real, synthetic)
	}
	var found bool
	for _, f := range cat.Functions {
		if f.Name == "blog_upper" {
			found = true
			if f.Volatility != "s" || len(f.ArgTypes) != 1 || f.ArgTypes[0] != blog.RowType {
				t.Errorf("function = %+v", f)
			}
		}
	}
	if !found {
		t.Error("function not reflected")
	}
	var mood *Type
	for _, ty := range cat.Types {
		if ty.Name == "mood" {
			mood = ty
		}
	}
	if mood == nil || len(mood.EnumValues) != 2 || mood.Directives.Mappings["sad"] != "SAD" {
		t.Errorf("enum = %+v", mood)
	}
}

func TestLoadHonoursPrivilegesAndSearchPath(t *testing.T) {
	ctx := context.Background()
	conn := connect(t, `
		create role reflect_reader;
		create schema hidden;
		create table hidden.secret(id int primary key);
		create table visible(id int primary key, name text, password text);
		grant select (id, name) on visible to reflect_reader;
		grant usage on schema public to reflect_reader;
	`)
	t.Cleanup(func() { conn.Exec(context.Background(), "drop owned by reflect_reader; drop role reflect_reader") })
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "select set_config('role', 'reflect_reader', true), set_config('search_path', 'public, hidden', true)"); err != nil {
		t.Fatal(err)
	}
	cat, err := Load(ctx, tx)
	if err != nil {
		t.Fatal(err)
	}
	if cat.Role != "reflect_reader" || len(cat.Schemas) != 1 {
		t.Fatalf("role %q schemas %+v: a schema without USAGE is visible", cat.Role, cat.Schemas)
	}
	var visible *Relation
	for _, r := range cat.Relations {
		if r.Name == "visible" {
			visible = r
		}
	}
	if visible == nil || visible.CanSelect {
		t.Fatalf("visible = %+v (column grants only, so no table-level select)", visible)
	}
	if !visible.Column("name").CanSelect || visible.Column("password").CanSelect {
		t.Error("column privileges wrong")
	}
}

func TestDirectiveTypeErrorIsReported(t *testing.T) {
	conn := connect(t, `create table t(id int primary key); comment on table t is '@graphql({"max_rows": -1})';`)
	_, err := Load(context.Background(), conn)
	if err == nil || err.Error() != "Error while loading schema, check comment directives. invalid value: integer `-1`, expected u64" {
		t.Fatalf("err = %v", err)
	}
}

func TestPartitionsDirective(t *testing.T) {
	ctx := context.Background()
	conn := connect(t, `
		create table shown(id int, at date, primary key (id, at)) partition by range (at);
		comment on table shown is '@graphql({"partitions": "hidden", "name": "Shown"})';
		create table shown_a partition of shown for values from ('2024-01-01') to ('2025-01-01') partition by range (at);
		create table shown_a1 partition of shown_a for values from ('2024-01-01') to ('2024-07-01');
		create table other(id int primary key, shown_id int, shown_at date, foreign key (shown_id, shown_at) references shown(id, at));
		create schema hidden_root;
		create table hidden_root.log(id int, at date, primary key (id, at)) partition by range (at);
		comment on table hidden_root.log is '@graphql({"partitions": "hidden"})';
		create table public.log_2024 partition of hidden_root.log for values from ('2024-01-01') to ('2025-01-01');
		create table plain(id int, at date, primary key (id, at)) partition by range (at);
		create table plain_2024 partition of plain for values from ('2024-01-01') to ('2025-01-01');
	`)
	cat, err := Load(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range cat.Relations {
		names = append(names, r.Name+":"+r.Kind)
	}
	// The opted-in table is shown whole with its other directives; its partitions at every level, and those
	// of an opted-in table outside the search path, are not; a table without the directive keeps pg_graphql's
	// default (partitions shown, the partitioned table not).
	if got, want := strings.Join(names, " "), "shown:p other:r plain_2024:r"; got != want {
		t.Errorf("relations = %s, want %s", got, want)
	}
	if r := cat.Relations[0]; r.Directives.Name != "Shown" || strings.Join(r.PrimaryKey, ",") != "id,at" {
		t.Errorf("shown = %+v", r)
	}
	// The foreign key to the partitioned table is kept, and Postgres' clones onto its partitions are not.
	if len(cat.ForeignKeys) != 1 || cat.ForeignKeys[0].Foreign.Name != "shown" || cat.ForeignKeys[0].Local.Name != "other" {
		for _, fk := range cat.ForeignKeys {
			t.Errorf("foreign key %s: %s -> %s", fk.Name, fk.Local.Name, fk.Foreign.Name)
		}
	}
}

// A catalog brought up to date by reading only the changed relations (Shared.Update) is the catalog a full read
// gives: for a new column, a renamed one that an unchanged table's foreign key references, a comment, a new
// table with a foreign key to an unchanged one, a new foreign key to a changed table, and a dropped table.
func TestUpdateEqualsAFullRead(t *testing.T) {
	ctx := context.Background()
	conn := connect(t, `
		create table author (id int primary key, name text);
		create table book (id int primary key, author_id int references author (id), title text);
		create table shelf (id int primary key, book_id int);
		create table gone (id int primary key, author_id int references author (id));
		create table quote (id int primary key, book_id int references book (id));`)
	read := func() *Shared {
		t.Helper()
		s, err := Parse(docOf(t, conn, nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	oids := func(names ...string) []uint32 {
		var list []uint32
		for _, n := range names {
			var oid uint32
			if err := conn.QueryRow(ctx, `select $1::regclass::oid`, n).Scan(&oid); err != nil {
				t.Fatal(err)
			}
			list = append(list, oid)
		}
		return list
	}
	before := read()
	changed := oids("book", "shelf", "gone")
	if _, err := conn.Exec(ctx, `
		alter table book add column pages int;
		comment on table book is '@graphql({"name": "Volume"})';
		alter table shelf add foreign key (book_id) references book (id);
		drop table gone;
		create table review (id int primary key, book_id int references book (id), stars int);
		alter table book rename column id to ident;`); err != nil {
		t.Fatal(err)
	}
	changed = append(changed, oids("review")...)

	var privileges []byte
	if err := conn.QueryRow(ctx, PrivilegesQuery).Scan(&privileges); err != nil {
		t.Fatal(err)
	}
	updated, err := before.Update(docOf(t, conn, changed, before.TypeOIDs()), changed)
	if err != nil {
		t.Fatal(err)
	}
	got, err := updated.ForRole("postgres", privileges)
	if err != nil {
		t.Fatal(err)
	}
	want, err := read().ForRole("postgres", privileges)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := describe(got), describe(want); g != w {
		t.Errorf("updated catalog:\n%s\nfull read:\n%s", g, w)
	}
}

// docOf runs the catalog query for relations and types (nil: all relations; no types but theirs).
func docOf(t *testing.T, conn *pgx.Conn, relations, types []uint32) *Answer {
	t.Helper()
	answer, err := Read(context.Background(), conn, nil, relations, types)
	if err != nil {
		t.Fatal(err)
	}
	return answer
}

// describe writes what a catalog holds of relations, columns and foreign keys, in its order.
func describe(c *Catalog) string {
	var b strings.Builder
	for _, r := range c.Relations {
		fmt.Fprintf(&b, "%s %+v pk %v:", r.Name, r.Directives, r.PrimaryKey)
		for _, col := range r.Columns {
			fmt.Fprintf(&b, " %s/%d", col.Name, col.Type)
		}
		b.WriteString("\n")
	}
	for _, fk := range c.ForeignKeys {
		fmt.Fprintf(&b, "fk %s %s%v -> %s%v\n", fk.Name, fk.Local.Name, fk.LocalColumns, fk.Foreign.Name, fk.ForeignColumns)
	}
	fmt.Fprintf(&b, "%d functions, %d types\n", len(c.Functions), len(c.Types))
	return b.String()
}

// Load on a connection inside the caller's transaction, or on the transaction, reads in a savepoint: the
// caller's uncommitted rows and its own settings are there after it (CatalogSettings are not).
func TestLoadInsideATransactionLeavesIt(t *testing.T) {
	ctx := context.Background()
	conn := connect(t, `create table t (id int primary key)`)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `insert into t values (1); set local jit = on; set local work_mem = '5MB'`); err != nil {
		t.Fatal(err)
	}
	for _, q := range []Querier{tx.Conn(), tx} {
		cat, err := Load(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(cat.Relations) != 1 {
			t.Fatalf("relations = %d, want t", len(cat.Relations))
		}
		var rows int
		var jit, workMem string
		if err := tx.QueryRow(ctx, `select (select count(*) from t), current_setting('jit'), current_setting('work_mem')`).Scan(&rows, &jit, &workMem); err != nil {
			t.Fatalf("the caller's transaction after Load: %v", err)
		}
		if rows != 1 || jit != "on" || workMem != "5MB" {
			t.Errorf("after Load on %T: %d rows, jit %s, work_mem %s; want 1, on, 5MB", q, rows, jit, workMem)
		}
	}
}
