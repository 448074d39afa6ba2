package resolve

import (
	"context"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/reflect"
)

var updateSQLGoldens = flag.Bool("update", false, "rewrite sqlgen's golden files from the plans resolve builds")

// sqlGoldens are sqlgen's golden files: each is the SQL of a GraphQL request below compiled against
// sqlGoldenSchema, and also what sqlgen renders of its hand-built plan of the same name (sqlgen's
// TestGolden), so that a change of the planner or of the generator shows in the same file.
var sqlGoldens = testenv.NewGoldens(filepath.Join("..", "testdata", "sqlgen"), "*.sql")

// sqlGoldenSchema has what the golden requests reach: a column of each output conversion (text, JSON text,
// enum with mappings, composite), functions of each kind, column grants and the extensions beyond pg_graphql.
const sqlGoldenSchema = `
create type account_status as enum ('a', 'b');
comment on type account_status is '@graphql({"mappings": {"a": "A", "b": "B"}})';
create type address as (city text, zip text, big bigint);
create table account(
  id serial primary key,
  email varchar(255) unique,
  name text,
  balance bigint,
  tags text[],
  status account_status,
  meta json,
  address address
);
comment on table account is '@graphql({"totalCount": {"enabled": true}, "aggregate": {"enabled": true}})';
create table blog(id serial primary key, owner_id integer not null references account(id), name text not null);
create table blog_post(id serial primary key, blog_id integer not null references blog(id), title text not null);
create table comment(id serial primary key, post_id integer not null references blog_post(id), body text not null);
create function full_name(account) returns text language sql stable as $$ select $1.name $$;
create function add(a bigint, b bigint[]) returns bigint language sql immutable as $$ select a + b[1] $$;
create function newest() returns account language sql stable as $$ select * from account order by id desc limit 1 $$;
comment on table blog_post is '@graphql({"totalCount": {"enabled": true}})';
comment on schema public is '@graphql({"inflect_names": true, "features": ["upsert", "nestedInsert", "relatedFilter", "relatedOrder", "distinct", "composite"]})';
grant all on all tables in schema public to service_role;
grant all on all sequences in schema public to service_role;
-- Columns the role may read, not the table: what comes back from a write is listed (sqlgen's Returning).
revoke select on blog_post from service_role;
grant select (id, blog_id, title) on blog_post to service_role;
`

// sqlGoldenCase is a GraphQL request whose statements are a golden file; exactPaging builds the schema with
// the server's exactPaging feature on.
type sqlGoldenCase struct {
	query       string
	exactPaging bool
}

// The cursors are base64 of JSON arrays: W251bGwsIDRd is [null, 4], WzEwXQ== [10], WyJiIiwgNF0= ["b", 4],
// WyJhQHguY29tIiwgMiwgN10= ["a@x.com", 2, 7].
var sqlGoldenCases = map[string]sqlGoldenCase{
	"connection_forward": {query: `{ accountCollection(first: 3, offset: 2, after: "W251bGwsIDRd", orderBy: [{name: DescNullsFirst}],
		filter: {email: {eq: "a@x.com"}, or: [{id: {in: [1, 2]}}, {email: {is: NOT_NULL}}], not: {name: {ilike: "%a%"}}}) {
		edges { cursor node { nodeId id balance __typename } } pageInfo { startCursor endCursor hasNextPage hasPreviousPage } totalCount } }`},
	"connection_backward_nested": {query: `{ accountCollection(last: 2, before: "WzEwXQ==") {
		edges { node { nodeId id balance __typename blogCollection { edges { node { owner { id } } } } } } pageInfo { hasNextPage hasPreviousPage } } }`},
	// A cursor whose value is not NULL on a nullable column where NULLs sort after it: pg_graphql's condition
	// leaves the NULL rows out, the exactPaging feature counts them.
	"cursor_nulls_after_value":       {query: nullsAfterCursor},
	"cursor_nulls_after_value_exact": {query: nullsAfterCursor, exactPaging: true},
	"aggregate_and_list_filter":      {query: `{ accountCollection(filter: {tags: {contains: ["a", "b\"c"]}}) { aggregate { count sum { id } avg { id } } } }`},
	"record_and_function":            {query: `{ accountByPk(id: 1) { status meta fullName } add(a: "1", b: ["2"]) newest { id } }`},
	"related_filter": {query: `{ blogCollection(filter: {owner: {email: {eq: "a@x.com"}},
		or: [{blogPostCollection: {every: {title: {like: "%x%"}}}}, {not: {blogPostCollection: {none: {}}}}]}) { edges { node { id } } } }`},
	"related_order_and_distinct": {query: `{ blogPostCollection(distinctOn: [blogId], orderBy: [{blog: {owner: {email: AscNullsLast}}},
		{commentCollection: {count: DescNullsLast}}], first: 2, after: "WyJhQHguY29tIiwgMiwgN10=") { edges { cursor } pageInfo { hasPreviousPage } totalCount } }`},
	"composite": {query: `{ accountCollection(filter: {address: {city: {eq: "Oslo"}, zip: {is: NOT_NULL}}}) {
		edges { node { address { city big __typename } } } } }`},
	"insert": {query: `mutation { insertIntoAccountCollection(objects: [{email: "a@x.com"}, {email: null, name: "n"}]) {
		affectedCount records { nodeId id balance __typename } } }`},
	"insert_one": {query: `mutation { insertIntoAccountCollection(objects: [{email: "a@x.com"}]) {
		affectedCount records { nodeId id balance __typename fullName } __typename } }`},
	"upsert": {query: `mutation {
		a: insertIntoAccountCollection(objects: [{email: "a@x.com", name: "n"}],
			onConflict: {constraint: account_email_key, updateColumns: [name, email], filter: {name: {neq: "keep"}}}) { affectedCount }
		b: insertIntoAccountCollection(objects: [{email: "a@x.com"}], onConflict: {constraint: account_email_key, updateColumns: []}) { affectedCount } }`},
	"nested_insert": {query: `mutation { insertIntoBlogPostCollection(objects: [
		{title: "p", blog: {name: "b", ownerId: 1}, commentCollection: [{body: "c1"}, {}]}, {title: "q", blogId: 1}]) {
		affectedCount records { title } } }`},
	"nested_insert_in_order": {query: `mutation { insertIntoBlogPostCollection(objects: [{title: "p", blogId: 1, commentCollection: [{body: "c1"}, {}]}]) {
		records { title } } }`},
	"update_and_delete_one": {query: `mutation {
		updateAccountCollection(set: {name: "n"}, filter: {id: {eq: 1}}) { affectedCount records { email } }
		deleteFromAccountCollection(filter: {email: {eq: "a@x.com"}}) { __typename } }`},
	"update_and_delete": {query: `mutation {
		updateAccountCollection(set: {email: "b@x.com"}, filter: {id: {lt: 5}}, atMost: 1) { records { email } }
		deleteFromAccountCollection(atMost: 2) { __typename } }`},
}

