package gqlschema_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/internal/devtools/benchdata"
	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/pgtest"
	"github.com/pgreflect/pgreflect/reflect"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// schemas builds, for each role, the schema that role sees of public in a new database made by ddl: the
// catalog as the role reads it (grants and all), as the server builds it for the role's requests.
func schemas(t *testing.T, ddl string, opts gqlschema.Options, roles ...string) map[string]*gqlschema.Schema {
	t.Helper()
	ctx := context.Background()
	_, conn := testenv.SetupDB(t, ddl)
	out := map[string]*gqlschema.Schema{}
	for _, role := range roles {
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "select set_config('role', $1, true), set_config('search_path', 'public', true)", role); err != nil {
			t.Fatal(err)
		}
		cat, err := reflect.Load(ctx, tx)
		if err != nil {
			t.Fatalf("%s: %v", role, err)
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		out[role] = gqlschema.Build(cat, opts)
	}
	return out
}

// fields renders an object type's fields, or an input type's fields, as "name: Type" in the schema's order;
// "" when the schema has no such type.
func fields(s *gqlschema.Schema, typeName string) string {
	typ := s.Types[typeName]
	if typ == nil {
		return ""
	}
	var out []string
	for _, f := range typ.Fields {
		out = append(out, f.Name+": "+f.Type.String())
	}
	for _, f := range typ.InputFields {
		out = append(out, f.Name+": "+f.Type.String())
	}
	return strings.Join(out, ", ")
}

// field is the named field of a type, or nil.
func field(s *gqlschema.Schema, typeName, name string) *gqlschema.Field {
	if typ := s.Types[typeName]; typ != nil {
		for _, f := range typ.Fields {
			if f.Name == name {
				return f
			}
		}
	}
	return nil
}

// typeFields checks the fields of each type, as fields renders them ("" for a type the schema lacks).
func typeFields(t *testing.T, s *gqlschema.Schema, want map[string]string) {
	t.Helper()
	for typ, fs := range want {
		if got := fields(s, typ); got != fs {
			t.Errorf("%s = %q, want %q", typ, got, fs)
		}
	}
}

// fieldType is a field's expected type: typ.field has type want.
type fieldType struct{ typ, field, want string }

// fieldTypes checks that each field exists with its type.
func fieldTypes(t *testing.T, s *gqlschema.Schema, want []fieldType) {
	t.Helper()
	for _, c := range want {
		f := field(s, c.typ, c.field)
		if f == nil {
			t.Errorf("%s.%s is missing (%s)", c.typ, c.field, fields(s, c.typ))
			continue
		}
		if got := f.Type.String(); got != c.want {
			t.Errorf("%s.%s: %s, want %s", c.typ, c.field, got, c.want)
		}
	}
}

// omitted is what the schema left out, as "name: reason".
func omitted(s *gqlschema.Schema) []string {
	var out []string
	for _, o := range s.Omitted {
		out = append(out, o.Name+": "+o.Reason.String())
	}
	return out
}

