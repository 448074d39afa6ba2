package resolve

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/pgtest"
)

// Functions as root fields (spec 1.13), after pg_graphql's function_calls tests.
func TestFunctionRootFieldsByVolatility(t *testing.T) {
	for _, tc := range []struct{ volatility, op string }{{"volatile", "mutation"}, {"stable", "query"}, {"immutable", "query"}} {
		t.Run(tc.volatility, func(t *testing.T) {
			v := tc.volatility
			d := newTestDB(t, `
				comment on schema public is '@graphql({"inflect_names": true})';
				create function add_smallints(a smallint, b smallint) returns smallint language sql `+v+` as $$ select a + b $$;
				create function add_ints(a int, b int) returns int language sql `+v+` as $$ select a + b $$;
				comment on function add_ints is '@graphql({"name": "intsAdd"})';
				create function add_bigints(a bigint, b bigint) returns bigint language sql `+v+` as $$ select a + b $$;
				create function add_reals(a real, b real) returns real language sql `+v+` as $$ select a + b $$;
				create function add_doubles(a double precision, b double precision) returns double precision language sql `+v+` as $$ select a + b $$;
				create function add_numerics(a numeric, b numeric) returns numeric language sql `+v+` as $$ select a + b $$;
				create function and_bools(a bool, b bool) returns bool language sql `+v+` as $$ select a and b $$;
				create function uuid_identity(input uuid) returns uuid language sql `+v+` as $$ select input $$;
				create function concat_text(a text, b text) returns text language sql `+v+` as $$ select a || b $$;
				create function next_day(d date) returns date language sql `+v+` as $$ select d + interval '1 day' $$;
				create function next_hour(t time) returns time language sql `+v+` as $$ select t + interval '1 hour' $$;
				create function next_hour_with_timezone(t time with time zone) returns time with time zone language sql `+v+` as $$ select t + interval '1 hour' $$;
				create function next_minute(t timestamp) returns timestamp language sql `+v+` as $$ select t + interval '1 minute' $$;
				create function next_minute_with_timezone(t timestamptz) returns timestamptz language sql `+v+` as $$ select t + interval '1 minute' $$;
				create function get_json_obj(input json, key text) returns json language sql `+v+` as $$ select input -> key $$;
				create function get_jsonb_obj(input jsonb, key text) returns jsonb language sql `+v+` as $$ select input -> key $$;
				create function concat_chars(a char(2), b char(3)) returns char(5) language sql `+v+` as $$ select (a::char(2) || b::char(3))::char(5) $$;
				create function concat_varchars(a varchar(2), b varchar(3)) returns varchar(5) language sql `+v+` as $$ select (a::varchar(2) || b::varchar(3))::varchar(5) $$;
				set time zone 'Asia/Kolkata';
			`)
			for query, want := range map[string]string{
				`addSmallints(a: 1, b: 2)`:                                    `{"addSmallints": 3}`,
				`intsAdd(a: 2, b: 3)`:                                         `{"intsAdd": 5}`,
				`addBigints(a: 3, b: 4)`:                                      `{"addBigints": "7"}`,
				`addReals(a: 4.5, b: 5.6)`:                                    `{"addReals": 10.1}`,
				`addDoubles(a: 7.8, b: 9.1)`:                                  `{"addDoubles": 16.9}`,
				`addNumerics(a: "11.12", b: "13.14")`:                         `{"addNumerics": "24.26"}`,
				`andBools(a: true, b: false)`:                                 `{"andBools": false}`,
				`uuidIdentity(input: "d3ef3a8c-2c72-11ee-b094-776acede7221")`: `{"uuidIdentity": "d3ef3a8c-2c72-11ee-b094-776acede7221"}`,
				`concatText(a: "Hello ", b: "World")`:                         `{"concatText": "Hello World"}`,
				`nextDay(d: "2023-07-28")`:                                    `{"nextDay": "2023-07-29"}`,
				`nextHour(t: "10:20")`:                                        `{"nextHour": "11:20:00"}`,
				`nextHourWithTimezone(t: "10:20+05:30")`:                      `{"nextHourWithTimezone": "11:20:00+05:30"}`,
				`nextMinute(t: "2023-07-28 12:39:05")`:                        `{"nextMinute": "2023-07-28T12:40:05"}`,
				`nextMinuteWithTimezone(t: "2023-07-28 12:39:05+05:30")`:      `{"nextMinuteWithTimezone": "2023-07-28T12:40:05+05:30"}`,
				`getJsonObj(input: "{\"a\": {\"b\": \"foo\"}}", key: "a")`:    `{"getJsonObj": "{\"b\": \"foo\"}"}`,
				`getJsonbObj(input: "{\"a\": {\"b\": \"foo\"}}", key: "a")`:   `{"getJsonbObj": "{\"b\": \"foo\"}"}`,
				`concatChars(a: "He", b: "llo")`:                              `{"concatChars": "Hello"}`,
				`concatVarchars(a: "He", b: "llo")`:                           `{"concatVarchars": "Hello"}`,
			} {
				d.expect(tc.op+` { `+query+` }`, `{"data": `+want+`}`)
			}
			// A function is only on the root type its volatility selects.
			other, otherType := "query", "Query"
			if tc.op == "query" {
				other, otherType = "mutation", "Mutation"
			}
			got := d.query(other + ` { addSmallints(a: 1, b: 2) }`)
			if tc.op == "query" {
				if got != `{"data": null, "errors": [{"message": "Unknown type Mutation"}]}` {
					t.Errorf("stable function as mutation: %s", got)
				}
			} else if got != `{"data": null, "errors": [{"message": "Unknown field \"addSmallints\" on type `+otherType+`"}]}` {
				t.Errorf("volatile function as query: %s", got)
			}
		})
	}
}