const nullsAfterCursor = `{ accountCollection(first: 2, after: "WyJiIiwgNF0=", orderBy: [{name: AscNullsLast}]) { edges { cursor } } }`

// The plans resolve builds from real requests on a real schema are the plans sqlgen's goldens render: the
// statements of each request, byte for byte the golden file (-update rewrites them from here).
func TestPlansRenderSQLGoldens(t *testing.T) {
	d := newTestDB(t, sqlGoldenSchema)
	schemas := map[bool]*gqlschema.Schema{
		false: d.schemaOf("service_role", gqlschema.Options{}),
		true:  d.schemaOf("service_role", gqlschema.Options{Features: reflect.FeatureSet{reflect.FeatureExactPaging: true}}),
	}
	for name, c := range sqlGoldenCases {
		t.Run(name, func(t *testing.T) {
			sqlGoldens.Check(t, name+".sql", compiledSQL(t, schemas[c.exactPaging], c.query), *updateSQLGoldens)
		})
	}
}

// schemaOf is the GraphQL schema role sees, built with opts from the catalog as the engine loads it for role
// (the superuser would see all).
func (d *testDB) schemaOf(role string, opts gqlschema.Options) *gqlschema.Schema {
	d.t.Helper()
	d.exec("set role " + role)
	cat, err := reflect.Load(context.Background(), d.conn)
	if err != nil {
		d.t.Fatal(err)
	}
	d.exec("reset role")
	return gqlschema.Build(cat, opts)
}

// compiledFor is query compiled on schema as the engine compiles it by default (prepared statements), but for
// JSON_SCALAR, which only newer servers have (planning's jsonScalar): the goldens are the same on every version.
// The test fails when it compiles to an answer rather than to statements.
func compiledFor(t testing.TB, schema *gqlschema.Schema, query string) *compiled {
	t.Helper()
	return compiledWith(t, schema, planning{limits: DefaultLimits(), joinRecords: true}, query)
}

// compiledWith is query compiled on schema as p plans; the test fails when it compiles to an answer rather than
// to statements.
func compiledWith(t testing.TB, schema *gqlschema.Schema, p planning, query string) *compiled {
	t.Helper()
	compiled := compile(context.Background(), schema, p, Request{Query: query})
	if compiled.response != nil {
		t.Fatalf("the request did not compile: %s", compiled.response)
	}
	return compiled
}

// compiledSQL is the text of the statements query compiles to on schema (compiledFor), with their parameters.
func compiledSQL(t testing.TB, schema *gqlschema.Schema, query string) string {
	t.Helper()
	return statementsText(compiledFor(t, schema, query))
}

// statementsText is the text of compiled's statements, with their parameters.
func statementsText(compiled *compiled) string {
	var sql []string
	var args []any
	for _, st := range compiled.stmts {
		sql = append(sql, st.sql)
		args = append(args, st.args...)
	}
	return testenv.SQLText(strings.Join(sql, ";\n"), args)
}
