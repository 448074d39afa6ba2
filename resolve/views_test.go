package resolve

import (
	"strings"
	"testing"
)

// Views, materialized views and foreign tables (spec 1.14).
const viewFixture = `
comment on schema public is '@graphql({"inflect_names": true, "introspection": true})';
create table account(id serial primary key, email text not null, active bool not null default true);
create table blog(id serial primary key, owner_id int not null references account(id), name text not null);
insert into account(email, active) values ('a@x.com', true), ('b@x.com', false), ('c@x.com', true);
insert into blog(owner_id, name) values (1, 'b1'), (1, 'b2'), (3, 'b3');
create view active_account as select id, email from account where active;
create view no_key as select id, email from account;
create view account_summary as select a.id, a.email, count(b.id) as blog_count from account a left join blog b on b.owner_id = a.id group by a.id;
create materialized view blog_stats as select owner_id, count(*) as n from blog group by owner_id;
create view blog_view as select id, owner_id, name from blog;
comment on view active_account is '@graphql({"primary_key_columns": ["id"]})';
comment on view account_summary is '@graphql({"primary_key_columns": ["id"], "name": "Summary"})';
comment on materialized view blog_stats is '@graphql({"primary_key_columns": ["owner_id"], "foreign_keys": [{"local_name": "stats", "local_columns": ["owner_id"], "foreign_schema": "public", "foreign_table": "account", "foreign_columns": ["id"]}]})';
comment on view blog_view is '@graphql({"primary_key_columns": ["id"], "foreign_keys": [{"foreign_name": "writer", "local_name": "viewBlogs", "local_columns": ["owner_id"], "foreign_schema": "public", "foreign_table": "active_account", "foreign_columns": ["id"]}]})';
create view bad_key as select id from account;
comment on view bad_key is '@graphql({"primary_key_columns": ["nope"]})';
grant all on all tables in schema public to service_role;
grant all on all sequences in schema public to service_role;
`

func TestViewsWithDirectives(t *testing.T) {
	d := newTestDB(t, viewFixture)
	d.expect(`{ activeAccountCollection { edges { cursor node { nodeId id email } } } }`,
		`{"data": {"activeAccountCollection": {"edges": [{"node": {"id": 1, "email": "a@x.com", "nodeId": "WyJwdWJsaWMiLCAiYWN0aXZlX2FjY291bnQiLCAxXQ=="}, "cursor": "WzFd"}, {"node": {"id": 3, "email": "c@x.com", "nodeId": "WyJwdWJsaWMiLCAiYWN0aXZlX2FjY291bnQiLCAzXQ=="}, "cursor": "WzNd"}]}}}`)
	// View columns are nullable; the synthetic key still gives byPk and node lookups.
	if got, want := d.fieldTypes("ActiveAccount"), "email: String, id: Int, nodeId: ID!, viewBlogs: BlogViewConnection"; got != want {
		t.Errorf("ActiveAccount\n got: %s\nwant: %s", got, want)
	}
	d.expect(`{ activeAccountByPk(id: 3) { email } node(nodeId: "WyJwdWJsaWMiLCAiYWN0aXZlX2FjY291bnQiLCAxXQ==") { ... on ActiveAccount { email } } }`,
		`{"data": {"node": {"email": "a@x.com"}, "activeAccountByPk": {"email": "c@x.com"}}}`)
	d.expect(`{ summaryCollection(orderBy: [{blogCount: DescNullsLast}], first: 1) { edges { node { email blogCount } } } }`,
		`{"data": {"summaryCollection": {"edges": [{"node": {"email": "a@x.com", "blogCount": "2"}}]}}}`)
	// Without a key, or with a key naming a missing column, nothing is generated.
	for _, field := range []string{"noKeyCollection", "badKeyCollection"} {
		if got := d.query(`{ ` + field + ` { edges { cursor } } }`); got != `{"data": null, "errors": [{"message": "Unknown field \"`+field+`\" on type Query"}]}` {
			t.Errorf("%s: %s", field, got)
		}
	}
	// Directive foreign keys: materialized view to table (reverse side named by local_name), view to view.
	d.expect(`{ accountCollection(first: 1) { edges { node { stats { n } } } } blogStatsCollection(filter: {ownerId: {eq: 3}}) { edges { node { n owner { email } } } } }`,
		`{"data": {"accountCollection": {"edges": [{"node": {"stats": {"n": "2"}}}]}, "blogStatsCollection": {"edges": [{"node": {"n": "1", "owner": {"email": "c@x.com"}}}]}}}`)
	d.expect(`{ blogViewCollection { edges { node { name writer { email } } } } activeAccountByPk(id: 1) { viewBlogs { edges { node { name } } } } }`,
		`{"data": {"activeAccountByPk": {"viewBlogs": {"edges": [{"node": {"name": "b1"}}, {"node": {"name": "b2"}}]}}, "blogViewCollection": {"edges": [{"node": {"name": "b1", "writer": {"email": "a@x.com"}}}, {"node": {"name": "b2", "writer": {"email": "a@x.com"}}}, {"node": {"name": "b3", "writer": {"email": "c@x.com"}}}]}}}`)
	// The materialized view is read-only in Postgres; views are refreshed data, not cached.
	d.exec(`insert into blog(owner_id, name) values (3, 'b4'); refresh materialized view blog_stats`)
	d.expect(`{ blogStatsByPk(ownerId: 3) { n } }`, `{"data": {"blogStatsByPk": {"n": "2"}}}`)
}