func TestFunctionNamesAndArguments(t *testing.T) {
	d := newTestDB(t, `
		create function add_bigints(a bigint, b bigint) returns bigint language sql stable as $$ select a + b $$;
		create function "returnsOne"() returns int language sql stable as $$ select 1 $$;
		create function _hidden_prefix() returns int language sql stable as $$ select 2 $$;
		create function over_loaded(a int) returns int language sql stable as $$ select a $$;
		create function over_loaded(a text) returns text language sql stable as $$ select a $$;
		create function unnamed_arg(int) returns int language sql stable as $$ select $1 $$;
		create function var_args(variadic xs int[]) returns int language sql stable as $$ select array_length(xs, 1) $$;
		create function returns_record() returns record language sql stable as $$ select 1, 2 $$;
		create function returns_table() returns table(a int) language sql stable as $$ select 1 $$;
		create function returns_setof_int() returns setof int language sql stable as $$ select 1 $$;
		create type color as enum ('red', 'green');
		create function takes_enum(c color) returns int language sql stable as $$ select 1 $$;
		create function returns_enum() returns color language sql stable as $$ select 'red'::color $$;
		create function int_array(xs int[]) returns int[] language sql stable as $$ select xs || 9 $$;
		create function big_array() returns bigint[] language sql stable as $$ select array[1, 2]::bigint[] $$;
		create function text_default(greeting text default 'hello', n int default 2, flag bool default false,
		    ratio float8 default 3.14, other int default 1 + 1, maybe int default null)
		    returns text language sql stable as $$ select greeting || n || flag || ratio || other || coalesce(maybe, -1) $$;
		create function comma_default(xs smallint[] default '{4,2}') returns int language sql stable as $$ select array_length(xs, 1) $$;
		create function no_exec() returns int language sql stable as $$ select 3 $$;
		create schema dev;
		create table dev.book(id int primary key);
		create function "returnsBook"() returns dev.book stable language sql as $$ select db from dev.book db limit 1 $$;
		create type dev.invisible as enum ('ONLY');
		create function "badInputArg"(val dev.invisible) returns int stable language sql as $$ select 1 $$;
		create table account(id int primary key);
		create function accepts_table_tuple_type(rec account) returns int immutable language sql as $$ select 1 $$;
		create function takes_account(rec account, n int) returns int stable language sql as $$ select n $$;
		create schema extensions;
		create function extensions.in_extensions() returns int language sql stable as $$ select 4 $$;
		grant usage on schema extensions to service_role;
		grant execute on all functions in schema public, extensions to service_role;
		revoke execute on function no_exec() from public, service_role;
	`)
	d.expect(`{ add_bigints(a: 3, b: 4) returnsOne hidden_prefix }`,
		`{"data": {"returnsOne": 1, "add_bigints": "7", "hidden_prefix": 2}}`)
	for _, name := range []string{"over_loaded", "unnamed_arg", "var_args", "returns_record", "returns_table",
		"returns_setof_int", "takes_enum", "returns_enum", "no_exec", "in_extensions", "_hidden_prefix",
		"returnsBook", "badInputArg", "accepts_table_tuple_type", "takes_account"} {
		if got, want := d.query(`{ `+name+` }`), `{"data": null, "errors": [{"message": "Unknown field \"`+name+`\" on type Query"}]}`; got != want {
			t.Errorf("%s should be hidden: %s", name, got)
		}
	}
	d.expect(`{ int_array(xs: [1, 2]) big_array }`, `{"data": {"big_array": ["1", "2"], "int_array": [1, 2, 9]}}`)
	// A scalar given for a list argument is a one-element list.
	d.expect(`{ int_array(xs: 5) }`, `{"data": {"int_array": [5, 9]}}`)
	// Absent arguments take the SQL default; the literal defaults are the ones pg_graphql renders.
	d.expect(`{ text_default }`, `{"data": {"text_default": "hello2false3.142-1"}}`)
	d.expect(`{ text_default(greeting: "hi", maybe: 7, other: 0) }`, `{"data": {"text_default": "hi2false3.1407"}}`)
	// The default holding a comma breaks pg_graphql's split: the argument becomes required.
	if got := d.query(`{ comma_default }`); got != `{"data": null, "errors": [{"message": "Invalid input for NonNull type"}]}` {
		t.Errorf("comma default: %s", got)
	}
	d.expect(`{ comma_default(xs: [1, 2, 3]) }`, `{"data": {"comma_default": 3}}`)
	for query, want := range map[string]string{
		`{ add_bigints(a: 1) }`:             "Invalid input for NonNull type",
		`{ add_bigints(a: 1, b: 2, c: 3) }`: `Input contains extra keys ["c"]`,
		`{ add_bigints(a: "x", b: 1) }`:     "invalid input syntax for type bigint: \"x\"",
	} {
		got := d.query(query)
		if want == "" {
			if !strings.Contains(got, `"errors"`) {
				t.Errorf("%s: expected an error, got %s", query, got)
			}
			continue
		}
		if exp := `{"data": null, "errors": [{"message": ` + jsonString(want) + `}]}`; got != exp {
			t.Errorf("%s\n got: %s\nwant: %s", query, got, exp)
		}
	}
}

