package resolve

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/pgtest"
)

// typesFixture has one column of every row of the type map (contract 1.9). Inflection is off so field names are
// the column names.
const typesFixture = `
comment on schema public is '@graphql({"introspection": true})';
create schema other;
create type other.mood as enum ('sad', 'happy');
create type color as enum ('red', 'light blue');
comment on type color is '@graphql({"mappings": {"light blue": "LIGHT_BLUE"}})';
create type complex as (r int, i int);
create table typed(
  id int primary key,
  f_bool bool, f_int2 int2, f_int4 int4, f_int8 int8, f_float4 float4, f_float8 float8,
  f_numeric numeric, f_numeric_p numeric(10,2),
  f_text text, f_varchar varchar(5), f_bpchar char(3), f_qchar "char", f_json json, f_jsonb jsonb,
  f_date date, f_time time, f_ts timestamp, f_tstz timestamptz, f_uuid uuid,
  f_color color, f_mood other.mood, f_timetz timetz, f_interval interval, f_inet inet, f_bytea bytea, f_money money,
  f_int4_arr int4[], f_int8_arr int8[], f_numeric_arr numeric[], f_json_arr json[], f_jsonb_arr jsonb[],
  f_text_arr text[], f_color_arr color[],
  f_complex complex
);
insert into typed values (1, true, 2, 4, 9007199254740993, 1.5, 2.25, 25.10, 3.5,
  'text', 'abc', 'ab', 'q', '{"b": 1, "a": [1, 2]}', '{"b": 1, "a": [1, 2]}',
  '2023-07-29', '11:20:00', '2023-07-28 12:40:05', '1900-01-02 02:00:00+00', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
  'light blue', 'happy', '11:20:00+02', '1 day 02:00:00', '1.1.1.1', '\x0102', 12.34,
  '{1,null,3}', '{9007199254740993}', '{1.50,2}', array['{"x": 1}'::json], array['{"y": 2}'::jsonb],
  '{a,"b c"}', '{red,"light blue"}', '(1,2)');
insert into typed(id) values (2);
grant all on all tables in schema public to service_role;
grant usage on schema other to service_role;
`

const allTypedFields = `id f_bool f_int2 f_int4 f_int8 f_float4 f_float8 f_numeric f_numeric_p f_text f_varchar f_bpchar
	f_qchar f_json f_jsonb f_date f_time f_ts f_tstz f_uuid f_color f_mood f_timetz f_interval f_inet f_bytea f_money
	f_int4_arr f_int8_arr f_numeric_arr f_json_arr f_jsonb_arr f_text_arr f_color_arr`

// TestTypeMapOutput checks the output JSON value of every row of the type map: numbers for int2/int4/float,
// strings for bigint/numeric/json, ISO dates, enum mappings, to_jsonb for Opaque, arrays of strings for
// int8[]/numeric[]/json[]/jsonb[], and keys in jsonb order.
func TestTypeMapOutput(t *testing.T) {
	d := newTestDB(t, typesFixture)
	d.expect(`{ typedCollection { edges { node { `+allTypedFields+` } } } }`,
		`{"data": {"typedCollection": {"edges": [{"node": {"id": 1, "f_ts": "2023-07-28T12:40:05", "f_bool": true, `+
			`"f_date": "2023-07-29", "f_inet": "1.1.1.1", "f_int2": 2, "f_int4": 4, "f_int8": "9007199254740993", `+
			`"f_json": "{\"b\": 1, \"a\": [1, 2]}", "f_mood": "happy", "f_text": "text", "f_time": "11:20:00", `+
			`"f_tstz": "1900-01-02T02:00:00+00:00", "f_uuid": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "f_bytea": "\\x0102", `+
			`"f_color": "LIGHT_BLUE", "f_jsonb": "{\"a\": [1, 2], \"b\": 1}", "f_money": "$12.34", "f_qchar": "q", `+
			`"f_bpchar": "ab ", "f_float4": 1.5, "f_float8": 2.25, "f_timetz": "11:20:00+02", "f_numeric": "25.10", `+
			`"f_varchar": "abc", "f_int4_arr": [1, null, 3], "f_int8_arr": ["9007199254740993"], "f_interval": "1 day 02:00:00", `+
			`"f_json_arr": ["{\"x\": 1}"], "f_text_arr": ["a", "b c"], "f_color_arr": ["red", "light blue"], `+
			`"f_jsonb_arr": ["{\"y\": 2}"], "f_numeric_p": "3.50", "f_numeric_arr": ["1.50", "2"]}}, `+
			`{"node": {"id": 2, "f_ts": null, "f_bool": null, "f_date": null, "f_inet": null, "f_int2": null, "f_int4": null, `+
			`"f_int8": null, "f_json": null, "f_mood": null, "f_text": null, "f_time": null, "f_tstz": null, "f_uuid": null, `+
			`"f_bytea": null, "f_color": null, "f_jsonb": null, "f_money": null, "f_qchar": null, "f_bpchar": null, `+
			`"f_float4": null, "f_float8": null, "f_timetz": null, "f_numeric": null, "f_varchar": null, "f_int4_arr": null, `+
			`"f_int8_arr": null, "f_interval": null, "f_json_arr": null, "f_text_arr": null, "f_color_arr": null, `+
			`"f_jsonb_arr": null, "f_numeric_p": null, "f_numeric_arr": null}}]}}}`)
	// Composite columns are omitted everywhere.
	d.expect(`{ typedCollection { edges { node { f_complex } } } }`,
		`{"data": null, "errors": [{"message": "Unknown field 'f_complex' on type 'typed'"}]}`)
	// A JSON null inside a jsonb column comes out as null (#>> '{}'), a JSON string as its text.
	d.exec(`update typed set f_jsonb = 'null', f_json = '"s"' where id = 2`)
	d.expect(`{ typedCollection(filter: {id: {eq: 2}}) { edges { node { f_json f_jsonb } } } }`,
		`{"data": {"typedCollection": {"edges": [{"node": {"f_json": "s", "f_jsonb": null}}]}}}`)
}

