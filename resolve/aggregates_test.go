package resolve

import (
	"strings"
	"testing"
)

// aggregateFixture is pg_graphql's aggregate test schema, with the aggregate directive on every table.
const aggregateFixture = `
comment on schema public is '@graphql({"inflect_names": true})';
create table account(
  id serial primary key,
  email varchar(255) not null,
  created_at timestamp not null
);
create table blog(
  id serial primary key,
  owner_id integer not null references account(id) on delete cascade,
  name varchar(255) not null,
  description varchar(255),
  created_at timestamp not null
);
create type blog_post_status as enum ('PENDING', 'RELEASED');
create table blog_post(
  id uuid not null default gen_random_uuid() primary key,
  blog_id integer not null references blog(id) on delete cascade,
  title varchar(255) not null,
  body varchar(10000),
  tags TEXT[],
  status blog_post_status not null,
  created_at timestamp not null
);
insert into account(email, created_at) values
  ('aardvark@x.com', '2025-04-27 12:00:00'), ('bat@x.com', '2025-04-28 12:00:00'), ('cat@x.com', '2025-04-29 12:00:00'),
  ('dog@x.com', '2025-04-30 12:00:00'), ('elephant@x.com', '2025-05-01 12:00:00');
insert into blog(owner_id, name, description, created_at) values
  (1, 'A: Blog 1', 'a desc1', '2025-04-22 12:00:00'), (1, 'A: Blog 2', 'a desc2', '2025-04-23 12:00:00'),
  (1, 'A: Blog 3', 'a desc3', '2025-04-24 12:00:00'), (2, 'B: Blog 3', 'b desc1', '2025-04-25 12:00:00');
insert into blog_post (blog_id, title, body, tags, status, created_at) values
  (1, 'Post 1 in A Blog 1', 'Content for post 1 in A Blog 1', '{"tech", "update"}', 'RELEASED', '2025-04-02 12:00:00'),
  (1, 'Post 2 in A Blog 1', 'Content for post 2 in A Blog 1', '{"announcement", "tech"}', 'PENDING', '2025-04-07 12:00:00'),
  (2, 'Post 1 in A Blog 2', 'Content for post 1 in A Blog 2', '{"personal"}', 'RELEASED', '2025-04-12 12:00:00'),
  (2, 'Post 2 in A Blog 2', 'Content for post 2 in A Blog 2', '{"update"}', 'RELEASED', '2025-04-17 12:00:00'),
  (3, 'Post 1 in A Blog 3', 'Content for post 1 in A Blog 3', '{"travel", "adventure"}', 'PENDING', '2025-04-22 12:00:00'),
  (4, 'Post 1 in B Blog 3', 'Content for post 1 in B Blog 3', '{"tech", "review"}', 'RELEASED', '2025-04-27 12:00:00'),
  (4, 'Post 2 in B Blog 3', 'Content for post 2 in B Blog 3', '{"coding", "tutorial"}', 'PENDING', '2025-05-02 12:00:00');
comment on table account is '@graphql({"aggregate": {"enabled": true}})';
comment on table blog is '@graphql({"aggregate": {"enabled": true}})';
comment on table blog_post is '@graphql({"totalCount": {"enabled": true}, "aggregate": {"enabled": true}})';
grant all on all tables in schema public to service_role;
`