func TestFunctionReturningRowsAndSets(t *testing.T) {
	d := newTestDB(t, `
		comment on schema public is '@graphql({"inflect_names": true})';
		create table account(id serial primary key, email varchar(255) not null);
		insert into account(email) values ('aardvark@x.com'), ('bat@x.com'), ('cat@x.com');
		comment on table account is '@graphql({"totalCount": {"enabled": true}})';
		create function returns_account() returns account language sql stable as $$ select id, email from account $$;
		create function returns_account_with_id(id_to_search int) returns account language sql stable
		    as $$ select id, email from account where id = id_to_search $$;
		create function returns_setof_account(top int) returns setof account language sql stable
		    as $$ select id, email from account limit top $$;
		create function arg_named_first(first int) returns setof account language sql stable as $$ select id, email from account $$;
		create function arg_named_filter(filter int) returns setof account language sql stable as $$ select id, email from account $$;
		create function null_account() returns account language sql stable as $$ select null::int, null::varchar $$;
		create function bump(amount int) returns setof account language sql volatile
		    as $$ update account set email = email || amount where id <= 2 returning * $$;
		grant all on all tables in schema public to service_role;
	`)
	d.expect(`{ returnsAccount { id email nodeId __typename } }`,
		`{"data": {"returnsAccount": {"id": 1, "email": "aardvark@x.com", "nodeId": "WyJwdWJsaWMiLCAiYWNjb3VudCIsIDFd", "__typename": "Account"}}}`)
	d.expect(`{ returnsAccountWithId(idToSearch: 1) { email } }`,
		`{"data": {"returnsAccountWithId": {"email": "aardvark@x.com"}}}`)
	d.expect(`{ returnsAccountWithId(idToSearch: 42) { id email nodeId } }`,
		`{"data": {"returnsAccountWithId": null}}`)
	d.expect(`{ nullAccount { id } }`, `{"data": {"nullAccount": null}}`)
	d.expect(`{ returnsSetofAccount(top: 2, last: 1) { pageInfo { startCursor endCursor hasNextPage hasPreviousPage } edges { cursor node { nodeId id email __typename } __typename } totalCount __typename } }`,
		`{"data": {"returnsSetofAccount": {"edges": [{"node": {"id": 2, "email": "bat@x.com", "nodeId": "WyJwdWJsaWMiLCAiYWNjb3VudCIsIDJd", "__typename": "Account"}, "cursor": "WzJd", "__typename": "AccountEdge"}], "pageInfo": {"endCursor": "WzJd", "hasNextPage": false, "startCursor": "WzJd", "hasPreviousPage": true}, "__typename": "AccountConnection", "totalCount": 2}}}`)
	// Collection arguments apply to the function's rows.
	d.expect(`{ returnsSetofAccount(top: 3, filter: {id: {gt: 1}}, orderBy: [{id: DescNullsLast}]) { edges { node { id } } } }`,
		`{"data": {"returnsSetofAccount": {"edges": [{"node": {"id": 3}}, {"node": {"id": 2}}]}}}`)
	for _, name := range []string{"argNamedFirst", "argNamedFilter"} {
		if got := d.query(`{ ` + name + ` { __typename } }`); got != `{"data": null, "errors": [{"message": "Unknown field \"`+name+`\" on type Query"}]}` {
			t.Errorf("%s: %s", name, got)
		}
	}
	// A volatile setof function is a mutation returning a connection.
	d.expect(`mutation { bump(amount: 7) { edges { node { id email } } } }`,
		`{"data": {"bump": {"edges": [{"node": {"id": 1, "email": "aardvark@x.com7"}}, {"node": {"id": 2, "email": "bat@x.com7"}}]}}}`)
}

