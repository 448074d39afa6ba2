package resolve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
)

// introDemoSQL is a demo-like schema: tables with foreign keys, an enum, a view with primary_key_columns and a
// directive foreign key, totalCount and aggregate directives, descriptions, a computed field and functions
// (a set-returning one, one with a default argument, a volatile one).
const introDemoSQL = `
comment on schema public is e'@graphql({"introspection": true, "inflect_names": true})';
create table account (
  id serial primary key,
  email varchar(255) not null,
  first_name text,
  last_name text,
  created_at timestamptz not null default now()
);
comment on table account is e'@graphql({"totalCount": {"enabled": true}, "description": "A user account"})';
comment on column account.email is e'@graphql({"description": "Where we write to"})';
create table blog (
  id serial primary key,
  owner_id integer not null references account (id),
  name varchar(255) not null,
  description varchar(255),
  created_at timestamptz not null default now()
);
create type blog_post_status as enum ('PENDING', 'RELEASED');
create table blog_post (
  id uuid primary key default gen_random_uuid(),
  blog_id integer not null references blog (id),
  title varchar(255) not null,
  body text,
  status blog_post_status not null default 'PENDING',
  rating numeric,
  tags text[],
  created_at timestamptz not null default now()
);
comment on table blog_post is e'@graphql({"totalCount": {"enabled": true}, "aggregate": {"enabled": true}})';
create view released_post as select id, blog_id, title from blog_post where status = 'RELEASED';
comment on view released_post is e'@graphql({"primary_key_columns": ["id"], "foreign_keys": [{"local_columns": ["blog_id"], "foreign_schema": "public", "foreign_table": "blog", "foreign_columns": ["id"]}]})';
create function _full_name(rec account) returns text stable language sql
  as $$ select rec.first_name || ' ' || rec.last_name $$;
create function search_blogs(term text) returns setof blog stable language sql
  as $$ select * from blog where name ilike '%' || term || '%' $$;
create function add_numbers(a int, b int default 1) returns int immutable language sql as $$ select a + b $$;
create function archive_blog(blog_id int) returns blog volatile language sql
  as $$ update blog set description = 'archived' where id = blog_id returning * $$;
insert into account (email, first_name, last_name) values ('a@example.com', 'Ada', 'Lovelace');
insert into blog (owner_id, name) values (1, 'Notes');
`

// introAllTypesSQL has a column of every type of contract section 1.9, arrays included.
const introAllTypesSQL = `
comment on schema public is e'@graphql({"introspection": true})';
create extension citext;
create schema elsewhere;
create type elsewhere.mood as enum ('happy', 'sad');
create type color as enum ('red', 'green', 'blue');
comment on type color is e'@graphql({"mappings": {"red": "RED"}})';
create domain positive_int as int check (value > 0);
create type pair as (a int, b int);
create table ref (id int primary key);
create table every_type (
  id bigint primary key,
  c_bool bool, c_int2 int2, c_int4 int4, c_int8 int8, c_float4 float4, c_float8 float8, c_numeric numeric(10, 2),
  c_text text, c_citext citext, c_varchar varchar(8), c_bpchar char(2), c_char "char",
  c_json json, c_jsonb jsonb, c_date date, c_time time, c_timestamp timestamp, c_timestamptz timestamptz,
  c_uuid uuid, c_enum color, c_enum_elsewhere elsewhere.mood, c_timetz timetz, c_interval interval, c_inet inet,
  c_bytea bytea, c_money money, c_domain positive_int, c_range int4range, c_point point,
  c_int_arr int[], c_text_arr text[], c_int8_arr int8[], c_numeric_arr numeric[], c_json_arr json[],
  c_jsonb_arr jsonb[], c_bool_arr bool[], c_uuid_arr uuid[], c_date_arr date[], c_float_arr float8[],
  c_enum_arr color[], c_composite pair, c_row ref,
  c_not_null text not null default ''
);
comment on table every_type is e'@graphql({"totalCount": {"enabled": true}, "aggregate": {"enabled": true}})';
`

// introHiddenSQL exposes two schemas; only public has introspection.
const introHiddenSQL = `
create schema private;
comment on schema public is e'@graphql({"inflect_names": true, "introspection": true})';
comment on schema private is e'@graphql({"inflect_names": true, "introspection": false})';
create type private.level as enum ('LOW', 'HIGH');
create table private.account (id serial primary key, email text not null, level private.level);
create table public.blog (
  id serial primary key,
  content text not null,
  level private.level,
  account_id int references private.account (id)
);
create table public.note (id serial primary key, account_id int not null references private.account (id));
create function private.secret_number() returns int stable language sql as $$ select 42 $$;
create function private._shout(rec public.blog) returns text stable language sql as $$ select upper(rec.content) $$;
insert into private.account (email) values ('alice@example.com');
insert into public.blog (content, account_id) values ('hello, world', 1);
`

// introConn returns a superuser connection to a fresh database with setup applied.
func introConn(t *testing.T, setup string) *pgx.Conn {
	t.Helper()
	return newTestDB(t, setup).conn
}

// introResponse is a decoded response body.
type introResponse struct {
	Data   map[string]any `json:"data"`
	Errors []struct {
		Message string `json:"message"`
	} `json:"errors"`
	raw []byte
}