// TestTypeMapTimeZone: timestamptz renders with the offset of the session's TimeZone.
func TestTypeMapTimeZone(t *testing.T) {
	d := newTestDB(t, typesFixture)
	if _, err := d.conn.Exec(context.Background(), `set timezone to 'Etc/GMT+8'`); err != nil {
		t.Fatal(err)
	}
	d.expect(`{ typedCollection(first: 1) { edges { node { f_tstz f_ts } } } }`,
		`{"data": {"typedCollection": {"edges": [{"node": {"f_ts": "2023-07-28T12:40:05", "f_tstz": "1900-01-01T18:00:00-08:00"}}]}}}`)
	// Input is parsed in the session time zone as well.
	d.expect(`{ typedCollection(filter: {f_tstz: {eq: "1900-01-01 18:00:00"}}) { edges { node { id } } } }`,
		`{"data": {"typedCollection": {"edges": [{"node": {"id": 1}}]}}}`)
}

// typeSignatures renders the fields (or input fields) of a type as "name: Type" in SDL notation.
func typeSignatures(t *testing.T, d *testDB, typeName string) string {
	t.Helper()
	body := d.query(`{ __type(name: "` + typeName + `") { fields { name type { ...R } } inputFields { name type { ...R } } } }
		fragment R on __Type { kind name ofType { kind name ofType { kind name ofType { kind name } } } }`)
	type ref struct {
		Kind   string
		Name   *string
		OfType *ref
	}
	var resp struct {
		Data struct {
			Type *struct {
				Fields, InputFields []struct {
					Name string
					Type ref
				}
			} `json:"__type"`
		}
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil || resp.Data.Type == nil {
		t.Fatalf("__type(%s): %s", typeName, body)
	}
	var render func(r *ref) string
	render = func(r *ref) string {
		switch r.Kind {
		case "NON_NULL":
			return render(r.OfType) + "!"
		case "LIST":
			return "[" + render(r.OfType) + "]"
		}
		return *r.Name
	}
	var out []string
	for _, f := range append(resp.Data.Type.Fields, resp.Data.Type.InputFields...) {
		out = append(out, f.Name+": "+render(&f.Type))
	}
	return strings.Join(out, ", ")
}

// TestTypeMapSchema checks the GraphQL type of every column, which columns are filterable (and with which filter
// type) and which are orderable.
func TestTypeMapSchema(t *testing.T) {
	d := newTestDB(t, typesFixture)
	for _, c := range []struct{ typeName, want string }{
		{"typed", "nodeId: ID!, id: Int!, f_bool: Boolean, f_int2: Int, f_int4: Int, f_int8: BigInt, f_float4: Float, " +
			"f_float8: Float, f_numeric: BigFloat, f_numeric_p: BigFloat, f_text: String, f_varchar: String, " +
			"f_bpchar: String, f_qchar: String, f_json: JSON, f_jsonb: JSON, f_date: Date, f_time: Time, f_ts: Datetime, " +
			"f_tstz: Datetime, f_uuid: UUID, f_color: color, f_mood: Opaque, f_timetz: Opaque, f_interval: Opaque, " +
			"f_inet: Opaque, f_bytea: Opaque, f_money: Opaque, f_int4_arr: [Int], f_int8_arr: [BigInt], " +
			"f_numeric_arr: [BigFloat], f_json_arr: [JSON], f_jsonb_arr: [JSON], f_text_arr: [String], f_color_arr: [color]"},
		{"typedFilter", "id: IntFilter, f_bool: BooleanFilter, f_int2: IntFilter, f_int4: IntFilter, f_int8: BigIntFilter, " +
			"f_float4: FloatFilter, f_float8: FloatFilter, f_numeric: BigFloatFilter, f_numeric_p: BigFloatFilter, " +
			"f_text: StringFilter, f_varchar: StringFilter, f_bpchar: StringFilter, f_qchar: StringFilter, " +
			"f_date: DateFilter, f_time: TimeFilter, f_ts: DatetimeFilter, f_tstz: DatetimeFilter, f_uuid: UUIDFilter, " +
			"f_color: colorFilter, f_mood: OpaqueFilter, f_timetz: OpaqueFilter, f_interval: OpaqueFilter, " +
			"f_inet: OpaqueFilter, f_bytea: OpaqueFilter, f_money: OpaqueFilter, f_int4_arr: IntListFilter, " +
			"f_int8_arr: BigIntListFilter, f_numeric_arr: BigFloatListFilter, f_text_arr: StringListFilter, " +
			"nodeId: IDFilter, and: [typedFilter!], or: [typedFilter!], not: typedFilter"},
		{"typedOrderBy", "id: OrderByDirection, f_bool: OrderByDirection, f_int2: OrderByDirection, f_int4: OrderByDirection, " +
			"f_int8: OrderByDirection, f_float4: OrderByDirection, f_float8: OrderByDirection, f_numeric: OrderByDirection, " +
			"f_numeric_p: OrderByDirection, f_text: OrderByDirection, f_varchar: OrderByDirection, f_bpchar: OrderByDirection, " +
			"f_qchar: OrderByDirection, f_date: OrderByDirection, f_time: OrderByDirection, f_ts: OrderByDirection, " +
			"f_tstz: OrderByDirection, f_uuid: OrderByDirection, f_color: OrderByDirection, f_mood: OrderByDirection, " +
			"f_timetz: OrderByDirection, f_interval: OrderByDirection, f_inet: OrderByDirection, f_bytea: OrderByDirection, " +
			"f_money: OrderByDirection"},
		{"colorFilter", "eq: color, in: [color!], is: FilterIs, neq: color"},
		{"OpaqueFilter", "eq: Opaque, is: FilterIs"},
		{"UUIDFilter", "eq: UUID, in: [UUID!], is: FilterIs, neq: UUID"},
		{"BooleanFilter", "eq: Boolean, is: FilterIs"},
		{"IDFilter", "eq: ID"},
		{"IntListFilter", "containedBy: [Int!], contains: [Int!], eq: [Int!], is: FilterIs, overlaps: [Int!]"},
		{"StringFilter", "eq: String, gt: String, gte: String, ilike: String, in: [String!], iregex: String, is: FilterIs, " +
			"like: String, lt: String, lte: String, neq: String, regex: String, startsWith: String"},
	} {
		if got := typeSignatures(t, d, c.typeName); got != c.want {
			t.Errorf("%s\n got: %s\nwant: %s", c.typeName, got, c.want)
		}
	}
	// Enum values are the labels, renamed by mappings.
	d.expect(`{ __type(name: "color") { enumValues { name } } }`,
		`{"data": {"__type": {"enumValues": [{"name": "red"}, {"name": "LIGHT_BLUE"}]}}}`)
	// The enum outside the exposed schemas is not a type at all.
	d.expect(`{ __type(name: "mood") { name } }`, `{"data": {"__type": null}}`)
}

// TestTypeMapInput checks what each scalar accepts as input (through filters) and the exact coercion errors.
func TestTypeMapInput(t *testing.T) {
	d := newTestDB(t, typesFixture)
	match := `{"data": {"typedCollection": {"edges": [{"node": {"id": 1}}]}}}`
	none := `{"data": {"typedCollection": {"edges": []}}}`
	for _, c := range []struct{ filter, want string }{
		{`{f_bool: {eq: true}}`, match},
		{`{f_int2: {eq: 2}}`, match},
		{`{f_int4: {eq: 4}}`, match},
		{`{f_int8: {eq: "9007199254740993"}}`, match},
		{`{f_int8: {eq: 9007199254740993}}`, match},
		{`{f_float4: {eq: 1.5}}`, match},
		{`{f_float8: {gt: 2}}`, match},
		{`{f_numeric: {eq: "25.1"}}`, match},
		{`{f_numeric_p: {lt: "3.51"}}`, match},
		{`{f_text: {eq: "text"}}`, match},
		{`{f_varchar: {eq: "abc"}}`, match},
		{`{f_bpchar: {eq: "ab"}}`, match},
		{`{f_qchar: {eq: "q"}}`, match},
		{`{f_date: {eq: "2023-07-29"}}`, match},
		{`{f_time: {eq: "11:20"}}`, match},
		{`{f_ts: {eq: "2023-07-28T12:40:05"}}`, match},
		{`{f_tstz: {eq: "1900-01-02T02:00:00Z"}}`, match},
		{`{f_uuid: {eq: "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"}}`, match},
		{`{f_color: {eq: LIGHT_BLUE}}`, match},
		{`{f_color: {eq: "LIGHT_BLUE"}}`, match},
		{`{f_color: {neq: red}}`, match},
		{`{f_color: {in: [red, LIGHT_BLUE]}}`, match},
		{`{f_mood: {eq: "happy"}}`, match},
		{`{f_timetz: {eq: "11:20:00+02"}}`, match},
		{`{f_interval: {eq: "1 day 3 hours"}}`, none},
		{`{f_interval: {eq: "1 day 2 hours"}}`, match},
		{`{f_inet: {eq: "1.1.1.1"}}`, match},
		{`{f_bytea: {eq: "\\x0102"}}`, match},
		{`{f_money: {eq: 12.34}}`, match},
		{`{f_int2: {eq: 2.5}}`, `{"data": null, "errors": [{"message": "Invalid input for Int type"}]}`},
		{`{f_int4: {eq: "4"}}`, `{"data": null, "errors": [{"message": "Invalid input for Int type"}]}`},
		{`{f_float8: {eq: "2.25"}}`, `{"data": null, "errors": [{"message": "Invalid input for Float type"}]}`},
		{`{f_numeric: {eq: 25.1}}`, `{"data": null, "errors": [{"message": "Invalid input for BigFloat type. String required"}]}`},
		{`{f_int8: {eq: 1.5}}`, `{"data": null, "errors": [{"message": "invalid input syntax for type bigint: \"1.5\""}]}`},
		{`{f_int8: {eq: true}}`, `{"data": null, "errors": [{"message": "Invalid input for BigInt type"}]}`},
		{`{f_bool: {eq: "true"}}`, `{"data": null, "errors": [{"message": "Invalid input for Boolean type"}]}`},
		{`{f_text: {eq: 1}}`, `{"data": null, "errors": [{"message": "Invalid input for String(None) type"}]}`},
		{`{f_varchar: {eq: 1}}`, `{"data": null, "errors": [{"message": "Invalid input for String(Some(5)) type"}]}`},
		{`{f_varchar: {eq: "abcdef"}}`, `{"data": null, "errors": [{"message": "Invalid input for String type. Maximum character length 5"}]}`},
		{`{f_varchar: {in: ["abc", "abcdef"]}}`, `{"data": null, "errors": [{"message": "Invalid input for String type. Maximum character length 5"}]}`},
		{`{f_varchar: {like: "%abcdef%"}}`, `{"data": null, "errors": [{"message": "Invalid input for String type. Maximum character length 5"}]}`},
		// pg_graphql counts bytes: "äää" is 6 bytes.
		{`{f_varchar: {eq: "äää"}}`, `{"data": null, "errors": [{"message": "Invalid input for String type. Maximum character length 5"}]}`},
		{`{f_bpchar: {eq: "abcd"}}`, `{"data": null, "errors": [{"message": "Invalid input for String type. Maximum character length 3"}]}`},
		{`{f_date: {eq: 20230729}}`, `{"data": null, "errors": [{"message": "Invalid input for Date type"}]}`},
		{`{f_time: {eq: 1}}`, `{"data": null, "errors": [{"message": "Invalid input for Time type"}]}`},
		{`{f_ts: {eq: 1}}`, `{"data": null, "errors": [{"message": "Invalid input for Datetime type"}]}`},
		{`{f_uuid: {eq: 1}}`, `{"data": null, "errors": [{"message": "Invalid input for UUID type"}]}`},
		{`{f_color: {eq: blue}}`, `{"data": null, "errors": [{"message": "Invalid input for color type"}]}`},
		{`{f_color: {eq: "light blue"}}`, `{"data": null, "errors": [{"message": "Invalid input for color type"}]}`},
		{`{f_color: {eq: 1}}`, `{"data": null, "errors": [{"message": "Invalid input for color type"}]}`},
		{`{nodeId: {eq: 1}}`, `{"data": null, "errors": [{"message": "Invalid input for ID type"}]}`},
		// Postgres parses what the type system lets through.
		{`{f_uuid: {eq: "not-a-uuid"}}`, `{"data": null, "errors": [{"message": "invalid input syntax for type uuid: \"not-a-uuid\""}]}`},
		{`{f_date: {eq: "yesterday-ish"}}`, `{"data": null, "errors": [{"message": "invalid input syntax for type date: \"yesterday-ish\""}]}`},
		{`{f_int4: {eq: 3000000000}}`, `{"data": null, "errors": [{"message": "value \"3000000000\" is out of range for type integer"}]}`},
	} {
		if got := d.query(`{ typedCollection(filter: ` + c.filter + `) { edges { node { id } } } }`); got != c.want {
			t.Errorf("filter %s\n got: %s\nwant: %s", c.filter, got, c.want)
		}
	}
}

// TestTypeMapWrite round-trips every writable type through an insert and checks the values that come back,
// including arrays given as JSON lists, a scalar coerced to a one-element list, and enum mappings on input.
func TestTypeMapWrite(t *testing.T) {
	d := newTestDB(t, typesFixture)
	d.expect(`mutation { insertIntotypedCollection(objects: [{id: 3, f_int8: 12, f_numeric: "1.50", f_json: "{\"k\": [true]}",
		f_jsonb: "[1, 2]", f_color: LIGHT_BLUE, f_varchar: "vw", f_int4_arr: [1, null], f_int8_arr: "5", f_text_arr: "solo",
		f_numeric_arr: ["0.1"], f_jsonb_arr: ["{}"], f_color_arr: [red], f_interval: "90 minutes", f_inet: "10.0.0.1/8",
		f_tstz: "2020-01-01T00:00:00+02:00", f_date: "2020-02-29"}]) {
		records { id f_int8 f_numeric f_json f_jsonb f_color f_varchar f_int4_arr f_int8_arr f_text_arr f_numeric_arr
		f_jsonb_arr f_color_arr f_interval f_inet f_tstz f_date } } }`,
		`{"data": {"insertIntotypedCollection": {"records": [{"id": 3, "f_date": "2020-02-29", "f_inet": "10.0.0.1/8", `+
			`"f_int8": "12", "f_json": "{\"k\": [true]}", "f_tstz": "2019-12-31T22:00:00+00:00", "f_color": "LIGHT_BLUE", `+
			`"f_jsonb": "[1, 2]", "f_numeric": "1.50", "f_varchar": "vw", "f_int4_arr": [1, null], "f_int8_arr": ["5"], `+
			`"f_interval": "01:30:00", "f_text_arr": ["solo"], "f_color_arr": ["red"], "f_jsonb_arr": ["{}"], `+
			`"f_numeric_arr": ["0.1"]}]}}}`)
	d.expect(`mutation { insertIntotypedCollection(objects: [{id: 4, f_varchar: "toolong"}]) { affectedCount } }`,
		`{"data": null, "errors": [{"message": "Invalid input for String type. Maximum character length 5"}]}`)
	d.expect(`mutation { insertIntotypedCollection(objects: [{id: 4, f_numeric: 1}]) { affectedCount } }`,
		`{"data": null, "errors": [{"message": "Invalid input for BigFloat type. String required"}]}`)
	d.expect(`mutation { insertIntotypedCollection(objects: [{id: 4, f_json: {a: 1}}]) { affectedCount } }`,
		`{"data": null, "errors": [{"message": "Invalid input for JSON type"}]}`)
	// Composite columns are not writable either.
	d.expect(`mutation { insertIntotypedCollection(objects: [{id: 4, f_complex: "(1,2)"}]) { affectedCount } }`,
		`{"data": null, "errors": [{"message": "Input for type typedInsertInput contains extra keys [\"f_complex\"]"}]}`)
}

// TestTypeMapEnumWithoutUsage: an enum the role may not use is no type; its columns fall back to Opaque.
func TestTypeMapEnumWithoutUsage(t *testing.T) {
	d := newTestDB(t, typesFixture+`revoke usage on type color from public;`)
	d.expect(`{ __type(name: "color") { name } }`, `{"data": {"__type": null}}`)
	if got := typeSignatures(t, d, "typed"); !strings.Contains(got, "f_color: Opaque,") {
		t.Errorf("typed fields: %s", got)
	}
	d.expect(`{ typedCollection(filter: {f_color: {eq: "light blue"}}) { edges { node { f_color } } } }`,
		`{"data": {"typedCollection": {"edges": [{"node": {"f_color": "light blue"}}]}}}`)
}

// TestResponseShapes: validation errors of one root field leave the others' data (partial response), a SQL
// error fails the whole request with data null, request-level errors have no data key (contract 2.2).
func TestResponseShapes(t *testing.T) {
	d := newTestDB(t, typesFixture)
	d.expect(`{ a: typedCollection(filter: {f_int4: {eq: "x"}}) { edges { cursor } } b: typedByPk(id: 2) { id } c: typedCollection(filter: {f_numeric: {eq: 1}}) { edges { cursor } } }`,
		`{"data": {"b": {"id": 2}}, "errors": [{"message": "Invalid input for Int type"}, {"message": "Invalid input for BigFloat type. String required"}]}`)
	d.expect(`{ a: typedCollection(filter: {f_int4: {eq: "x"}}) { edges { cursor } } c: typedCollection(filter: {f_numeric: {eq: 1}}) { edges { cursor } } }`,
		`{"data": null, "errors": [{"message": "Invalid input for Int type"}, {"message": "Invalid input for BigFloat type. String required"}]}`)
	d.expect(`{ a: typedByPk(id: 1) { id } b: typedCollection(filter: {f_uuid: {eq: "nope"}}) { edges { cursor } } }`,
		`{"data": null, "errors": [{"message": "invalid input syntax for type uuid: \"nope\""}]}`)
	d.expect(`{ typedCollection(filter: {f_date: {eq: "2023-02-30"}}) { edges { cursor } } }`,
		`{"data": null, "errors": [{"message": "date/time field value out of range: \"2023-02-30\""}]}`)
	if got := d.query(`{ typedCollection { edges { cursor } `); !strings.HasPrefix(got, `{"errors": [{"message": "query parse error: Parse error at 1:`) {
		t.Errorf("parse error shape: %s", got)
	}
}

// TestTypeMapDomains: domains are Opaque (filterable with eq/is, orderable) and render as to_jsonb renders the
// base value, so a domain over bigint is a JSON number.
func TestTypeMapDomains(t *testing.T) {
	d := newTestDB(t, `
		comment on schema public is '@graphql({"introspection": true})';
		create domain posint as int check (value > 0);
		create domain bigid as bigint;
		create table dom(id int primary key, p posint, b bigid);
		insert into dom values (1, 42, 9007199254740993);
		grant all on all tables in schema public to service_role;
	`)
	if got, want := typeSignatures(t, d, "dom"), "nodeId: ID!, id: Int!, p: Opaque, b: Opaque"; got != want {
		t.Errorf("dom\n got: %s\nwant: %s", got, want)
	}
	if got, want := typeSignatures(t, d, "domFilter"), "id: IntFilter, p: OpaqueFilter, b: OpaqueFilter, nodeId: IDFilter, and: [domFilter!], or: [domFilter!], not: domFilter"; got != want {
		t.Errorf("domFilter\n got: %s\nwant: %s", got, want)
	}
	d.expect(`{ domCollection(filter: {p: {eq: 42}}, orderBy: {b: DescNullsLast}) { edges { node { p b } } } }`,
		`{"data": {"domCollection": {"edges": [{"node": {"b": 9007199254740993, "p": 42}}]}}}`)
	d.expect(`mutation { insertIntodomCollection(objects: [{id: 2, p: -1}]) { affectedCount } }`,
		`{"data": null, "errors": [{"message": "value for domain posint violates check constraint \"posint_check\""}]}`)
}

// TestTypeMapVarcharArrays: the length limit of varchar(n)[] applies to every element, on input and in list
// filters.
func TestTypeMapVarcharArrays(t *testing.T) {
	d := newTestDB(t, `
		create table codes(id int primary key, c varchar(3)[]);
		insert into codes values (1, '{abc,de}');
		grant all on all tables in schema public to service_role;
	`)
	d.expect(`{ codesCollection(filter: {c: {contains: ["de"]}}) { edges { node { c } } } }`,
		`{"data": {"codesCollection": {"edges": [{"node": {"c": ["abc", "de"]}}]}}}`)
	d.expect(`{ codesCollection(filter: {c: {contains: ["abcd"]}}) { edges { node { c } } } }`,
		`{"data": null, "errors": [{"message": "Invalid input for String type. Maximum character length 3"}]}`)
	d.expect(`mutation { insertIntocodesCollection(objects: [{id: 2, c: ["ok", "toolong"]}]) { affectedCount } }`,
		`{"data": null, "errors": [{"message": "Invalid input for String type. Maximum character length 3"}]}`)
	d.expect(`mutation { insertIntocodesCollection(objects: [{id: 2, c: [1]}]) { affectedCount } }`,
		`{"data": null, "errors": [{"message": "Invalid input for String(Some(3)) type"}]}`)
	d.expect(`mutation { insertIntocodesCollection(objects: [{id: 2, c: "xyz"}]) { records { c } } }`,
		`{"data": {"insertIntocodesCollection": {"records": [{"c": ["xyz"]}]}}}`)
}

// TestTypeMapTableRowColumn: a column whose type is a table's row type is left out, like a composite (see
// docs/compatibility.md).
func TestTypeMapTableRowColumn(t *testing.T) {
	d := newTestDB(t, `
		create table point2(id int primary key, x int);
		create table shape(id int primary key, origin point2);
		insert into shape values (1, (7, 8));
		grant all on all tables in schema public to service_role;
	`)
	d.expect(`{ shapeCollection { edges { node { id } } } }`, `{"data": {"shapeCollection": {"edges": [{"node": {"id": 1}}]}}}`)
	d.expect(`{ shapeCollection { edges { node { origin { id } } } } }`,
		`{"data": null, "errors": [{"message": "Unknown field 'origin' on type 'shape'"}]}`)
	d.expect(`mutation { insertIntoshapeCollection(objects: [{id: 2, origin: "(1,2)"}]) { affectedCount } }`,
		`{"data": null, "errors": [{"message": "Input for type shapeInsertInput contains extra keys [\"origin\"]"}]}`)
}

// TestJSONTextAsPostgresRendersIt: responses are JSON text that sqlgen concatenates (no json_build_object), with
// integers, booleans and uuids taken as their own text. Values that need escaping or quoting, NULLs, a domain
// over an integer, NaN and infinities, and nested objects and lists must come out byte for byte as Postgres'
// own jsonb renders the same rows (the oracle below, built with jsonb_build_object and jsonb_agg).
func TestJSONTextAsPostgresRendersIt(t *testing.T) {
	d := newTestDB(t, `
create domain small_count as int check (value >= 0);
create type tone as enum ('plain', 'it''s "quoted"', 'back\slash');
comment on type tone is '@graphql({"mappings": {"plain": "PLAIN"}})';
create type mood as enum ('happy', 'very sad', 'é 😀 </script>');
create type shade as enum ('light', 'dark', 'say "hi"');
comment on type shade is e'@graphql({"mappings": {"dark": "DARK", "say \\"hi\\"": "HI"}})';
create table tricky(
  id int primary key, f_text text, f_varchar varchar(20), f_bool bool, f_int2 int2, f_count small_count,
  f_uuid uuid, f_float8 float8, f_float4 float4, f_tone tone, f_int4_arr int4[], f_text_arr text[],
  f_mood mood, f_shade shade
);
create table tricky_child(id int primary key, parent_id int references tricky(id), label text);
insert into tricky values
  (1, e'quote " backslash \\ newline \n tab \t bell \x07 unicode é 😀 </script>', '', true, -32768, 0,
   '00000000-0000-0000-0000-000000000000', 'NaN', 'Infinity', 'it''s "quoted"', '{1,null,-3}', array[e'a"b', e'c\\d', null],
   'very sad', 'dark'),
  (2, null, null, null, null, null, null, null, null, null, null, null, null, null),
  (3, '', e'\u2028 \\u0000', false, 32767, 2147483647, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '-Infinity', '-0',
   'back\slash', '{}', '{}', 'é 😀 </script>', 'light'),
  (4, null, null, null, null, null, null, null, null, 'plain', null, null, null, 'say "hi"');
insert into tricky_child values (1, 1, e'child "one"'), (2, 1, null), (3, 3, e'\\');
grant all on all tables in schema public to service_role;
`)
	got := d.query(`{ trickyCollection(orderBy: [{id: AscNullsLast}]) { edges { node { id f_text f_varchar f_bool f_int2 f_count
		f_uuid f_float8 f_float4 f_tone f_int4_arr f_text_arr f_mood f_shade
		tricky_childCollection { edges { node { id label parent: tricky { id f_text } } } } } } } }`)
	want := d.scalar(`select jsonb_build_object('data', jsonb_build_object('trickyCollection', jsonb_build_object('edges',
		jsonb_agg(jsonb_build_object('node', jsonb_build_object('id', t.id, 'f_text', t.f_text, 'f_varchar', t.f_varchar,
		'f_bool', t.f_bool, 'f_int2', t.f_int2, 'f_count', t.f_count, 'f_uuid', t.f_uuid, 'f_float8', t.f_float8,
		'f_float4', t.f_float4, 'f_tone', case t.f_tone when 'plain' then 'PLAIN' else t.f_tone::text end, 'f_int4_arr', t.f_int4_arr, 'f_text_arr', t.f_text_arr,
		'f_mood', t.f_mood, 'f_shade', case t.f_shade when 'dark' then 'DARK' when 'say "hi"' then 'HI' else t.f_shade::text end,
		'tricky_childCollection', jsonb_build_object('edges', coalesce((select jsonb_agg(jsonb_build_object('node',
			jsonb_build_object('id', c.id, 'label', c.label, 'parent', jsonb_build_object('id', t.id, 'f_text', t.f_text)))
			order by c.id) from tricky_child c where c.parent_id = t.id), '[]'))))
		order by t.id))))::text from tricky t`)
	if got != want {
		t.Errorf("response differs from Postgres' jsonb of the same rows:\n got %s\nwant %s", got, want)
	}
	// An enum whose answers need no escaping is written between quotes, without to_json (mapped: through the
	// mapping); one with a label that needs escaping keeps to_json, mapped or not.
	sql := compiledSQL(t, d.schemaOf("service_role", gqlschema.Options{}),
		`{ trickyCollection { edges { node { f_mood f_shade f_tone } } } }`)
	for _, want := range []string{`'"' || (t1."f_mood")::text || '"'`, `'"' || (case (t1."f_shade")::text when`,
		`to_json(case (t1."f_tone")::text when`} {
		if !strings.Contains(sql, want) {
			t.Errorf("the statement lacks %s:\n%s", want, sql)
		}
	}
	// The engine writes values into JSON through JSON_SCALAR where the server has it (PostgreSQL 17 and later),
	// and through to_json before: the answer compared above is of the one the server has.
	schema := d.schemaOf("service_role", gqlschema.Options{})
	sql = statementsText(compiledWith(t, schema, d.engine.planning(),
		`{ trickyCollection { edges { node { f_text f_varchar f_tone f_int4_arr } } } }`))
	written := "to_json"
	if pgtest.ServerMajor(t) >= 17 {
		written = "json_scalar"
	}
	for _, want := range []string{written + `(t1."f_text")`, written + `(t1."f_varchar")`,
		written + `(case (t1."f_tone")::text when`, written + `(t1."f_int4_arr")`} {
		if !strings.Contains(sql, want) {
			t.Errorf("the engine's statement on PostgreSQL %d lacks %s:\n%s", pgtest.ServerMajor(t), want, sql)
		}
	}
}

// A result that sqlgen marks verbatim skips the layout pass: it must be one, that is the layout pass would
// leave it as it is, for every type of the type map and the other parts of an answer (cursors, node ids, page
// info, type names); and the values that need the pass (numbers through to_json, arrays, values of types not
// known) must not be marked. The statements are the engine's, which write strings through JSON_SCALAR on
// PostgreSQL 17 and later.
func TestVerbatimResultsNeedNoLayout(t *testing.T) {
	d := newTestDB(t, typesFixture)
	schema := d.schemaOf("service_role", gqlschema.Options{})
	verbatim := map[string]bool{}
	queries := map[string]string{"page": `{ typedCollection(first: 1) { __typename edges { cursor node { nodeId __typename } }
		pageInfo { startCursor endCursor hasNextPage hasPreviousPage } } }`}
	for _, field := range strings.Fields(allTypedFields) {
		queries[field] = `{ typedCollection { edges { node { id ` + field + ` } } } }`
	}
	for name, query := range queries {
		c := compiledWith(t, schema, d.engine.planning(), query)
		if len(c.stmts) != 1 || len(c.roots) != 1 {
			t.Fatalf("%s did not compile to one statement", query)
		}
		var raw []byte
		if err := d.conn.QueryRow(context.Background(), c.stmts[0].sql, c.stmts[0].args...).Scan(&raw); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		laidOut := string(appendJSONB(nil, raw))
		verbatim[name] = c.roots[0].verbatim
		if c.roots[0].verbatim && laidOut != string(raw) {
			t.Errorf("%s is marked verbatim, but the layout pass makes\n%s\nof\n%s", name, laidOut, raw)
		}
		if name == "f_int4_arr" && laidOut == string(raw) {
			t.Errorf("the layout pass leaves an array as Postgres wrote it (%s): this test shows nothing", raw)
		}
	}
	for _, name := range []string{"page", "id", "f_bool", "f_int8", "f_numeric", "f_text", "f_bpchar", "f_json",
		"f_date", "f_tstz", "f_uuid", "f_color"} {
		if !verbatim[name] {
			t.Errorf("%s is not marked verbatim", name)
		}
	}
	for _, name := range []string{"f_float4", "f_float8", "f_mood", "f_interval", "f_int4_arr", "f_text_arr"} {
		if verbatim[name] {
			t.Errorf("%s is marked verbatim", name)
		}
	}
}