// Volatile functions run as mutations: in document order, in one transaction with the other mutation fields.
func TestVolatileFunctionsInMutationOrder(t *testing.T) {
	d := newTestDB(t, `
		create table counter(id int primary key, n int not null check (n < 100));
		insert into counter values (1, 0);
		create function incr(by_n int) returns int language sql volatile
		    as $$ update counter set n = n + by_n where id = 1 returning n $$;
		create function current_n() returns int language sql stable as $$ select n from counter where id = 1 $$;
		grant all on all tables in schema public to service_role;
	`)
	d.expect(`mutation { a: incr(by_n: 1) b: incr(by_n: 10) c: updatecounterCollection(set: {n: 50}) { records { n } } d: incr(by_n: 1) }`,
		`{"data": {"a": 1, "b": 11, "c": {"records": [{"n": 50}]}, "d": 51}}`)
	// A failure in a later field rolls back the earlier ones.
	got := d.query(`mutation { a: incr(by_n: 1) b: incr(by_n: 100) }`)
	if got != `{"data": null, "errors": [{"message": "new row for relation \"counter\" violates check constraint \"counter_n_check\""}]}` {
		t.Errorf("failing second call: %s", got)
	}
	d.expect(`{ current_n }`, `{"data": {"current_n": 51}}`)
}

func TestFunctionPrivilegesFollowExecute(t *testing.T) {
	d := newTestDB(t, `
		create function get_one() returns int language sql stable as $$ select 1 $$;
		comment on schema public is '@graphql({"inflect_names": true})';
	`)
	d.expect(`{ getOne }`, `{"data": {"getOne": 1}}`)
	d.exec(`revoke execute on function get_one() from public, service_role`)
	d.expect(`{ getOne }`, `{"data": null, "errors": [{"message": "Unknown field \"getOne\" on type Query"}]}`)
	d.exec(`grant execute on function get_one() to service_role`)
	d.expect(`{ getOne }`, `{"data": {"getOne": 1}}`)
}