func (r *introResponse) messages() []string {
	var out []string
	for _, e := range r.Errors {
		out = append(out, e.Message)
	}
	return out
}

func introExec(t *testing.T, conn *pgx.Conn, query string) *introResponse {
	t.Helper()
	body := NewEngine(Options{}).Execute(context.Background(), conn, Request{Query: query})
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	resp := &introResponse{raw: body}
	if err := dec.Decode(resp); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return resp
}

// introOK runs query and fails on any error.
func introOK(t *testing.T, conn *pgx.Conn, query string) map[string]any {
	t.Helper()
	resp := introExec(t, conn, query)
	if len(resp.Errors) > 0 {
		t.Fatalf("%s\n-> %s", query, resp.raw)
	}
	return resp.Data
}

// introPath walks a decoded JSON value along object keys and list indexes.
func introPath(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch p := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %q: %v is not an object", p, v)
			}
			if v, ok = m[p]; !ok {
				t.Fatalf("no key %q in %v", p, m)
			}
		case int:
			l, ok := v.([]any)
			if !ok || p >= len(l) {
				t.Fatalf("at [%d]: %v is not a long enough list", p, v)
			}
			v = l[p]
		}
	}
	return v
}

// introNames collects the "name" of each object of a list.
func introNames(t *testing.T, v any) []string {
	t.Helper()
	l, ok := v.([]any)
	if !ok {
		t.Fatalf("%v is not a list", v)
	}
	out := []string{}
	for _, e := range l {
		out = append(out, introPath(t, e, "name").(string))
	}
	return out
}

func introExpect(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		t.Errorf("%s:\n got %s\nwant %s", what, gj, wj)
	}
}

var metaTypeNames = []string{"__Directive", "__DirectiveLocation", "__EnumValue", "__Field", "__InputValue",
	"__Schema", "__Type", "__TypeKind"}

func TestIntrospectionIsOffByDefault(t *testing.T) {
	conn := introConn(t, `
		create table blog (id serial primary key, content text not null);
		insert into blog (content) values ('hello, world');`)
	for _, tc := range []struct{ query, data, message string }{
		{`{ __schema { types { name } } blogCollection { edges { node { id content } } } }`,
			`{"blogCollection":{"edges":[{"node":{"content":"hello, world","id":1}}]}}`, `Unknown field "__schema" on type Query`},
		{`{ __type(name: "blog") { name } blogCollection { edges { node { id } } } }`,
			`{"blogCollection":{"edges":[{"node":{"id":1}}]}}`, `Unknown field "__type" on type Query`},
		{`{ ...F } fragment F on Query { __schema { queryType { name } } }`, ``, `Unknown field "__schema" on type Query`},
	} {
		resp := introExec(t, conn, tc.query)
		introExpect(t, tc.query+" errors", resp.messages(), []string{tc.message})
		if tc.data == "" {
			if resp.Data != nil {
				t.Errorf("%s: data %v, want null", tc.query, resp.Data)
			}
			continue
		}
		got, _ := json.Marshal(resp.Data)
		var want any
		_ = json.Unmarshal([]byte(tc.data), &want)
		wantJSON, _ := json.Marshal(want)
		if string(got) != string(wantJSON) {
			t.Errorf("%s: partial data %s, want %s", tc.query, got, wantJSON)
		}
	}
	// The directive turns it on.
	if _, err := conn.Exec(context.Background(), `comment on schema public is '@graphql({"introspection": true})'`); err != nil {
		t.Fatal(err)
	}
	data := introOK(t, conn, `{ __type(name: "blog") { name kind } }`)
	introExpect(t, "__type after the directive", data["__type"], map[string]any{"name": "blog", "kind": "OBJECT"})
}