func TestAutoUpdatableViewCRUD(t *testing.T) {
	d := newTestDB(t, viewFixture)
	d.expect(`mutation { insertIntoActiveAccountCollection(objects: [{id: 10, email: "v@x.com"}]) { affectedCount records { id email } } }`,
		`{"data": {"insertIntoActiveAccountCollection": {"records": [{"id": 10, "email": "v@x.com"}], "affectedCount": 1}}}`)
	d.expect(`mutation { updateActiveAccountCollection(set: {email: "w@x.com"}, filter: {id: {eq: 10}}) { affectedCount records { email } } }`,
		`{"data": {"updateActiveAccountCollection": {"records": [{"email": "w@x.com"}], "affectedCount": 1}}}`)
	// The view's WHERE hides inactive accounts from updates too.
	d.expect(`mutation { updateActiveAccountCollection(set: {email: "z@x.com"}, filter: {id: {eq: 2}}) { affectedCount } }`,
		`{"data": {"updateActiveAccountCollection": {"affectedCount": 0}}}`)
	d.expect(`mutation { deleteFromActiveAccountCollection(filter: {id: {eq: 10}}) { affectedCount records { id } } }`,
		`{"data": {"deleteFromActiveAccountCollection": {"records": [{"id": 10}], "affectedCount": 1}}}`)
	d.expect(`{ accountCollection(filter: {id: {gte: 10}}) { edges { node { id } } } }`, `{"data": {"accountCollection": {"edges": []}}}`)
	// atMost applies to views as to tables.
	d.expect(`mutation { deleteFromActiveAccountCollection(atMost: 1) { affectedCount } }`,
		`{"data": null, "errors": [{"message": "delete impacts too many records"}]}`)
	// A view that is not auto-updatable is offered mutations (privileges decide), and Postgres rejects the write.
	got := d.query(`mutation { deleteFromSummaryCollection(filter: {id: {eq: 1}}) { affectedCount } }`)
	if !strings.Contains(got, `cannot delete from view \"account_summary\"`) || !strings.HasPrefix(got, `{"data": null`) {
		t.Errorf("non-updatable view: %s", got)
	}
	// Materialized views cannot be written either.
	got = d.query(`mutation { deleteFromBlogStatsCollection(filter: {ownerId: {eq: 1}}) { affectedCount } }`)
	if !strings.Contains(got, `cannot change materialized view \"blog_stats\"`) {
		t.Errorf("materialized view write: %s", got)
	}
}