// Computed fields (spec 1.12): functions taking the row type.
func TestComputedFields(t *testing.T) {
	d := newTestDB(t, `
		comment on schema public is '@graphql({"inflect_names": true})';
		create table account(id serial primary key, first_name text, last_name text, parent_id int, big bigint default 5);
		insert into account(first_name, last_name, parent_id) values ('Ada', 'Lovelace', null), ('Alan', 'Turing', 1), ('Grace', 'Hopper', 1);
		create function _full_name(rec account) returns text stable language sql as $$ select rec.first_name || ' ' || rec.last_name $$;
		comment on function _full_name is '@graphql({"description": "first and last"})';
		create function initials(account) returns text[] stable language sql as $$ select array[left($1.first_name, 1), left($1.last_name, 1)] $$;
		create function doubled(account) returns bigint stable language sql as $$ select $1.big * 2 $$;
		create function info(account) returns json stable language sql as $$ select json_build_object('n', $1.id) $$;
		create function parent_rec(account) returns account stable language sql as $$ select * from account where id = $1.parent_id $$;
		create function children(account) returns setof account stable language sql as $$ select * from account where parent_id = $1.id $$;
		create function first_child(account) returns setof account stable rows 1 language sql as $$ select * from account where parent_id = $1.id order by id limit 1 $$;
		create function as_table(account) returns table(a int) stable language sql as $$ select 1 $$;
		create function as_record(account) returns record stable language sql as $$ select 1, 2 $$;
		create function volatile_name(account) returns text volatile language sql as $$ select upper($1.first_name) $$;
		create function no_exec(account) returns int stable language sql as $$ select 1 $$;
		revoke execute on function no_exec(account) from public, service_role;
		grant all on all tables in schema public to service_role;
	`)
	d.expect(`{ accountByPk(id: 1) { fullName initials doubled info volatileName parentRec { id } firstChild { id } children(orderBy: [{id: DescNullsLast}]) { edges { node { id fullName } } } } }`,
		`{"data": {"accountByPk": {"info": "{\"n\" : 1}", "doubled": "10", "children": {"edges": [{"node": {"id": 3, "fullName": "Grace Hopper"}}, {"node": {"id": 2, "fullName": "Alan Turing"}}]}, "fullName": "Ada Lovelace", "initials": ["A", "L"], "parentRec": null, "firstChild": {"id": 2}, "volatileName": "ADA"}}}`)
	d.expect(`{ accountCollection(filter: {id: {eq: 2}}) { edges { node { parentRec { fullName } children { edges { node { id } } } } } } }`,
		`{"data": {"accountCollection": {"edges": [{"node": {"children": {"edges": []}, "parentRec": {"fullName": "Ada Lovelace"}}}]}}}`)
	for _, field := range []string{"asTable", "asRecord", "noExec"} {
		if got := d.query(`{ accountByPk(id: 1) { ` + field + ` } }`); got != `{"data": null, "errors": [{"message": "Unknown field \"`+field+`\" on type Account"}]}` {
			t.Errorf("%s: %s", field, got)
		}
	}
	// Computed fields need table-level SELECT: with column grants only they disappear.
	d.exec(`revoke select on account from service_role; grant select (id, first_name, last_name, parent_id) on account to service_role`)
	if got := d.query(`{ accountByPk(id: 1) { fullName } }`); got != `{"data": null, "errors": [{"message": "Unknown field \"fullName\" on type Account"}]}` {
		t.Errorf("column-level select: %s", got)
	}
	d.expect(`{ accountByPk(id: 1) { firstName } }`, `{"data": {"accountByPk": {"firstName": "Ada"}}}`)
}

func TestFunctionNameCollisions(t *testing.T) {
	d := newTestDB(t, `
		comment on schema public is '@graphql({"inflect_names": true})';
		create table account(id int primary key);
		insert into account values (1);
		create function account_collection() returns int stable language sql as $$ select 42 $$;
		create function account_by_pk() returns int stable language sql as $$ select 43 $$;
		create function "accountByPkExtra"() returns int stable language sql as $$ select 44 $$;
		grant select on account to service_role;
	`)
	// Functions named like a collection or byPk field are dropped; the table's fields stay.
	d.expect(`{ accountCollection { edges { node { id } } } accountByPk(id: 1) { id } accountByPkExtra }`,
		`{"data": {"accountByPk": {"id": 1}, "accountByPkExtra": 44, "accountCollection": {"edges": [{"node": {"id": 1}}]}}}`)
}

func TestFunctionArgumentDefaults(t *testing.T) {
	d := newTestDB(t, `
		comment on schema public is '@graphql({"inflect_names": true, "introspection": true})';
		create function func_with_null_defaults(a smallint default null, b integer default null, c boolean default null,
		    d real default null, e double precision default null, f text default null, g uuid default null)
		    returns text language sql immutable
		    as $$ select a::text || b::text || c::text || d::text || e::text || f::text || g::text $$;
		create function literal_defaults(req int, a smallint default 1, b bool default false, c float8 default 3.14,
		    d text default 'hello', e int default 1 + 1, f bigint default 5, g text default 'it''s')
		    returns text language sql stable as $$ select req::text || a || b || c || d || e || f || g $$;
	`)
	d.expect(`{ funcWithNullDefaults }`, `{"data": {"funcWithNullDefaults": null}}`)
	d.expect(`{ funcWithNullDefaults(a: 1, b: 2, c: false, d: 1.1, e: 2.3, f: "f_arg", g: "8871277a-de9c-4156-b31f-5b4060001081") }`,
		`{"data": {"funcWithNullDefaults": "12false1.12.3f_arg8871277a-de9c-4156-b31f-5b4060001081"}}`)
	d.expect(`{ funcWithNullDefaults(a: 1, c: false, e: 2.3, g: "8871277a-de9c-4156-b31f-5b4060001081") }`,
		`{"data": {"funcWithNullDefaults": null}}`)
	d.expect(`{ literalDefaults(req: 0) }`, `{"data": {"literalDefaults": "01false3.14hello25it's"}}`)
	body := d.query(`{ __type(name: "Query") { fields { name args { name defaultValue type { kind name } } } } }`)
	var resp struct {
		Data struct {
			Type struct {
				Fields []struct {
					Name string
					Args []struct {
						Name         string
						DefaultValue *string
						Type         struct{ Kind string }
					}
				}
			} `json:"__type"`
		}
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		t.Fatal(body)
	}
	got := map[string]string{}
	for _, f := range resp.Data.Type.Fields {
		for _, a := range f.Args {
			v := "null"
			if a.DefaultValue != nil {
				v = *a.DefaultValue
			}
			got[f.Name+"."+a.Name] = v + " " + a.Type.Kind
		}
	}
	for arg, want := range map[string]string{
		"funcWithNullDefaults.a": "null SCALAR", "funcWithNullDefaults.g": "null SCALAR",
		"literalDefaults.req": "null NON_NULL", "literalDefaults.a": "1 SCALAR", "literalDefaults.b": "false SCALAR",
		"literalDefaults.c": "3.14 SCALAR", "literalDefaults.d": `"hello" SCALAR`, "literalDefaults.e": "null SCALAR",
		"literalDefaults.f": "null SCALAR",
	} {
		if got[arg] != want {
			t.Errorf("%s: %q, want %q", arg, got[arg], want)
		}
	}
}