func TestIntrospectionSchema(t *testing.T) {
	conn := introConn(t, introDemoSQL)
	data := introOK(t, conn, `{
		__schema {
			description
			__typename
			queryType { name kind }
			mutationType { name }
			subscriptionType { name }
			directives { name description locations isRepeatable __typename
				args { name description defaultValue type { kind name ofType { kind name } } } }
			types { name kind }
			q: queryType { fields { name } }
		}
	}`)
	s := data["__schema"]
	introExpect(t, "description", introPath(t, s, "description"), "Represents the GraphQL schema of the database")
	introExpect(t, "__typename", introPath(t, s, "__typename"), "__schema")
	introExpect(t, "queryType", introPath(t, s, "queryType"), map[string]any{"name": "Query", "kind": "OBJECT"})
	introExpect(t, "mutationType", introPath(t, s, "mutationType"), map[string]any{"name": "Mutation"})
	introExpect(t, "subscriptionType", introPath(t, s, "subscriptionType"), nil)
	ifArg := func(description string) []any {
		return []any{map[string]any{"name": "if", "description": description, "defaultValue": nil,
			"type": map[string]any{"kind": "NON_NULL", "name": nil, "ofType": map[string]any{"kind": "SCALAR", "name": "Boolean"}}}}
	}
	locations := []any{"FIELD", "FRAGMENT_SPREAD", "INLINE_FRAGMENT"}
	introExpect(t, "directives", introPath(t, s, "directives"), []any{
		map[string]any{"name": "include", "__typename": "__Directive", "isRepeatable": false, "locations": locations,
			"description": "This field or fragment will be included only when the `if` argument is true.",
			"args":        ifArg("Included when true")},
		map[string]any{"name": "skip", "__typename": "__Directive", "isRepeatable": false, "locations": locations,
			"description": "This field or fragment will be skipped when the `if` argument is true.",
			"args":        ifArg("Skipped when true")},
	})

	types := introNames(t, introPath(t, s, "types"))
	if !sort.StringsAreSorted(types) {
		t.Errorf("types are not sorted by name: %v", types)
	}
	for _, want := range append([]string{"Account", "AccountConnection", "Blog", "BlogPost", "BlogPostAggregate",
		"BlogPostStatus", "BlogPostStatusFilter", "ReleasedPost", "Node", "PageInfo", "Query", "Mutation", "Cursor",
		"BigFloat", "Opaque", "FilterIs", "OrderByDirection", "StringFilter", "IDFilter"}, metaTypeNames...) {
		if !slices.Contains(types, want) {
			t.Errorf("types lack %s: %v", want, types)
		}
	}
	kinds := map[string]string{}
	for _, ty := range introPath(t, s, "types").([]any) {
		kinds[introPath(t, ty, "name").(string)] = introPath(t, ty, "kind").(string)
	}
	introExpect(t, "kinds", []string{kinds["Account"], kinds["Node"], kinds["BlogPostStatus"], kinds["BlogFilter"],
		kinds["UUID"], kinds["__TypeKind"], kinds["__Type"]},
		[]string{"OBJECT", "INTERFACE", "ENUM", "INPUT_OBJECT", "SCALAR", "ENUM", "OBJECT"})

	queryFields := introNames(t, introPath(t, s, "q", "fields"))
	introExpect(t, "Query.fields", queryFields, []string{"accountByPk", "accountCollection", "addNumbers",
		"blogByPk", "blogCollection", "blogPostByPk", "blogPostCollection", "node", "releasedPostByPk",
		"releasedPostCollection", "searchBlogs"})
}