func TestForeignTable(t *testing.T) {
	d := newTestDB(t, `
		create extension if not exists file_fdw;
		create server files foreign data wrapper file_fdw;
		create foreign table remote_item(id int, label text) server files options (filename '/dev/null', format 'csv');
		comment on foreign table remote_item is '@graphql({"primary_key_columns": ["id"]})';
		grant select on remote_item to service_role;
	`)
	d.expect(`{ remote_itemCollection { edges { node { id label } } } }`, `{"data": {"remote_itemCollection": {"edges": []}}}`)
	d.expect(`{ remote_itemByPk(id: 1) { label } }`, `{"data": {"remote_itemByPk": null}}`)
}

// After pg_graphql's views_integration test.
func TestViewsIntegration(t *testing.T) {
	d := newTestDB(t, `
		comment on schema public is '@graphql({"inflect_names": true, "introspection": true})';
		create table account(id serial primary key, email varchar(255) not null);
		insert into account(email) values ('foo'), ('bar'), ('baz');
		create view person as select * from account;
		create table blog(id serial primary key, account_id integer not null, name varchar(255) not null);
		insert into blog(account_id, name) values (1, 'Blog A'), (2, 'Blog B');
		grant all on all tables in schema public to service_role;
		grant all on all sequences in schema public to service_role;
	`)
	if got := d.rootFields("service_role", "Query"); got != "accountByPk, accountCollection, blogByPk, blogCollection, node" {
		t.Errorf("without a key: %s", got)
	}
	d.exec(`comment on view person is e'\n@graphql({\n  "primary_key_columns": ["id"]\n})'`)
	if got := d.rootFields("service_role", "Query"); got != "accountByPk, accountCollection, blogByPk, blogCollection, node, personByPk, personCollection" {
		t.Errorf("with a key: %s", got)
	}
	d.expect(`{ personCollection(first: 2) { edges { node { nodeId email } } } }`,
		`{"data": {"personCollection": {"edges": [{"node": {"email": "foo", "nodeId": "WyJwdWJsaWMiLCAicGVyc29uIiwgMV0="}}, {"node": {"email": "bar", "nodeId": "WyJwdWJsaWMiLCAicGVyc29uIiwgMl0="}}]}}}`)
	if got := d.rootFields("service_role", "Mutation"); got != "deleteFromAccountCollection, deleteFromBlogCollection, deleteFromPersonCollection, insertIntoAccountCollection, insertIntoBlogCollection, insertIntoPersonCollection, updateAccountCollection, updateBlogCollection, updatePersonCollection" {
		t.Errorf("mutations: %s", got)
	}
	record := `affectedCount records { id nodeId email }`
	d.expect(`mutation { insertIntoPersonCollection(objects: {email: "quz"}) { `+record+` } }`,
		`{"data": {"insertIntoPersonCollection": {"records": [{"id": 4, "email": "quz", "nodeId": "WyJwdWJsaWMiLCAicGVyc29uIiwgNF0="}], "affectedCount": 1}}}`)
	d.expect(`mutation { updatePersonCollection(set: {email: "thud"}, filter: {email: {eq: "quz"}}) { `+record+` } }`,
		`{"data": {"updatePersonCollection": {"records": [{"id": 4, "email": "thud", "nodeId": "WyJwdWJsaWMiLCAicGVyc29uIiwgNF0="}], "affectedCount": 1}}}`)
	d.expect(`mutation { deleteFromPersonCollection(filter: {email: {eq: "thud"}}) { `+record+` } }`,
		`{"data": {"deleteFromPersonCollection": {"records": [{"id": 4, "email": "thud", "nodeId": "WyJwdWJsaWMiLCAicGVyc29uIiwgNF0="}], "affectedCount": 1}}}`)
	// A foreign_keys directive on a table pointing at the view, with explicit names...
	d.exec(`comment on table blog is '@graphql({"foreign_keys": [{"local_name": "blogs", "local_columns": ["account_id"], "foreign_name": "person", "foreign_schema": "public", "foreign_table": "person", "foreign_columns": ["id"]}]})'`)
	if got := d.fieldTypes("Person"); got != "blogs: BlogConnection, email: String, id: Int, nodeId: ID!" {
		t.Errorf("Person: %s", got)
	}
	if got := d.fieldTypes("Blog"); got != "accountId: Int!, id: Int!, name: String!, nodeId: ID!, person: Person!" {
		t.Errorf("Blog: %s", got)
	}
	d.expect(`{ personCollection(first: 2) { edges { node { email blogs(first: 1) { edges { node { name person { email } } } } } } } }`,
		`{"data": {"personCollection": {"edges": [{"node": {"blogs": {"edges": [{"node": {"name": "Blog A", "person": {"email": "foo"}}}]}, "email": "foo"}}, {"node": {"blogs": {"edges": [{"node": {"name": "Blog B", "person": {"email": "bar"}}}]}, "email": "bar"}}]}}}`)
	// ...and with default names (inflection rules apply).
	d.exec(`comment on table blog is '@graphql({"foreign_keys": [{"local_columns": ["account_id"], "foreign_schema": "public", "foreign_table": "person", "foreign_columns": ["id"]}]})'`)
	d.expect(`{ personCollection(first: 2) { edges { node { email blogCollection(first: 1) { edges { node { name account { email } } } } } } } }`,
		`{"data": {"personCollection": {"edges": [{"node": {"email": "foo", "blogCollection": {"edges": [{"node": {"name": "Blog A", "account": {"email": "foo"}}}]}}}, {"node": {"email": "bar", "blogCollection": {"edges": [{"node": {"name": "Blog B", "account": {"email": "bar"}}}]}}}]}}}`)
	// A directive of the wrong shape fails every request.
	d.exec(`comment on table blog is '@graphql({"foreign_keys": [{"local_columns": "account_id", "foreign_schema": "public", "foreign_table": "person", "foreign_columns": ["id"]}]})'`)
	d.expect(`{ personCollection(first: 1) { edges { node { email } } } }`,
		`{"errors": [{"message": "Error while loading schema, check comment directives. invalid type: string \"account_id\", expected a sequence"}]}`)
}