func TestComputedFieldsReturningOtherTablesAndEnums(t *testing.T) {
	d := newTestDB(t, `
		comment on schema public is '@graphql({"inflect_names": true})';
		create type mood as enum ('happy', 'sad');
		comment on type mood is '@graphql({"mappings": {"happy": "HAPPY"}})';
		create table account(id serial primary key, email text not null, m mood default 'happy');
		create table blog(id serial primary key, owner_id int not null references account(id), name text);
		insert into account(email) values ('a@x.com'), ('b@x.com');
		insert into blog(owner_id, name) values (1, 'b1'), (1, 'b2');
		create function account_mood(account) returns mood stable language sql as $$ select $1.m $$;
		create function account_blogs(account) returns setof blog stable language sql as $$ select * from blog where owner_id = $1.id $$;
		create function latest_blog(account) returns blog stable language sql as $$ select * from blog where owner_id = $1.id order by id desc limit 1 $$;
		create function first_account() returns account stable language sql as $$ select * from account order by id limit 1 $$;
		grant all on all tables in schema public to service_role;
		grant all on all sequences in schema public to service_role;
	`)
	// An enum result goes through the type's mappings like an enum column.
	d.expect(`{ accountByPk(id: 1) { accountMood m } }`, `{"data": {"accountByPk": {"m": "HAPPY", "accountMood": "HAPPY"}}}`)
	// A computed field returning rows of another table is that table's connection or node.
	d.expect(`{ firstAccount { email latestBlog { name owner { email } } accountBlogs(filter: {name: {neq: "b1"}}) { edges { node { name } } } } }`,
		`{"data": {"firstAccount": {"email": "a@x.com", "latestBlog": {"name": "b2", "owner": {"email": "a@x.com"}}, "accountBlogs": {"edges": [{"node": {"name": "b2"}}]}}}}`)
	if got := d.query(`{ firstAccount { accountBlogs { edges { node { email } } } } }`); got != `{"data": null, "errors": [{"message": "Unknown field 'email' on type 'Blog'"}]}` {
		t.Errorf("wrong table's field: %s", got)
	}
	// The same on the records of a mutation.
	d.expect(`mutation { updateAccountCollection(set: {email: "A"}, filter: {id: {eq: 1}}) { records { email accountMood accountBlogs(first: 1) { edges { node { name } } } } } }`,
		`{"data": {"updateAccountCollection": {"records": [{"email": "A", "accountMood": "HAPPY", "accountBlogs": {"edges": [{"node": {"name": "b1"}}]}}]}}}`)
}