func TestIntrospectionTypes(t *testing.T) {
	conn := introConn(t, introDemoSQL)
	const typeRef = `kind name ofType { kind name ofType { kind name ofType { kind name } } }`
	data := introOK(t, conn, `{
		account: __type(name: "Account") {
			kind name description __typename
			fields { name description __typename isDeprecated deprecationReason type { `+typeRef+` }
				args { name type { `+typeRef+` } } }
			interfaces { name kind }
			possibleTypes { name }
			enumValues { name }
			inputFields { name }
			ofType { name }
			specifiedByURL
			isOneOf
		}
		node: __type(name: "Node") { kind fields { name description } interfaces { name } possibleTypes { name } }
		status: __type(name: "BlogPostStatus") { kind enumValues(includeDeprecated: true) { name description isDeprecated __typename } fields { name } }
		string: __type(name: "String") { kind description fields { name } enumValues { name } interfaces { name } inputFields { name } possibleTypes { name } }
		filter: __type(name: "BlogFilter") { kind description isOneOf fields { name } inputFields { name description defaultValue __typename type { name } } }
		query: __type(name: "Query") { description fields(includeDeprecated: true) { name description
			args { name description defaultValue type { `+typeRef+` } } type { `+typeRef+` } } }
		connection: __type(name: "BlogPostConnection") { fields { name description type { `+typeRef+` } } }
		meta: __type(name: "__Type") { kind description fields { name args { name defaultValue } } }
		kinds: __type(name: "__TypeKind") { kind enumValues { name } }
		aggregate: __type(name: "BlogPostAggregate") { description fields { name description type { name } } }
		sum: __type(name: "BlogPostSumAggregateResult") { description fields { name description type { name } } }
		intFilter: __type(name: "IntFilter") { description inputFields { name } }
		direction: __type(name: "OrderByDirection") { description enumValues { name description } }
		missing: __type(name: "Nope")
	}`)

	account := data["account"]
	introExpect(t, "Account.kind", introPath(t, account, "kind"), "OBJECT")
	introExpect(t, "Account.description", introPath(t, account, "description"), "A user account")
	introExpect(t, "Account.__typename", introPath(t, account, "__typename"), "Account")
	introExpect(t, "Account.fields", introNames(t, introPath(t, account, "fields")),
		[]string{"nodeId", "id", "email", "firstName", "lastName", "createdAt", "blogCollection", "fullName"})
	introExpect(t, "Account.interfaces", introPath(t, account, "interfaces"), []any{map[string]any{"name": "Node", "kind": "INTERFACE"}})
	introExpect(t, "Account.possibleTypes", introPath(t, account, "possibleTypes"), nil)
	introExpect(t, "Account.enumValues", introPath(t, account, "enumValues"), []any{})
	introExpect(t, "Account.inputFields", introPath(t, account, "inputFields"), nil)
	introExpect(t, "Account.ofType", introPath(t, account, "ofType"), nil)
	introExpect(t, "Account.specifiedByURL", introPath(t, account, "specifiedByURL"), nil)
	// Issue 22: graphql-js's getIntrospectionQuery({oneOf: true}) failed with "unknown field on __Type: isOneOf".
	introExpect(t, "Account.isOneOf", introPath(t, account, "isOneOf"), nil)
	introExpect(t, "BlogFilter.isOneOf", introPath(t, data["filter"], "isOneOf"), false)
	email := introPath(t, account, "fields", 2)
	introExpect(t, "Account.email", email, map[string]any{"name": "email", "description": "Where we write to",
		"__typename": "email", "isDeprecated": false, "deprecationReason": nil, "args": []any{},
		"type": map[string]any{"kind": "NON_NULL", "name": nil,
			"ofType": map[string]any{"kind": "SCALAR", "name": "String", "ofType": nil}}})
	nodeID := introPath(t, account, "fields", 0)
	introExpect(t, "Account.nodeId.description", introPath(t, nodeID, "description"), "Globally Unique Record Identifier")
	blogs := introPath(t, account, "fields", 6)
	introExpect(t, "Account.blogCollection.args", introNames(t, introPath(t, blogs, "args")),
		[]string{"first", "last", "before", "after", "offset", "filter", "orderBy"})
	introExpect(t, "Account.blogCollection.orderBy", introPath(t, blogs, "args", 6, "type"), map[string]any{
		"kind": "LIST", "name": nil, "ofType": map[string]any{"kind": "NON_NULL", "name": nil,
			"ofType": map[string]any{"kind": "INPUT_OBJECT", "name": "BlogOrderBy", "ofType": nil}}})

	introExpect(t, "Node", data["node"], map[string]any{"kind": "INTERFACE",
		"fields":     []any{map[string]any{"name": "nodeId", "description": "Retrieves a record by `ID`"}},
		"interfaces": []any{},
		"possibleTypes": []any{map[string]any{"name": "Account"}, map[string]any{"name": "Blog"},
			map[string]any{"name": "BlogPost"}, map[string]any{"name": "ReleasedPost"}}})

	introExpect(t, "BlogPostStatus", data["status"], map[string]any{"kind": "ENUM", "fields": nil, "enumValues": []any{
		map[string]any{"name": "PENDING", "description": nil, "isDeprecated": false, "__typename": "PENDING"},
		map[string]any{"name": "RELEASED", "description": nil, "isDeprecated": false, "__typename": "RELEASED"}}})
	introExpect(t, "String", data["string"], map[string]any{"kind": "SCALAR", "description": "A string",
		"fields": nil, "enumValues": []any{}, "interfaces": []any{}, "inputFields": nil, "possibleTypes": nil})

	filter := data["filter"]
	introExpect(t, "BlogFilter.kind", introPath(t, filter, "kind"), "INPUT_OBJECT")
	introExpect(t, "BlogFilter.description", introPath(t, filter, "description"), nil)
	introExpect(t, "IntFilter", data["intFilter"], map[string]any{"description": `Boolean expression comparing fields on type "Int"`,
		"inputFields": []any{map[string]any{"name": "eq"}, map[string]any{"name": "gt"}, map[string]any{"name": "gte"},
			map[string]any{"name": "in"}, map[string]any{"name": "is"}, map[string]any{"name": "lt"},
			map[string]any{"name": "lte"}, map[string]any{"name": "neq"}}})
	introExpect(t, "OrderByDirection", data["direction"], map[string]any{"description": "Defines a per-field sorting order",
		"enumValues": []any{
			map[string]any{"name": "AscNullsFirst", "description": "Ascending order, nulls first"},
			map[string]any{"name": "AscNullsLast", "description": "Ascending order, nulls last"},
			map[string]any{"name": "DescNullsFirst", "description": "Descending order, nulls first"},
			map[string]any{"name": "DescNullsLast", "description": "Descending order, nulls last"}}})
	group := func(name, description, typeName string) map[string]any {
		return map[string]any{"name": name, "description": description, "type": map[string]any{"name": typeName}}
	}
	introExpect(t, "BlogPostAggregate", data["aggregate"], map[string]any{
		"description": "Aggregate results for `BlogPost`",
		"fields": []any{
			map[string]any{"name": "count", "description": "The number of records matching the query", "type": map[string]any{"name": nil}},
			group("sum", "Summation aggregates for numeric fields", "BlogPostSumAggregateResult"),
			group("avg", "Average aggregates for numeric fields", "BlogPostAvgAggregateResult"),
			group("min", "Minimum aggregates for comparable fields", "BlogPostMinAggregateResult"),
			group("max", "Maximum aggregates for comparable fields", "BlogPostMaxAggregateResult"),
		}})
	introExpect(t, "BlogPostSumAggregateResult", data["sum"], map[string]any{
		"description": "Result of summation aggregation for `BlogPost`",
		"fields": []any{
			group("blogId", "Sum of blogId across all matching records", "BigInt"),
			group("rating", "Sum of rating across all matching records", "BigFloat"),
		}})
	introExpect(t, "BlogFilter.fields", introPath(t, filter, "fields"), nil)
	introExpect(t, "BlogFilter.inputFields", introNames(t, introPath(t, filter, "inputFields")),
		[]string{"id", "ownerId", "name", "description", "createdAt", "nodeId", "and", "or", "not"})
	introExpect(t, "BlogFilter.id", introPath(t, filter, "inputFields", 0), map[string]any{"name": "id",
		"description": nil, "defaultValue": nil, "__typename": "id", "type": map[string]any{"name": "IntFilter"}})

	var byName = map[string]any{}
	for _, f := range introPath(t, data["query"], "fields").([]any) {
		byName[introPath(t, f, "name").(string)] = f
	}
	introExpect(t, "Query.description", introPath(t, data["query"], "description"), "The root type for querying data")
	coll := byName["blogCollection"]
	introExpect(t, "blogCollection.description", introPath(t, coll, "description"), "A pagable collection of type `Blog`")
	introExpect(t, "blogCollection.type", introPath(t, coll, "type"), map[string]any{"kind": "NON_NULL", "name": nil,
		"ofType": map[string]any{"kind": "OBJECT", "name": "BlogConnection", "ofType": nil}})
	introExpect(t, "blogCollection.first", introPath(t, coll, "args", 0), map[string]any{"name": "first",
		"description": "Query the first `n` records in the collection", "defaultValue": nil,
		"type": map[string]any{"kind": "SCALAR", "name": "Int", "ofType": nil}})
	introExpect(t, "blogByPk.id", introPath(t, byName["blogByPk"], "args", 0), map[string]any{"name": "id",
		"description": "The record's `id` value", "defaultValue": nil,
		"type": map[string]any{"kind": "NON_NULL", "name": nil, "ofType": map[string]any{"kind": "SCALAR", "name": "Int", "ofType": nil}}})
	introExpect(t, "addNumbers.args", introPath(t, byName["addNumbers"], "args"), []any{
		map[string]any{"name": "a", "description": nil, "defaultValue": nil,
			"type": map[string]any{"kind": "NON_NULL", "name": nil, "ofType": map[string]any{"kind": "SCALAR", "name": "Int", "ofType": nil}}},
		map[string]any{"name": "b", "description": nil, "defaultValue": "1",
			"type": map[string]any{"kind": "SCALAR", "name": "Int", "ofType": nil}}})
	introExpect(t, "node.description", introPath(t, byName["node"], "description"), "Retrieve a record by its `ID`")

	conn2 := map[string]any{}
	for _, f := range introPath(t, data["connection"], "fields").([]any) {
		conn2[introPath(t, f, "name").(string)] = f
	}
	introExpect(t, "BlogPostConnection.fields", introNames(t, introPath(t, data["connection"], "fields")),
		[]string{"edges", "pageInfo", "totalCount", "aggregate"})
	introExpect(t, "totalCount.description", introPath(t, conn2["totalCount"], "description"),
		"The total number of records matching the `filter` criteria")
	introExpect(t, "aggregate.description", introPath(t, conn2["aggregate"], "description"),
		"Aggregate functions calculated on the collection of `BlogPost`")
	introExpect(t, "edges.type", introPath(t, conn2["edges"], "type"), map[string]any{"kind": "NON_NULL", "name": nil,
		"ofType": map[string]any{"kind": "LIST", "name": nil, "ofType": map[string]any{"kind": "NON_NULL", "name": nil,
			"ofType": map[string]any{"kind": "OBJECT", "name": "BlogPostEdge"}}}})

	meta := data["meta"]
	introExpect(t, "__Type.kind", introPath(t, meta, "kind"), "OBJECT")
	introExpect(t, "__Type.fields", introNames(t, introPath(t, meta, "fields")), []string{"description", "enumValues",
		"fields", "inputFields", "interfaces", "isOneOf", "kind", "name", "ofType", "possibleTypes", "specifiedByURL"})
	introExpect(t, "__Type.fields.args", introPath(t, meta, "fields", 2, "args"),
		[]any{map[string]any{"name": "includeDeprecated", "defaultValue": "false"}})
	if d, _ := introPath(t, meta, "description").(string); !strings.HasPrefix(d, "The fundamental unit of any GraphQL Schema is the type.") {
		t.Errorf("__Type.description = %q", d)
	}
	introExpect(t, "__TypeKind", introNames(t, introPath(t, data["kinds"], "enumValues")),
		[]string{"SCALAR", "OBJECT", "INTERFACE", "UNION", "ENUM", "INPUT_OBJECT", "LIST", "NON_NULL"})
	introExpect(t, "missing type", data["missing"], nil)
}