// TestAggregates replays pg_graphql's aggregate test cases: values are JSON numbers (avg keeps a fractional
// part, as pg_graphql's serde round trip prints it), computed over the filter and ignoring pagination.
func TestAggregates(t *testing.T) {
	d := newTestDB(t, aggregateFixture)
	d.expect(`{ accountCollection { aggregate { count } } }`,
		`{"data": {"accountCollection": {"aggregate": {"count": 5}}}}`)
	d.expect(`{ accountCollection(filter: { id: { gt: 3 } }) { aggregate { count } } }`,
		`{"data": {"accountCollection": {"aggregate": {"count": 2}}}}`)
	d.expect(`{ blogCollection { aggregate { count sum { id } avg { id } min { id } max { id } } } }`,
		`{"data": {"blogCollection": {"aggregate": {"avg": {"id": 2.5}, "max": {"id": 4}, "min": {"id": 1}, "sum": {"id": 10}, "count": 4}}}}`)
	d.expect(`{ blogCollection(filter: { ownerId: { lt: 2 } }) { aggregate { count sum { id } avg { id } min { id } max { id } } } }`,
		`{"data": {"blogCollection": {"aggregate": {"avg": {"id": 2.0}, "max": {"id": 3}, "min": {"id": 1}, "sum": {"id": 6}, "count": 3}}}}`)
	d.expect(`{ blogCollection(first: 1) { edges { node { id name } } aggregate { count sum { id } } } }`,
		`{"data": {"blogCollection": {"edges": [{"node": {"id": 1, "name": "A: Blog 1"}}], "aggregate": {"sum": {"id": 10}, "count": 4}}}}`)
	d.expect(`{ blogCollection(first: 1, after: "WzJd") { aggregate { count } } }`,
		`{"data": {"blogCollection": {"aggregate": {"count": 4}}}}`)
	d.expect(`{ accountCollection(filter: { id: { gt: 1000 } }) { aggregate { count sum { id } avg { id } min { id } max { id } } } }`,
		`{"data": {"accountCollection": {"aggregate": {"avg": {"id": null}, "max": {"id": null}, "min": {"id": null}, "sum": {"id": null}, "count": 0}}}}`)
	d.expect(`{ blogCollection(filter: { description: { is: NULL }}) { aggregate { count } } }`,
		`{"data": {"blogCollection": {"aggregate": {"count": 0}}}}`)
	d.expect(`{ blogCollection { aggregate { min { name description createdAt } max { name description createdAt } } } }`,
		`{"data": {"blogCollection": {"aggregate": {"max": {"name": "B: Blog 3", "createdAt": "2025-04-25T12:00:00", "description": "b desc1"}, "min": {"name": "A: Blog 1", "createdAt": "2025-04-22T12:00:00", "description": "a desc1"}}}}}`)
	d.expect(`{ accountCollection { edges { node { email blogCollection { aggregate { count sum { id } } } } } } }`,
		`{"data": {"accountCollection": {"edges": [{"node": {"email": "aardvark@x.com", "blogCollection": {"aggregate": {"sum": {"id": 6}, "count": 3}}}}, `+
			`{"node": {"email": "bat@x.com", "blogCollection": {"aggregate": {"sum": {"id": 4}, "count": 1}}}}, `+
			`{"node": {"email": "cat@x.com", "blogCollection": {"aggregate": {"sum": {"id": null}, "count": 0}}}}, `+
			`{"node": {"email": "dog@x.com", "blogCollection": {"aggregate": {"sum": {"id": null}, "count": 0}}}}, `+
			`{"node": {"email": "elephant@x.com", "blogCollection": {"aggregate": {"sum": {"id": null}, "count": 0}}}}]}}}`)
	d.expect(`{ blogPostCollection(filter: {or: [{status: {eq: RELEASED}}, {title: {startsWith: "Post"}}]}) { aggregate { count } } }`,
		`{"data": {"blogPostCollection": {"aggregate": {"count": 7}}}}`)
	d.expect(`{ blogPostCollection(filter: {and: [{status: {eq: PENDING}}, {not: {blogId: {eq: 4}}}]}) { aggregate { count } } }`,
		`{"data": {"blogPostCollection": {"aggregate": {"count": 2}}}}`)
	d.expect(`{ blogPostCollection(filter: {tags: {contains: "tech"}}) { totalCount aggregate { count } } }`,
		`{"data": {"blogPostCollection": {"aggregate": {"count": 3}, "totalCount": 3}}}`)
	d.expect(`{ blogPostCollection(filter: {title: {eq: "This title does not exist"}}) { aggregate { count min { createdAt } max { createdAt } } } }`,
		`{"data": {"blogPostCollection": {"aggregate": {"max": {"createdAt": null}, "min": {"createdAt": null}, "count": 0}}}}`)
	d.expect(`{ blogCollection(first: 2) { edges { node { name blogPostCollection(filter: {status: {eq: RELEASED}}) { aggregate { count } } } } } }`,
		`{"data": {"blogCollection": {"edges": [{"node": {"name": "A: Blog 1", "blogPostCollection": {"aggregate": {"count": 1}}}}, `+
			`{"node": {"name": "A: Blog 2", "blogPostCollection": {"aggregate": {"count": 2}}}}]}}}`)
	// Aliases and __typename inside aggregates.
	d.expect(`{ blogCollection { aggregate { __typename n: count total: sum { __typename i: id } } } }`,
		`{"data": {"blogCollection": {"aggregate": {"n": 4, "total": {"i": 10, "__typename": "BlogSumAggregateResult"}, "__typename": "BlogAggregate"}}}}`)
}