func TestFunctionValueConversions(t *testing.T) {
	d := newTestDB(t, `
		comment on schema public is '@graphql({"inflect_names": true})';
		create table log(id serial primary key, msg text);
		create function do_nothing(a int) returns void volatile language sql as $$ insert into log(msg) values (a::text) $$;
		create function echo_json(j json) returns json stable language sql as $$ select j $$;
		create function out_params(a int, out b int, out c int) stable language sql as $$ select a, a $$;
		create function "camelArgs"("accountId" int, first_name text) returns text stable language sql as $$ select "accountId" || first_name $$;
		create function arr_text(xs text[]) returns text[] stable language sql as $$ select xs $$;
		create function num_arr() returns numeric[] stable language sql as $$ select array[1.5, 2]::numeric[] $$;
		create function json_arr() returns jsonb[] stable language sql as $$ select array['{"a":1}'::jsonb] $$;
		create function nothing() returns int stable language sql as $$ select null::int $$;
		grant all on all tables in schema public to service_role;
		grant all on all sequences in schema public to service_role;
	`)
	// A void function with named arguments is a mutation answering null (spec 1.13 note); it ran.
	d.expect(`mutation { doNothing(a: 4) }`, `{"data": {"doNothing": null}}`)
	if got := d.scalar("select string_agg(msg, ',') from log"); got != "4" {
		t.Errorf("log: %s", got)
	}
	d.expect(`{ echoJson(j: "{\"x\": [1, 2]}") }`, `{"data": {"echoJson": "{\"x\": [1, 2]}"}}`)
	d.expect(`{ echoJson(j: {x: 1}) }`, `{"data": null, "errors": [{"message": "Invalid input for JSON type"}]}`)
	d.expect(`{ outParams(a: 1) }`, `{"data": null, "errors": [{"message": "Unknown field \"outParams\" on type Query"}]}`)
	d.expect(`{ camelArgs(accountId: 1, firstName: "x") }`, `{"data": {"camelArgs": "1x"}}`)
	d.expect(`{ arrText(xs: ["a", null, "c\"d"]) }`, `{"data": {"arrText": ["a", null, "c\"d"]}}`)
	d.expect(`{ numArr jsonArr nothing }`, `{"data": {"numArr": ["1.5", "2"], "jsonArr": ["{\"a\": 1}"], "nothing": null}}`)
}

// issue_334_ambiguous_function: one name on several tables is fine for computed fields, but hides a root function.
func TestComputedFieldOverloads(t *testing.T) {
	d := newTestDB(t, `
		comment on schema public is '@graphql({"inflect_names": true})';
		create table account(id int primary key);
		create table blog(id int primary key);
		insert into account values (1); insert into blog values (2);
		create function label(account) returns text stable language sql as $$ select 'account ' || $1.id $$;
		create function label(blog) returns text stable language sql as $$ select 'blog ' || $1.id $$;
		create function label() returns text stable language sql as $$ select 'root' $$;
		grant select on all tables in schema public to service_role;
	`)
	d.expect(`{ accountByPk(id: 1) { label } blogByPk(id: 2) { label } }`,
		`{"data": {"blogByPk": {"label": "blog 2"}, "accountByPk": {"label": "account 1"}}}`)
	d.expect(`{ label }`, `{"data": null, "errors": [{"message": "Unknown field \"label\" on type Query"}]}`)
}

// Issue 18: functions with OUT or INOUT arguments are shown as pg_graphql shows them. It reads prorettype and
// proargtypes, not proargmodes: a function whose one output is an OUT or INOUT argument returns that
// argument's type and takes its input arguments; several outputs make it return record, which stays out.
func TestFunctionsWithOutParameters(t *testing.T) {
	d := newTestDB(t, `
		comment on schema public is '@graphql({"inflect_names": true, "introspection": true})';
		create table account(id int primary key, email text not null);
		insert into account values (1, 'a@x.com'), (2, 'b@x.com');
		create function plus_one(a int, out b int) stable language sql as $$ select a + 1 $$;
		create function twice(inout n int) stable language sql as $$ select n * 2 $$;
		create function out_first(out label text, n int) stable language sql as $$ select 'n=' || n $$;
		create function answer(out x int) stable language sql as $$ select 42 $$;
		create function two_outs(a int, out b int, out c int) stable language sql as $$ select a, a $$;
		create function io_and_out(inout a int, out b int) stable language sql as $$ select a, a $$;
		create function shout(rec account, out loud text) stable language sql as $$ select upper(rec.email) $$;
		create function account_by_id(id int, out acc account) stable language sql as $$ select a from account a where a.id = account_by_id.id $$;
		create function bump(inout n int) volatile language sql as $$ select n + 10 $$;
		create function rows_out(out v int) returns setof int stable language sql as $$ select 1 union all select 2 $$;
		grant select on account to service_role;
	`)
	d.expect(`{ plusOne(a: 1) twice(n: 3) outFirst(n: 2) answer }`,
		`{"data": {"twice": 6, "answer": 42, "plusOne": 2, "outFirst": "n=2"}}`)
	d.expect(`{ accountCollection(first: 1) { edges { node { email shout } } } }`,
		`{"data": {"accountCollection": {"edges": [{"node": {"email": "a@x.com", "shout": "A@X.COM"}}]}}}`)
	d.expect(`{ accountById(id: 2) { id email } }`, `{"data": {"accountById": {"id": 2, "email": "b@x.com"}}}`)
	d.expect(`mutation { bump(n: 1) }`, `{"data": {"bump": 11}}`)
	// An OUT argument takes no value.
	d.expect(`{ plusOne(a: 1, b: 2) }`, `{"data": null, "errors": [{"message": "Input contains extra keys [\"b\"]"}]}`)
	// Several outputs return record; a set of scalars stays out as for RETURNS SETOF int.
	for _, field := range []string{"twoOuts", "ioAndOut", "rowsOut"} {
		if got := d.query(`{ __type(name: "Query") { fields { name } } }`); strings.Contains(got, `"`+field+`"`) {
			t.Errorf("%s is a field: %s", field, got)
		}
	}
	if got, want := d.query(`{ __type(name: "Query") { fields { name args { name type { kind ofType { name } } } type { name } } } }`),
		`{"args": [{"name": "a", "type": {"kind": "NON_NULL", "ofType": {"name": "Int"}}}], "name": "plusOne", "type": {"name": "Int"}}`; !strings.Contains(got, want) {
		t.Errorf("Query's fields lack %s: %s", want, got)
	}
}