func TestIntrospectionErrors(t *testing.T) {
	conn := introConn(t, introDemoSQL)
	for _, tc := range []struct{ query, message string }{
		{`{ __schema { bogus } }`, "unknown field in __Schema: bogus"},
		{`{ __type(name: "Blog") { bogus } }`, "unknown field on __Type: bogus"},
		{`{ __type(name: "Blog") { fields { bogus } } }`, "unknown field in __Field bogus"},
		{`{ __type(name: "Blog") { fields { args { bogus } } } }`, "unknown field in __InputValue: bogus"},
		{`{ __type(name: "BlogPostStatus") { enumValues { bogus } } }`, "unknown field in __EnumValue: bogus"},
		{`{ __schema { directives { bogus } } }`, "unknown field bogus in __Directive"},
		{`{ __type { name } }`, "Internal Error: failed to parse validated name"},
		{`{ __type(name: null) { name } }`, "Internal Error: failed to parse validated name"},
		{`{ __type(name: 7) { name } }`, "no name found for __type"},
	} {
		resp := introExec(t, conn, tc.query)
		introExpect(t, tc.query, resp.messages(), []string{tc.message})
	}
	// Other root fields still answer next to a failing introspection field.
	resp := introExec(t, conn, `{ __type(name: "Blog") { bogus } blogCollection { edges { node { name } } } }`)
	introExpect(t, "partial errors", resp.messages(), []string{"unknown field on __Type: bogus"})
	introExpect(t, "partial data", introPath(t, resp.Data, "blogCollection", "edges", 0, "node", "name"), "Notes")
	// Fragments, inline fragments, aliases and @skip/@include apply inside introspection.
	data := introOK(t, conn, `query($no: Boolean = false) {
		t: __type(name: "BlogPostStatus") { ...Kind ... on __Type { n: name } values: enumValues @include(if: $no) { name } }
	}
	fragment Kind on __Type { kind }`)
	introExpect(t, "fragments", data["t"], map[string]any{"kind": "ENUM", "n": "BlogPostStatus"})
}