// Directive foreign keys take their nullability from the local relation's RLS flag (pg_graphql copies it), and
// a directive naming a missing table or column is skipped.
func TestDirectiveForeignKeyNullabilityAndSkips(t *testing.T) {
	d := newTestDB(t, `
		comment on schema public is '@graphql({"inflect_names": true, "introspection": true})';
		create table account(id int primary key);
		create table blog(id int primary key, account_id int not null, name text);
		comment on table blog is '@graphql({"foreign_keys": [
		  {"local_columns": ["account_id"], "foreign_schema": "public", "foreign_table": "account", "foreign_columns": ["id"]},
		  {"local_columns": ["account_id"], "foreign_schema": "public", "foreign_table": "nope", "foreign_columns": ["id"]},
		  {"local_columns": ["account_id"], "foreign_schema": "public", "foreign_table": "account", "foreign_columns": ["nope"]}]})';
		alter table account enable row level security;
		grant select on all tables in schema public to service_role;
	`)
	if got, want := d.fieldTypes("Blog"), "account: Account!, accountId: Int!, id: Int!, name: String, nodeId: ID!"; got != want {
		t.Errorf("Blog\n got: %s\nwant: %s", got, want)
	}
	d.exec(`alter table blog enable row level security`)
	if got, want := d.fieldTypes("Blog"), "account: Account, accountId: Int!, id: Int!, name: String, nodeId: ID!"; got != want {
		t.Errorf("Blog with RLS\n got: %s\nwant: %s", got, want)
	}
}