// TestGrantsShapeTheSchema: each role's schema shows the columns it may select and the mutations and input
// fields it may use, and nothing of a table it may not select (contract 1.1, 1.4: the role decides).
func TestGrantsShapeTheSchema(t *testing.T) {
	s := schemas(t, `
		create table account (id serial primary key, email text not null, secret text);
		revoke all on account from anon, authenticated;
		grant select (id, email), insert (email), update (email) on account to anon;
		create table audit (id int primary key, what text);
		revoke all on audit from anon, authenticated;`,
		gqlschema.Options{}, "anon", "service_role")

	anon, service := s["anon"], s["service_role"]
	if got, want := fields(anon, "account"), "nodeId: ID!, id: Int!, email: String!"; got != want {
		t.Errorf("anon's account = %s, want %s", got, want)
	}
	if got, want := fields(service, "account"), "nodeId: ID!, id: Int!, email: String!, secret: String"; got != want {
		t.Errorf("service_role's account = %s, want %s", got, want)
	}
	if got, want := fields(anon, "accountInsertInput"), "email: String"; got != want {
		t.Errorf("anon's accountInsertInput = %s, want %s", got, want)
	}
	if got, want := fields(service, "accountInsertInput"), "email: String, secret: String"; got != want {
		t.Errorf("service_role's accountInsertInput (a serial column is left out) = %s, want %s", got, want)
	}
	for _, name := range []string{"insertIntoaccountCollection", "updateaccountCollection"} {
		if field(anon, "Mutation", name) == nil {
			t.Errorf("anon lacks Mutation.%s (granted)", name)
		}
	}
	if field(anon, "Mutation", "deleteFromaccountCollection") != nil {
		t.Error("anon has deleteFromaccountCollection without DELETE")
	}
	if field(service, "Mutation", "deleteFromaccountCollection") == nil {
		t.Error("service_role lacks deleteFromaccountCollection")
	}
	if anon.Types["audit"] != nil || field(anon, "Query", "auditCollection") != nil {
		t.Error("anon sees audit, which it may not select")
	}
	if !slices.Contains(omitted(anon), "audit: no column the role may select") {
		t.Errorf("anon's omissions %q do not say why audit is left out", omitted(anon))
	}
	if field(service, "Query", "auditCollection") == nil {
		t.Error("service_role lacks auditCollection")
	}
}

// TestNullabilityAndReadOnlyColumns: node fields are NON_NULL iff the column is NOT NULL (so a view's never
// are), insert and update inputs are all nullable, and generated columns are read-only (contract 1.4, 1.12).
func TestNullabilityAndReadOnlyColumns(t *testing.T) {
	s := schemas(t, `
		create table item (
			id int primary key, name text not null, note text,
			name_length int generated always as (length(name)) stored);
		create view item_view as select id, name from item;
		comment on view item_view is e'@graphql({"primary_key_columns": ["id"]})';`,
		gqlschema.Options{}, "service_role")["service_role"]

	typeFields(t, s, map[string]string{
		"item":            "nodeId: ID!, id: Int!, name: String!, note: String, name_length: Int",
		"itemInsertInput": "id: Int, name: String, note: String",
		"itemUpdateInput": "id: Int, name: String, note: String",
		"item_view":       "nodeId: ID!, id: Int, name: String",
	})
	byPk := field(s, "Query", "itemByPk")
	if byPk == nil || len(byPk.Args) != 1 || byPk.Args[0].Type.String() != "Int!" || byPk.Type.String() != "item" {
		t.Errorf("itemByPk = %+v, want (id: Int!): item", byPk)
	}
}

// TestRelationsWithoutAKeyAreLeftOut: a table without a primary key and a view without primary_key_columns
// get no types, and the schema says why (contract 1.1, 1.14); primary_key_columns naming a missing column is
// ignored.
func TestRelationsWithoutAKeyAreLeftOut(t *testing.T) {
	s := schemas(t, `
		create table event_log (at timestamptz, what text);
		create table thing (id int primary key);
		create view plain_view as select id from thing;
		create view wrong_key as select id from thing;
		comment on view wrong_key is e'@graphql({"primary_key_columns": ["nope"]})';`,
		gqlschema.Options{}, "service_role")["service_role"]

	for _, name := range []string{"event_log", "plain_view", "wrong_key"} {
		if s.Types[name] != nil || field(s, "Query", name+"Collection") != nil {
			t.Errorf("%s is exposed without a key", name)
		}
		if !slices.Contains(omitted(s), name+": no primary key (nor primary_key_columns)") {
			t.Errorf("omissions %q do not name %s", omitted(s), name)
		}
	}
	if field(s, "Query", "thingCollection") == nil {
		t.Error("thing, which has a key, is missing")
	}
}