func TestIntrospectionHiddenSchemas(t *testing.T) {
	conn := introConn(t, introHiddenSQL)
	if _, err := conn.Exec(context.Background(), `set search_path = public, private`); err != nil {
		t.Fatal(err)
	}
	data := introOK(t, conn, `{
		blog: __type(name: "Blog") { kind name fields { name } }
		account: __type(name: "Account") { kind name }
		level: __type(name: "Level") { name }
		filter: __type(name: "BlogFilter") { inputFields { name } }
		insert: __type(name: "BlogInsertInput") { inputFields { name } }
		user: __type(name: "User") { name }
		scalar: __type(name: "Int") { name }
		__schema {
			types { name }
			queryType { fields { name } }
			mutationType { fields { name } }
		}
		accountCollection { edges { node { email } } }
		blogCollection { edges { node { content shout account { email } } } }
		secretNumber
	}`)
	introExpect(t, "Blog", data["blog"], map[string]any{"kind": "OBJECT", "name": "Blog", "fields": []any{
		map[string]any{"name": "nodeId"}, map[string]any{"name": "id"}, map[string]any{"name": "content"},
		map[string]any{"name": "accountId"}}})
	introExpect(t, "hidden Account", data["account"], nil)
	introExpect(t, "hidden enum", data["level"], nil)
	introExpect(t, "unknown type", data["user"], nil)
	introExpect(t, "built-in scalar", data["scalar"], map[string]any{"name": "Int"})
	introExpect(t, "BlogFilter drops the hidden enum's filter", introNames(t, introPath(t, data["filter"], "inputFields")),
		[]string{"id", "content", "accountId", "nodeId", "and", "or", "not"})
	introExpect(t, "BlogInsertInput drops the hidden enum", introNames(t, introPath(t, data["insert"], "inputFields")),
		[]string{"content", "accountId"})
	types := introNames(t, introPath(t, data, "__schema", "types"))
	for _, name := range types {
		if strings.HasPrefix(name, "Account") || strings.HasPrefix(name, "Level") {
			t.Errorf("hidden type %s is listed", name)
		}
	}
	for _, want := range append([]string{"Blog", "BlogConnection", "BlogEdge", "BlogFilter", "BlogOrderBy", "Note",
		"Boolean", "Int", "String", "Query", "Mutation"}, metaTypeNames...) {
		if !slices.Contains(types, want) {
			t.Errorf("types lack %s", want)
		}
	}
	introExpect(t, "Query.fields", introNames(t, introPath(t, data, "__schema", "queryType", "fields")),
		[]string{"blogByPk", "blogCollection", "node", "noteByPk", "noteCollection"})
	introExpect(t, "Mutation.fields", introNames(t, introPath(t, data, "__schema", "mutationType", "fields")),
		[]string{"deleteFromBlogCollection", "deleteFromNoteCollection", "insertIntoBlogCollection",
			"insertIntoNoteCollection", "updateBlogCollection", "updateNoteCollection"})
	// The data fields of the hidden schema keep working.
	introExpect(t, "accountCollection", introPath(t, data, "accountCollection", "edges", 0, "node", "email"), "alice@example.com")
	introExpect(t, "blog.account", introPath(t, data, "blogCollection", "edges", 0, "node", "account", "email"), "alice@example.com")
	introExpect(t, "blog.shout", introPath(t, data, "blogCollection", "edges", 0, "node", "shout"), "HELLO, WORLD")
	introExpect(t, "secretNumber", data["secretNumber"], json.Number("42"))

	// With introspection off in every exposed schema, both fields are unknown again.
	if _, err := conn.Exec(context.Background(), `comment on schema public is '@graphql({"inflect_names": true})'`); err != nil {
		t.Fatal(err)
	}
	resp := introExec(t, conn, `{ __type(name: "Blog") { name } }`)
	introExpect(t, "all off", resp.messages(), []string{`Unknown field "__type" on type Query`})
}