// A computed field is written as a column of its type is: a string (text, a date or time), an integer, a
// boolean, a bigint, a uuid or an enum whose answers need no escaping, without the layout pass, and the last
// five without to_json. The answer must be Postgres' own jsonb of the same values (a bigint is a string, as
// pg_graphql answers it; a mapped enum its mapped name), escapes and dates included; a float keeps to_json and
// the layout pass. Values go into JSON through JSON_SCALAR on PostgreSQL 17 and later.
func TestComputedFieldsAreWrittenAsColumns(t *testing.T) {
	d := newTestDB(t, `
		create type mood as enum ('glad', 'sad');
		comment on type mood is '@graphql({"mappings": {"sad": "SAD"}})';
		create table person(id int primary key, name text, born date);
		insert into person values (1, e'quote " backslash \\ newline \n é 😀', '2020-02-29'), (2, null, null);
		create function label(p person) returns text stable language sql as $$ select p.name $$;
		create function born_at(p person) returns timestamptz stable language sql as $$ select p.born::timestamptz $$;
		create function age(p person) returns int stable language sql as $$ select case when p.born is not null then 6 end $$;
		create function named(p person) returns bool stable language sql as $$ select p.name is not null $$;
		create function big(p person) returns bigint stable language sql as $$ select 9007199254740993 * p.id $$;
		create function token(p person) returns uuid stable language sql as $$ select md5(p.id::text)::uuid $$;
		create function feeling(p person) returns mood stable language sql as $$ select case p.id when 1 then 'sad'::mood end $$;
		create function score(p person) returns float8 stable language sql as $$ select 1.5e20 $$;
		grant all on all tables in schema public to service_role;
	`)
	const query = `{ personCollection(orderBy: [{id: AscNullsLast}]) { edges { node { id label born_at age named big token feeling } } } }`
	want := d.scalar(`select jsonb_build_object('data', jsonb_build_object('personCollection', jsonb_build_object('edges',
		jsonb_agg(jsonb_build_object('node', jsonb_build_object('id', p.id, 'label', label(p), 'born_at', born_at(p),
		'age', age(p), 'named', named(p), 'big', big(p)::text, 'token', token(p),
		'feeling', case feeling(p) when 'sad' then 'SAD' else feeling(p)::text end))
		order by p.id))))::text from person p`)
	if got := d.query(query); got != want {
		t.Errorf("response differs from Postgres' jsonb of the same values:\n got %s\nwant %s", got, want)
	}
	schema := d.schemaOf("service_role", gqlschema.Options{})
	c := compiledWith(t, schema, d.engine.planning(), query)
	sql := statementsText(c)
	if !c.roots[0].verbatim {
		t.Errorf("computed fields are not written verbatim:\n%s", sql)
	}
	written := "to_json"
	if pgtest.ServerMajor(t) >= 17 {
		written = "json_scalar"
	}
	if n := strings.Count(sql, written+`(`); n != 2 {
		t.Errorf("the engine's statement on PostgreSQL %d writes %d values through %s, want the two strings:\n%s",
			pgtest.ServerMajor(t), n, written, sql)
	}
	if c := compiledWith(t, schema, d.engine.planning(), `{ personCollection { edges { node { id score } } } }`); c.roots[0].verbatim {
		t.Errorf("a computed float is written verbatim:\n%s", statementsText(c))
	}
	// A root field is written through to_jsonb, whatever the output: a bigint is still a string.
	d.exec(`create function person_big() returns bigint stable language sql as $$ select 9007199254740993 $$`)
	d.expect(`{ person_big }`, `{"data": {"person_big": "9007199254740993"}}`)
}