// TestRelationshipsFromForeignKeys: a foreign key gives a to-one field on the referencing table (NON_NULL when
// a local column is NOT NULL and the target has no RLS), a connection on the referenced one, and a to-one back
// when the key's columns are unique (contract 1.11).
func TestRelationshipsFromForeignKeys(t *testing.T) {
	s := schemas(t, `
		create table blog (id int primary key);
		create table post (id int primary key, blog_id int not null references blog, editor_id int references blog);
		comment on constraint post_editor_id_fkey on post is e'@graphql({"foreign_name": "editor", "local_name": "edited"})';
		create table secured (id int primary key);
		alter table secured enable row level security;
		create table note (id int primary key, secured_id int not null references secured);
		create table blog_settings (blog_id int primary key references blog);`,
		gqlschema.Options{}, "service_role")["service_role"]

	fieldTypes(t, s, []fieldType{
		{"post", "blog", "blog!"},
		{"post", "editor", "blog"},
		{"blog", "postCollection", "postConnection"},
		{"blog", "edited", "postConnection"},
		{"note", "secured", "secured"},
		{"blog", "blog_settings", "blog_settings"},
		{"blog_settings", "blog", "blog!"},
	})
	args := field(s, "blog", "postCollection").Args
	var names []string
	for _, a := range args {
		names = append(names, a.Name)
	}
	if got, want := strings.Join(names, " "), "first last before after offset filter orderBy"; got != want {
		t.Errorf("blog.postCollection's arguments: %s, want %s", got, want)
	}
}

// TestFunctionsBecomeFields: a function of the row is a computed field whatever its volatility; a stable
// function is a Query field and a volatile one a Mutation field; an overloaded name is left out with its
// reason, and a role without EXECUTE sees none (contract 1.12, 1.13).
func TestFunctionsBecomeFields(t *testing.T) {
	s := schemas(t, `
		create table person (id int primary key, first text, last text);
		create function _full_name(person) returns text stable language sql as 'select $1.first || '' '' || $1.last';
		create function shout(p person) returns text volatile language sql as 'select upper($1.first)';
		create function search(query text, max_count int default 10) returns setof person stable language sql
			as 'select * from person where first = query limit max_count';
		create function bump(by_count int) returns int language sql as 'select by_count + 1';
		create function twice(x int) returns int immutable language sql as 'select 2 * x';
		create function twice(x text) returns text immutable language sql as 'select x || x';
		create function secret_sum(a int, b int) returns int immutable language sql as 'select a + b';
		revoke execute on function secret_sum(int, int) from public, anon;`,
		gqlschema.Options{}, "anon", "service_role")

	service, anon := s["service_role"], s["anon"]
	fieldTypes(t, service, []fieldType{
		{"person", "full_name", "String"},
		{"person", "shout", "String"},
		{"Query", "search", "personConnection"},
		{"Mutation", "bump", "Int"},
		{"Query", "secret_sum", "Int"},
	})
	var args []string
	for _, a := range field(service, "Query", "search").Args {
		args = append(args, a.Name+": "+a.Type.String())
	}
	if got, want := strings.Join(args, ", "),
		"query: String!, max_count: Int, first: Int, last: Int, before: Cursor, after: Cursor, offset: Int, filter: personFilter, orderBy: [personOrderBy!]"; got != want {
		t.Errorf("search's arguments: %s, want %s", got, want)
	}
	if field(service, "Query", "twice") != nil {
		t.Error("the overloaded twice is exposed")
	}
	if !slices.Contains(omitted(service), "twice: overloaded") {
		t.Errorf("omissions %q do not say twice is overloaded", omitted(service))
	}
	if field(anon, "Query", "secret_sum") != nil {
		t.Error("anon sees secret_sum without EXECUTE")
	}
	if !slices.Contains(omitted(anon), "secret_sum: no EXECUTE") {
		t.Errorf("anon's omissions %q do not say why secret_sum is left out", omitted(anon))
	}
}