// A Mutation type whose every field belongs to a hidden schema is hidden itself: graphql-js rejects an
// object type without fields.
func TestIntrospectionHiddenMutation(t *testing.T) {
	conn := introConn(t, `
		create schema private;
		comment on schema public is '@graphql({"introspection": true})';
		create table public.item (id int primary key);
		create table private.secret (id int primary key);
		grant usage on schema private to anon;
		grant select on public.item to anon;
		revoke insert, update, delete on public.item from anon;
		grant select, insert on private.secret to anon;
		set role anon;
		set search_path = public, private;`)
	data := introOK(t, conn, `{ __schema { mutationType { name } types { name } } m: __type(name: "Mutation") { name } }`)
	introExpect(t, "mutationType", introPath(t, data, "__schema", "mutationType"), nil)
	introExpect(t, "__type(Mutation)", data["m"], nil)
	if types := introNames(t, introPath(t, data, "__schema", "types")); slices.Contains(types, "Mutation") {
		t.Errorf("types list Mutation: %v", types)
	}
	resp := introExec(t, conn, `mutation { insertIntosecretCollection(objects: [{id: 1}]) { affectedCount } }`)
	introExpect(t, "hidden mutation still works", string(resp.raw),
		`{"data": {"insertIntosecretCollection": {"affectedCount": 1}}}`)
}

// TestIntrospectionGraphQLJS feeds the standard introspection query of graphql-js (what GraphiQL sends) through
// the engine and checks that graphql-js builds and validates a client schema from the answer.
func TestIntrospectionGraphQLJS(t *testing.T) {
	for _, tc := range []struct {
		name, setup, searchPath string
		sdl, absent             []string
	}{
		{name: "demo", setup: introDemoSQL, sdl: []string{
			`type Account implements Node {`,
			`"""Where we write to"""`,
			`blogCollection(`,
			`fullName: String`,
			`totalCount: Int!`,
			`aggregate: BlogPostAggregate`,
			`enum BlogPostStatus {`,
			`type ReleasedPost implements Node {`,
			`searchBlogs(`,
			`addNumbers(a: Int!, b: Int = 1): Int`,
			`archiveBlog(blogId: Int!): Blog`,
			`orderBy: [BlogOrderBy!]`,
		}, absent: []string{`type Subscription`}},
		{name: "subscriptions", setup: introDemoSQL + `comment on table blog is e'@graphql({"features": ["subscriptions"]})';`, sdl: []string{
			"type Subscription {\n  \"\"\"Retrieve a record of type `Blog` by its primary key\"\"\"\n  blogByPk(",
			"\"\"\"A pagable collection of type `Blog`\"\"\"\n  blogCollection(",
			"): [Blog!]!", `input BlogStreamCursor {`, `initialValue: BlogStreamCursorValue!`, `ordering: StreamOrdering = ASC`,
			`enum StreamOrdering {`,
		}},
		{name: "every type", setup: introAllTypesSQL, sdl: []string{
			`c_bool: Boolean`, `c_int2: Int`, `c_int8: BigInt`, `c_float4: Float`, `c_numeric: BigFloat`,
			`c_citext: String`, `c_varchar: String`, `c_char: String`, `c_jsonb: JSON`, `c_date: Date`, `c_time: Time`,
			`c_timestamptz: Datetime`, `c_uuid: UUID`, `c_enum: color`, `c_enum_elsewhere: Opaque`, `c_inet: Opaque`,
			`c_int_arr: [Int]`, `c_int8_arr: [BigInt]`, `c_jsonb_arr: [JSON]`, `c_enum_arr: [color]`,
			`c_not_null: String!`, `RED`,
		}, absent: []string{`c_composite`}},
		{name: "no tables", setup: `comment on schema public is '@graphql({"introspection": true})';`, sdl: []string{
			`node(`, `interface Node {`,
		}, absent: []string{`type Mutation`}},
		// Issue 18: a keyless view reached only through a computed field is an object type without Node.
		{name: "keyless view through a computed field", setup: `
comment on schema public is '@graphql({"introspection": true})';
create table users(id int primary key, phone text);
create view users_with_phone as select id, phone from users where phone is not null;
create table polls(id int primary key, user_id int references users(id));
create function author(rec polls) returns users_with_phone stable language sql as $$ select * from users_with_phone where id = rec.user_id $$;
grant select on users, users_with_phone, polls to anon, authenticated, service_role;`, sdl: []string{
			"type users_with_phone {\n  id: Int\n  phone: String\n}", `author: users_with_phone`,
		}, absent: []string{`users_with_phoneCollection`, `type users_with_phone implements`}},
		{name: "hidden schema", setup: introHiddenSQL, searchPath: "public, private", sdl: []string{
			`type Blog implements Node {`,
		}, absent: []string{`type Account `, `enum Level`, `LevelFilter`, `accountCollection`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn := introConn(t, tc.setup)
			if tc.searchPath != "" {
				if _, err := conn.Exec(context.Background(), "set search_path = "+tc.searchPath); err != nil {
					t.Fatal(err)
				}
			}
			for _, variant := range []string{"default", "full"} {
				query := introNode(t, nil, "query", variant)
				resp := introExec(t, conn, string(query))
				if len(resp.Errors) > 0 || resp.Data == nil {
					t.Fatalf("%s introspection query: %s", variant, resp.raw)
				}
				var result struct {
					Built   bool     `json:"built"`
					Error   string   `json:"error"`
					Invalid []string `json:"invalid"`
					SDL     string   `json:"sdl"`
				}
				out := introNode(t, resp.raw, "check")
				line, ok := bytes.CutPrefix(bytes.TrimSpace(out), []byte("RESULT "))
				if !ok {
					t.Fatalf("no RESULT line in %s", out)
				}
				if err := json.Unmarshal(line, &result); err != nil {
					t.Fatal(err)
				}
				if !result.Built {
					t.Fatalf("%s: buildClientSchema rejected the answer: %s", variant, result.Error)
				}
				if len(result.Invalid) > 0 {
					t.Errorf("%s: graphql-js finds the schema invalid:\n%s", variant, strings.Join(result.Invalid, "\n"))
				}
				for _, want := range tc.sdl {
					if !strings.Contains(result.SDL, want) {
						t.Errorf("%s: printed schema lacks %q", variant, want)
					}
				}
				for _, hidden := range tc.absent {
					if strings.Contains(result.SDL, hidden) {
						t.Errorf("%s: printed schema has %q", variant, hidden)
					}
				}
				if t.Failed() {
					t.Logf("schema:\n%s", result.SDL)
				}
			}
		})
	}
}