// TestAggregateNumbers: sums and averages of numeric and float columns are JSON numbers printed the way
// pg_graphql's serde_json round trip prints them.
func TestAggregateNumbers(t *testing.T) {
	d := newTestDB(t, `
		create table product(id int primary key, price numeric(10,2), weight float8, qty int8, small int2);
		insert into product values (1, 19.99, 0.1, 9007199254740993, 1), (2, 19.99, 0.2, 1, 2), (3, 19.99, 1e20, 1, 3), (4, null, null, null, null);
		comment on table product is '@graphql({"aggregate": {"enabled": true}})';
		grant all on all tables in schema public to service_role;
	`)
	d.expect(`{ productCollection(filter: {id: {lt: 3}}) { aggregate { sum { price weight qty small } avg { price weight qty small } min { price weight qty } max { price qty } } } }`,
		`{"data": {"productCollection": {"aggregate": {"avg": {"qty": 4503599627370497.0, "price": 19.99, "small": 1.5, "weight": 0.15}, `+
			`"max": {"qty": 9007199254740993, "price": 19.99}, "min": {"qty": 1, "price": 19.99, "weight": 0.1}, `+
			`"sum": {"qty": 9007199254740994, "price": 39.98, "small": 3, "weight": 0.30000000000000004}}}}}`)
	d.expect(`{ productCollection(filter: {id: {in: [1, 2, 3]}}) { aggregate { sum { price weight } max { weight } } } }`,
		`{"data": {"productCollection": {"aggregate": {"max": {"weight": 100000000000000000000}, "sum": {"price": 59.97, "weight": 100000000000000000000}}}}}`)
	d.expect(`{ productCollection(filter: {id: {eq: 1}}) { aggregate { avg { small } sum { price } } } }`,
		`{"data": {"productCollection": {"aggregate": {"avg": {"small": 1.0}, "sum": {"price": 19.99}}}}}`)
}

// TestAggregateErrors: the messages for aggregates that are not enabled, unknown fields and non-aggregatable
// columns.
func TestAggregateErrors(t *testing.T) {
	d := newTestDB(t, aggregateFixture+`comment on table account is null;`)
	for query, message := range map[string]string{
		`{ accountCollection { aggregate { count } } }`:                  "enable the aggregate directive to use aggregates",
		`{ blogCollection { aggregate { x } } }`:                         `Unknown field "x" selected on type "BlogAggregate"`,
		`{ blogCollection { aggregate { sum { name } } } }`:              `Unknown or invalid field "name" selected on type "BlogSumAggregateResult"`,
		`{ blogPostCollection { aggregate { min { id } max { id } } } }`: `Unknown or invalid field "id" selected on type "BlogPostMinAggregateResult"`,
		`{ blogPostCollection { aggregate { min { tags } } } }`:          `Unknown or invalid field "tags" selected on type "BlogPostMinAggregateResult"`,
		`{ blogPostCollection { aggregate { max { status } } } }`:        `Unknown or invalid field "status" selected on type "BlogPostMaxAggregateResult"`,
		`{ accountCollection { totalCount } }`:                           "unknown field in connection",
	} {
		want := `{"data": null, "errors": [{"message": ` + jsonString(message) + `}]}`
		if got := d.query(query); got != want {
			t.Errorf("%s\n got: %s\nwant: %s", query, got, want)
		}
	}
}