// TestInflectionAndDirectives: with inflect_names, types, fields and relationship names are inflected; name and
// description directives win; max_rows caps a table's pages, falling back to the schema's and then to the
// server's option (contract 1.2, 1.15).
func TestInflectionAndDirectives(t *testing.T) {
	s := schemas(t, `
		comment on schema public is e'@graphql({"inflect_names": true, "max_rows": 7})';
		create table blog_post (id int primary key, author_id int references blog_post, title_text text);
		comment on table blog_post is e'@graphql({"description": "A post", "max_rows": 3})';
		create table other_thing (id int primary key);
		comment on column other_thing.id is e'@graphql({"name": "ident"})';`,
		gqlschema.Options{MaxRows: 50}, "service_role")["service_role"]

	if got, want := fields(s, "BlogPost"),
		"nodeId: ID!, id: Int!, authorId: Int, titleText: String, author: BlogPost, blogPostCollection: BlogPostConnection"; got != want {
		t.Errorf("BlogPost = %s, want %s", got, want)
	}
	if d := s.Types["BlogPost"].Description; d == nil || *d != "A post" {
		t.Errorf("BlogPost's description = %v", d)
	}
	if got := fields(s, "OtherThing"); got != "nodeId: ID!, ident: Int!" {
		t.Errorf("OtherThing = %s", got)
	}
	for _, name := range []string{"blogPostCollection", "insertIntoBlogPostCollection"} {
		if field(s, "Query", name) == nil && field(s, "Mutation", name) == nil {
			t.Errorf("no root field %s", name)
		}
	}
	maxRows := map[string]int{}
	for _, tbl := range s.Tables {
		maxRows[tbl.TypeName] = tbl.MaxRows
	}
	if maxRows["BlogPost"] != 3 || maxRows["OtherThing"] != 7 {
		t.Errorf("max rows %v, want BlogPost 3 (table) and OtherThing 7 (schema)", maxRows)
	}

	plain := schemas(t, `create table other_thing (id int primary key);`, gqlschema.Options{MaxRows: 50}, "service_role")["service_role"]
	for _, tbl := range plain.Tables {
		if tbl.MaxRows != 50 {
			t.Errorf("%s: max rows %d without directives, want the option's 50", tbl.TypeName, tbl.MaxRows)
		}
	}
	if plain.Types["other_thing"] == nil || field(plain, "Mutation", "insertIntoother_thingCollection") == nil {
		t.Error("without inflection other_thing keeps its name in types and root fields")
	}
}

// TestEnums: an enum type takes its labels as values, renamed by mappings, and its columns' filters and
// fields use it (contract 1.10, 1.15).
func TestEnums(t *testing.T) {
	s := schemas(t, `
		create type mood as enum ('happy', 'so-so', 'sad');
		comment on type mood is e'@graphql({"mappings": {"so-so": "meh"}})';
		create table diary (id int primary key, today mood not null);`,
		gqlschema.Options{}, "service_role")["service_role"]

	enum := s.Types["mood"]
	if enum == nil {
		t.Fatal("no enum type mood")
	}
	var values []string
	for _, v := range enum.EnumValues {
		values = append(values, v.Name+"="+v.SQL)
	}
	if got, want := strings.Join(values, " "), "happy=happy meh=so-so sad=sad"; got != want {
		t.Errorf("mood's values %s, want %s", got, want)
	}
	if got := field(s, "diary", "today"); got == nil || got.Type.String() != "mood!" {
		t.Errorf("diary.today = %+v, want mood!", got)
	}
	if got := fields(s, "diaryFilter"); !strings.Contains(got, "today: moodFilter") {
		t.Errorf("diaryFilter = %s, want today: moodFilter", got)
	}
}

// tableOID is the oid of the exposed table of that GraphQL type name (0 when none is).
func tableOID(s *gqlschema.Schema, typeName string) uint32 {
	for oid, tbl := range s.Tables {
		if tbl.TypeName == typeName {
			return oid
		}
	}
	return 0
}