// ---- running graphql-js ----

var (
	introNPMOnce sync.Once
	introNPMErr  error
	introJSDir   = filepath.Join("..", "testdata", "graphql-js")
)

// introNode runs introspect.mjs with args and stdin, installing graphql-js first; it skips the test when
// Node.js is not installed.
func introNode(t *testing.T, stdin []byte, args ...string) []byte {
	t.Helper()
	node := testenv.LookPath(t, "the graphql-js introspection test needs Node.js 20 or later", "node")
	introNPMOnce.Do(func() {
		lock := filepath.Join(introJSDir, "package-lock.json")
		hidden := filepath.Join(introJSDir, "node_modules", ".package-lock.json")
		if li, err := os.Stat(lock); err == nil {
			if hi, err := os.Stat(hidden); err == nil && !hi.ModTime().Before(li.ModTime()) {
				return
			}
		}
		npm, err := exec.LookPath("npm")
		if err != nil {
			introNPMErr = fmt.Errorf("node is installed but npm is not: %w", err)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = introJSDir
		if out, err := cmd.CombinedOutput(); err != nil {
			introNPMErr = fmt.Errorf("npm ci: %w\n%s", err, out)
		}
	})
	if introNPMErr != nil {
		t.Fatal(introNPMErr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"introspect.mjs"}, args...)...)
	cmd.Dir = introJSDir
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node introspect.mjs %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes()
}

// An introspection answer too large for the compiled-request cache is still kept, per role and schema
// generation: the next introspection of the role is the same answer, not a second build, a role with the same
// privileges shares it, a role with others has its own, and a schema change replaces it. AnswerCacheBytes < 0 turns the keeping off.
func TestIntrospectionAnswerKeptPerRoleAndGeneration(t *testing.T) {
	d := newTestDB(t, blogFixture+`
		comment on schema public is '@graphql({"inflect_names": true, "introspection": true})';
		revoke all on blog_post from authenticated;`)
	// The compiled-request cache keeps nothing over 2 KiB; the introspection answer is far larger.
	d.engine = NewEngine(Options{CompiledCacheBytes: 16 << 10})
	ctx := context.Background()
	ask := func(role string) []byte {
		t.Helper()
		body := d.engine.ExecuteAs(ctx, d.conn, Session{Role: role, Claims: map[string]any{"role": role}, SearchPath: []string{"public"}},
			Request{Query: IntrospectionQuery})
		if !bytes.Contains(body, []byte(`"name": "Blog"`)) {
			t.Fatalf("%s: not an introspection answer: %.300s", role, body)
		}
		if len(body) <= 2<<10 {
			t.Fatalf("the answer has %d bytes, too few for the test", len(body))
		}
		return body
	}
	same := func(a, b []byte) bool { return unsafe.SliceData(a) == unsafe.SliceData(b) }

	anon := ask("anon")
	if again := ask("anon"); !same(anon, again) {
		t.Errorf("the second introspection of one role and schema generation was built again")
	}
	// kept once, not beside the parts it was written from
	d.engine.compiled.large.mu.Lock()
	for _, el := range d.engine.compiled.large.entries {
		if e := el.Value.(*compiledEntry); e.size > len(e.value.response)+len(IntrospectionQuery)+1024 {
			t.Errorf("an answer of %d bytes takes %d bytes of the budget", len(e.value.response), e.size)
		}
	}
	d.engine.compiled.large.mu.Unlock()
	// service_role may do what anon may here: they share one schema, and its introspection answer
	if service := ask("service_role"); !same(anon, service) {
		t.Errorf("service_role, with anon's privileges, was not answered from anon's schema")
	}
	authenticated := ask("authenticated")
	if same(anon, authenticated) || bytes.Contains(authenticated, []byte(`"name": "BlogPost"`)) ||
		!bytes.Contains(anon, []byte(`"name": "BlogPost"`)) {
		t.Errorf("authenticated, who cannot read blog_post, was answered anon's introspection")
	}
	d.exec(`comment on table blog is '@graphql({"description": "Blogs, changed"})'`)
	changed := ask("anon")
	if same(anon, changed) || !bytes.Contains(changed, []byte(`"description": "Blogs, changed"`)) {
		t.Errorf("after a schema change the old introspection answer was kept")
	}

	d.engine = NewEngine(Options{CompiledCacheBytes: 16 << 10, AnswerCacheBytes: -1})
	if first, second := ask("anon"), ask("anon"); same(first, second) {
		t.Errorf("AnswerCacheBytes < 0 kept the answer")
	}
}