// TestAggregateBooleanAndStrings: min/max of booleans (Postgres has no min(boolean): bool_and/bool_or), of
// text and of dates.
func TestAggregateBooleanAndStrings(t *testing.T) {
	d := newTestDB(t, `
		create table flag(id int primary key, on_ bool, label text, day date);
		insert into flag values (1, true, 'b', '2024-01-02'), (2, false, 'a', '2024-01-01'), (3, null, null, null);
		comment on table flag is '@graphql({"aggregate": {"enabled": true}})';
		grant all on all tables in schema public to service_role;
	`)
	d.expect(`{ flagCollection { aggregate { min { on_ label day } max { on_ label day } } } }`,
		`{"data": {"flagCollection": {"aggregate": {"max": {"day": "2024-01-02", "on_": true, "label": "b"}, "min": {"day": "2024-01-01", "on_": false, "label": "a"}}}}}`)
	d.expect(`{ flagCollection(filter: {id: {eq: 1}}) { aggregate { min { on_ } max { on_ } } } }`,
		`{"data": {"flagCollection": {"aggregate": {"max": {"on_": true}, "min": {"on_": true}}}}}`)
	// Type modifiers do not matter: timestamp(3) is a Datetime for min/max.
	d.exec(`alter table flag add column at timestamp(3); update flag set at = '2024-01-01 10:00:00.123' where id = 1`)
	d.expect(`{ flagCollection { aggregate { max { at } } } }`,
		`{"data": {"flagCollection": {"aggregate": {"max": {"at": "2024-01-01T10:00:00.123"}}}}}`)
	d.expect(`{ flagCollection { aggregate { sum { on_ } } } }`,
		`{"data": null, "errors": [{"message": "Unknown or invalid field \"on_\" selected on type \"flagSumAggregateResult\""}]}`)
}

// TestSerdeNumber checks the rewriting of numbers into what pg_graphql's serde_json and numeric round trip
// prints.
func TestSerdeNumber(t *testing.T) {
	for in, want := range map[string]string{
		"2": "2", "-7": "-7", "9223372036854775807": "9223372036854775807", "18446744073709551615": "18446744073709551615",
		"18446744073709551616": "18446744073709552000", "-9223372036854775809": "-9223372036854776000",
		"2.5000000000000000": "2.5", "2.0000000000000000": "2.0", "59.97": "59.97", "10.00": "10.0", "0.1": "0.1",
		"0.30000000000000004": "0.30000000000000004", "100000000000000000000": "100000000000000000000",
		"123456789012345678901234": "123456789012345690000000", "0.000001": "0.000001", "0.00000015": "0.00000015",
		"0.3333333333333333333333": "0.3333333333333333", "0.0": "0.0", "-0.50": "-0.5", "1234567890123456.7": "1234567890123456.8",
		"1e2": "100.0",
	} {
		got, changed := serdeNumber(in)
		if !changed {
			got = in
		}
		if got != want {
			t.Errorf("serdeNumber(%s) = %s, want %s", in, got, want)
		}
	}
	out := appendJSONB(nil, []byte(`{"a": "2.50 \"3.0\"", "b": [2.50, -1, {"c": 1e2}], "d\\": 0.50}`))
	if got, want := string(out), `{"a": "2.50 \"3.0\"", "b": [2.5, -1, {"c": 100.0}], "d\\": 0.5}`; got != want {
		t.Errorf("appendJSONB\n got: %s\nwant: %s", got, want)
	}
}