// TestIntrospectionFollowsTheVersion: since 1.6 a schema's types are introspectable only when some exposed
// schema's comment enables introspection; the older versions always allowed it (contract 1.3, 1.15).
func TestIntrospectionFollowsTheVersion(t *testing.T) {
	const ddl = `create table thing (id int primary key);`
	newest := schemas(t, ddl, gqlschema.Options{}, "anon")["anon"]
	if newest.Introspection {
		t.Error("introspection on without the directive")
	}
	on := schemas(t, ddl+`comment on schema public is e'@graphql({"introspection": true})';`, gqlschema.Options{}, "anon")["anon"]
	if !on.Introspection || on.HidesSchema(on.Tables[tableOID(on, "thing")].Rel.Schema.OID) {
		t.Error("introspection off, or thing hidden, with the directive")
	}
	old, err := gqlschema.ParseVersion("1.5")
	if err != nil {
		t.Fatal(err)
	}
	legacy := schemas(t, ddl, gqlschema.Options{Version: old}, "anon")["anon"]
	if !legacy.Introspection {
		t.Error("1.5 turns introspection off without the directive")
	}
}

// TestConnectionDirectives: totalCount and aggregate are opt-in per table; the aggregate offers sum and avg
// only over numeric columns and min and max over orderable ones, whatever the role may select (contract 1.4,
// 1.16).
func TestConnectionDirectives(t *testing.T) {
	s := schemas(t, `
		create table sale (id int primary key, amount numeric, label text, paid bool, ref uuid);
		comment on table sale is e'@graphql({"totalCount": {"enabled": true}, "aggregate": {"enabled": true}})';
		create table tag (id uuid primary key, label text);
		comment on table tag is e'@graphql({"aggregate": {"enabled": true}})';
		create table plain (id int primary key);`,
		gqlschema.Options{}, "service_role")["service_role"]

	typeFields(t, s, map[string]string{
		"saleConnection":          "edges: [saleEdge!]!, pageInfo: PageInfo!, totalCount: Int!, aggregate: saleAggregate",
		"saleAggregate":           "count: Int!, sum: saleSumAggregateResult, avg: saleAvgAggregateResult, min: saleMinAggregateResult, max: saleMaxAggregateResult",
		"saleSumAggregateResult":  "id: BigInt, amount: BigFloat",
		"saleMinAggregateResult":  "id: Int, amount: BigFloat, label: String, paid: Boolean",
		"tagAggregate":            "count: Int!, min: tagMinAggregateResult, max: tagMaxAggregateResult",
		"plainConnection":         "edges: [plainEdge!]!, pageInfo: PageInfo!",
		"plainAggregate":          "",
		"tagSumAggregateResult":   "",
		"saleMaxAggregateResult":  "id: Int, amount: BigFloat, label: String, paid: Boolean",
		"saleAvgAggregateResult":  "id: BigFloat, amount: BigFloat",
		"tagMinAggregateResult":   "label: String",
		"plainSumAggregateResult": "",
	})
}

// A build allocates a bounded number of objects per table. At 5,000 tables it made 2 million objects (409 a
// table), and allocating and marking them was most of the time a schema change took to reach the API: now
// references to a type, value types, the page arguments and the fixed descriptions are made once a build, a
// table's references to its own types once a table, and its columns' fields and inputs in one allocation each.
func TestBuildAllocatesLittlePerTable(t *testing.T) {
	ctx := context.Background()
	const tables = 100
	_, conn := testenv.SetupDB(t, "")
	if err := benchdata.Catalog(ctx, conn, tables); err != nil {
		t.Fatal(err)
	}
	cat, err := reflect.Load(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	var s *gqlschema.Schema
	perTable := testing.AllocsPerRun(3, func() { s = gqlschema.Build(cat, gqlschema.Options{}) }) / tables
	if len(s.Tables) != tables {
		t.Fatalf("%d tables in the schema, want %d", len(s.Tables), tables)
	}
	t.Logf("%.0f allocations a table", perTable)
	if perTable > 250 {
		t.Errorf("a build allocates %.0f objects a table, want at most 250", perTable)
	}
}