// TestTotalCountAndMaxRows: totalCount is opt-in and ignores pagination; page sizes are capped by the table's
// max_rows, else the schema's, else 30 (contract 1.17).
func TestTotalCountAndMaxRows(t *testing.T) {
	d := newTestDB(t, `
		create table plain(id int primary key);
		create table capped(id int primary key, parent_id int references plain(id));
		create view capped_view as select id from capped;
		comment on view capped_view is '@graphql({"primary_key_columns": ["id"]})';
		insert into plain select generate_series(1, 40);
		insert into capped select i, 1 from generate_series(1, 40) i;
		comment on table plain is '@graphql({"totalCount": {"enabled": true}})';
		grant select on all tables in schema public to service_role;
	`)
	count := func(query string) int {
		t.Helper()
		body := d.query(query)
		return strings.Count(body, `"node"`)
	}
	if n := count(`{ plainCollection { edges { node { id } } } }`); n != 30 {
		t.Errorf("default page: %d rows", n)
	}
	if n := count(`{ plainCollection(first: 100) { edges { node { id } } } }`); n != 30 {
		t.Errorf("first: 100 capped to %d rows", n)
	}
	if n := count(`{ plainCollection(last: 35) { edges { node { id } } } }`); n != 30 {
		t.Errorf("last: 35 capped to %d rows", n)
	}
	d.expect(`{ plainCollection(first: 2, after: "WzVd", filter: {id: {lte: 20}}) { totalCount pageInfo { hasNextPage } edges { node { id } } } }`,
		`{"data": {"plainCollection": {"edges": [{"node": {"id": 6}}, {"node": {"id": 7}}], "pageInfo": {"hasNextPage": true}, "totalCount": 20}}}`)
	d.expect(`{ plainCollection(filter: {id: {gt: 100}}) { totalCount edges { node { id } } pageInfo { startCursor endCursor hasNextPage hasPreviousPage } } }`,
		`{"data": {"plainCollection": {"edges": [], "pageInfo": {"endCursor": null, "hasNextPage": false, "startCursor": null, "hasPreviousPage": false}, "totalCount": 0}}}`)
	d.expect(`{ cappedCollection { totalCount } }`, `{"data": null, "errors": [{"message": "unknown field in connection"}]}`)

	d.exec(`comment on schema public is '@graphql({"max_rows": 5})'`)
	if n := count(`{ plainCollection(first: 10) { edges { node { id } } } }`); n != 5 {
		t.Errorf("schema max_rows 5: %d rows", n)
	}
	if n := count(`{ capped_viewCollection { edges { node { id } } } }`); n != 5 {
		t.Errorf("view falls back to the schema max_rows: %d rows", n)
	}
	if n := count(`{ plainCollection(first: 2) { edges { node { id } } } }`); n != 2 {
		t.Errorf("first: 2 under the cap: %d rows", n)
	}
	d.exec(`comment on table capped is '@graphql({"max_rows": 3})'`)
	if n := count(`{ cappedCollection(first: 10) { edges { node { id } } } }`); n != 3 {
		t.Errorf("table max_rows 3: %d rows", n)
	}
	if n := count(`{ plainCollection(first: 1) { edges { node { cappedCollection { edges { node { id } } } } } } }`); n != 1+3 {
		t.Errorf("nested collection uses its own table's cap: %d nodes", n)
	}
	d.expect(`{ cappedCollection(first: 10) { pageInfo { hasNextPage } } }`,
		`{"data": {"cappedCollection": {"pageInfo": {"hasNextPage": true}}}}`)
	d.exec(`comment on table capped is '@graphql({"max_rows": 0})'`)
	d.expect(`{ cappedCollection { edges { node { id } } } }`, `{"data": {"cappedCollection": {"edges": []}}}`)
}

// TestAggregateDirectiveProduct replays pg_graphql's aggregate_directive test: numeric sums and averages are
// plain JSON numbers.
func TestAggregateDirectiveProduct(t *testing.T) {
	d := newTestDB(t, `
		create table product(id serial primary key, name text not null, price numeric not null, stock int not null);
		insert into product(name, price, stock) values ('Widget', 9.99, 100), ('Gadget', 19.99, 50), ('Gizmo', 29.99, 25);
		grant all on all tables in schema public to service_role;
	`)
	d.expect(`{ productCollection { aggregate { count } } }`,
		`{"data": null, "errors": [{"message": "enable the aggregate directive to use aggregates"}]}`)
	d.exec(`comment on table product is e'@graphql({"aggregate": {"enabled": true}})'`)
	d.expect(`{ productCollection { aggregate { count sum { price stock } avg { price } max { price name } min { stock } } } }`,
		`{"data": {"productCollection": {"aggregate": {"avg": {"price": 19.99}, "max": {"name": "Widget", "price": 29.99}, "min": {"stock": 25}, "sum": {"price": 59.97, "stock": 175}, "count": 3}}}}`)
}
