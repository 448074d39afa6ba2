package resolve

import (
	"strings"
	"testing"
)

// introspectNames lists the names a query returns in order, e.g. the fields of a type.
func introspectNames(t *testing.T, d *testDB, typeName string) string {
	t.Helper()
	sigs := typeSignatures(t, d, typeName)
	var names []string
	for _, s := range strings.Split(sigs, ", ") {
		name, _, _ := strings.Cut(s, ":")
		names = append(names, name)
	}
	return strings.Join(names, " ")
}

// TestInflectionOn: with inflect_names, type names are base(relname) and field names lcfirst(base(column)),
// nothing lower-cased (contract 1.2).
func TestInflectionOn(t *testing.T) {
	d := newTestDB(t, `
		comment on schema public is '@graphql({"inflect_names": true, "introspection": true})';
		create table blog_post(id int primary key, "_id" int, name_with_underscore text, "typeVarchar_n" varchar(3),
		  "camelCase" text, "x__y" text, "Capital" text);
		create table "account_BY_email"(id int primary key);
		create type post_kind as enum ('short_note', 'LONG');
		create table kinded(id int primary key, kind post_kind);
		insert into blog_post values (1, 10, 'a', 'b', 'c', 'd', 'e');
		grant all on all tables in schema public to service_role;
	`)
	if got, want := introspectNames(t, d, "BlogPost"), "nodeId id id nameWithUnderscore typeVarcharN camelCase xY capital"; got != want {
		t.Errorf("BlogPost fields\n got: %s\nwant: %s", got, want)
	}
	for _, name := range []string{"BlogPost", "BlogPostEdge", "BlogPostConnection", "BlogPostFilter", "BlogPostOrderBy",
		"BlogPostInsertInput", "BlogPostInsertResponse", "BlogPostUpdateInput", "BlogPostUpdateResponse", "BlogPostDeleteResponse",
		"AccountBYEmail", "AccountBYEmailConnection", "PostKind", "PostKindFilter"} {
		d.expect(`{ __type(name: "`+name+`") { name } }`, `{"data": {"__type": {"name": "`+name+`"}}}`)
	}
	if got := introspectNames(t, d, "Query"); got != "accountBYEmailByPk accountBYEmailCollection blogPostByPk blogPostCollection kindedByPk kindedCollection node" {
		t.Errorf("Query fields: %s", got)
	}
	if got := introspectNames(t, d, "Mutation"); got != "deleteFromAccountBYEmailCollection deleteFromBlogPostCollection deleteFromKindedCollection "+
		"insertIntoAccountBYEmailCollection insertIntoBlogPostCollection insertIntoKindedCollection "+
		"updateAccountBYEmailCollection updateBlogPostCollection updateKindedCollection" {
		t.Errorf("Mutation fields: %s", got)
	}
	// Enum values are never inflected.
	d.expect(`{ __type(name: "PostKind") { enumValues { name } } }`,
		`{"data": {"__type": {"enumValues": [{"name": "short_note"}, {"name": "LONG"}]}}}`)
	// "_id" and "id" both become field id: the later column wins when selecting.
	d.expect(`{ blogPostCollection { edges { node { id nameWithUnderscore typeVarcharN xY capital } } } }`,
		`{"data": {"blogPostCollection": {"edges": [{"node": {"id": 10, "xY": "d", "capital": "e", "typeVarcharN": "b", "nameWithUnderscore": "a"}}]}}}`)
	d.expect(`{ blogPostByPk(id: 1) { camelCase } }`, `{"data": {"blogPostByPk": {"camelCase": "c"}}}`)
}

// TestInflectionOff: without inflection every name is the SQL name verbatim, and root fields only lower-case
// the first letter of the type name.
func TestInflectionOff(t *testing.T) {
	d := newTestDB(t, `
		comment on schema public is '@graphql({"introspection": true})';
		create table blog_post(id int primary key, name_with_underscore text, "typeVarchar_n" varchar(3));
		create table "Foo"(id int primary key);
		grant all on all tables in schema public to service_role;
	`)
	if got, want := introspectNames(t, d, "blog_post"), "nodeId id name_with_underscore typeVarchar_n"; got != want {
		t.Errorf("blog_post fields\n got: %s\nwant: %s", got, want)
	}
	if got := introspectNames(t, d, "Query"); got != "blog_postByPk blog_postCollection fooByPk fooCollection node" {
		t.Errorf("Query fields: %s", got)
	}
	if got := introspectNames(t, d, "Mutation"); got != "deleteFromFooCollection deleteFromblog_postCollection insertIntoFooCollection "+
		"insertIntoblog_postCollection updateFooCollection updateblog_postCollection" {
		t.Errorf("Mutation fields: %s", got)
	}
	for _, name := range []string{"blog_postConnection", "blog_postEdge", "blog_postFilter", "blog_postOrderBy", "FooConnection"} {
		d.expect(`{ __type(name: "`+name+`") { name } }`, `{"data": {"__type": {"name": "`+name+`"}}}`)
	}
	d.exec(`insert into "Foo" values (1)`)
	d.expect(`{ fooCollection { edges { node { nodeId } } } }`,
		`{"data": {"fooCollection": {"edges": [{"node": {"nodeId": "WyJwdWJsaWMiLCAiRm9vIiwgMV0="}}]}}}`)
}

// TestCommentDirectives covers the name and description directives of tables, columns, enums, functions and
// foreign keys, and the table keys totalCount, aggregate, max_rows and primary_key_columns (contract 1.15).
func TestCommentDirectives(t *testing.T) {
	d := newTestDB(t, `
		comment on schema public is '@graphql({"inflect_names": true, "introspection": true})';
		create table account(id int primary key, email text);
		comment on table account is e'@graphql({"name": "User", "description": "Someone who signs in", "totalCount": {"enabled": true}})';
		comment on column account.email is '@graphql({"name": "mailAddress", "description": "Where we write (to)"})';
		create table blog(id int primary key, owner_id int references account(id), title text);
		comment on constraint blog_owner_id_fkey on blog is '@graphql({"foreign_name": "author", "local_name": "writings"})';
		create type mood as enum ('happy', 'very sad');
		comment on type mood is '@graphql({"name": "Feeling", "mappings": {"very sad": "VERY_SAD"}})';
		create table diary(id int primary key, mood mood);
		comment on table diary is '@graphql({"aggregate": {"enabled": true}, "max_rows": 1})';
		create view diary_view as select id, mood from diary;
		comment on view diary_view is '@graphql({"primary_key_columns": ["id"], "name": "DiaryEntry"})';
		create view no_key as select id from diary;
		comment on view no_key is '@graphql({"primary_key_columns": ["nope"]})';
		create function shout(rec account) returns text stable language sql as $$ select upper(rec.email) $$;
		comment on function shout(account) is '@graphql({"name": "loud", "description": "The email, loudly"})';
		insert into account values (1, 'a@x.com');
		insert into blog values (1, 1, 'hello');
		insert into diary values (1, 'very sad'), (2, 'happy');
		grant all on all tables in schema public to service_role;
	`)
	d.expect(`{ __type(name: "User") { name description fields { name description } } }`,
		`{"data": {"__type": {"name": "User", "fields": [{"name": "nodeId", "description": "Globally Unique Record Identifier"}, `+
			`{"name": "id", "description": null}, {"name": "mailAddress", "description": "Where we write (to)"}, `+
			`{"name": "writings", "description": null}, {"name": "loud", "description": "The email, loudly"}], "description": "Someone who signs in"}}}`)
	d.expect(`{ userCollection { totalCount edges { node { mailAddress loud writings { edges { node { title author { mailAddress } } } } } } } }`,
		`{"data": {"userCollection": {"edges": [{"node": {"loud": "A@X.COM", "writings": {"edges": [{"node": {"title": "hello", "author": {"mailAddress": "a@x.com"}}}]}, "mailAddress": "a@x.com"}}], "totalCount": 1}}}`)
	d.expect(`{ __type(name: "Feeling") { enumValues { name } } }`,
		`{"data": {"__type": {"enumValues": [{"name": "happy"}, {"name": "VERY_SAD"}]}}}`)
	d.expect(`{ diaryCollection(filter: {mood: {eq: VERY_SAD}}) { aggregate { count } edges { node { mood } } } }`,
		`{"data": {"diaryCollection": {"edges": [{"node": {"mood": "VERY_SAD"}}], "aggregate": {"count": 1}}}}`)
	d.expect(`{ diaryCollection { edges { node { id } } pageInfo { hasNextPage } } }`,
		`{"data": {"diaryCollection": {"edges": [{"node": {"id": 1}}], "pageInfo": {"hasNextPage": true}}}}`)
	d.expect(`{ diaryEntryCollection(orderBy: {id: DescNullsLast}) { edges { node { id mood } } } }`,
		`{"data": {"diaryEntryCollection": {"edges": [{"node": {"id": 2, "mood": "happy"}}, {"node": {"id": 1, "mood": "VERY_SAD"}}]}}}`)
	// A primary_key_columns directive naming a missing column exposes nothing.
	d.expect(`{ noKeyCollection { edges { node { id } } } }`,
		`{"data": null, "errors": [{"message": "Unknown field \"noKeyCollection\" on type Query"}]}`)
	// Keys pg_graphql reads with SQL operators never fail: totalCount compares the text of "enabled" with
	// 'true', inflect_names must be JSON true, names and descriptions are read as text.
	d.exec(`comment on table account is '@graphql({"totalCount": {"enabled": "true"}})'`)
	d.expect(`{ accountCollection { totalCount } }`, `{"data": {"accountCollection": {"totalCount": 1}}}`)
	for _, directive := range []string{`{"totalCount": true}`, `{"totalCount": {"enabled": 1}}`, `{"totalCount": {"enabled": "yes"}}`} {
		d.exec(`comment on table account is '@graphql(` + directive + `)'`)
		d.expect(`{ accountCollection { totalCount } }`, `{"data": null, "errors": [{"message": "unknown field in connection"}]}`)
	}
	d.exec(`comment on schema public is '@graphql({"inflect_names": "true", "introspection": true})'; comment on table account is '@graphql({"description": 42})'`)
	d.expect(`{ __type(name: "account") { description } }`, `{"data": {"__type": {"description": "42"}}}`)
	d.exec(`comment on table account is '@graphql({"name": 5})'`)
	d.expect(`{ blogCollection { edges { node { id } } } }`, `{"data": {"blogCollection": {"edges": [{"node": {"id": 1}}]}}}`)
	d.expect(`{ __type(name: "5") { name } }`, `{"data": {"__type": null}}`)
}

// TestCommentDirectiveErrors: a directive that is not JSON fails every request with Postgres' message; one whose
// keys have the wrong types fails with pg_graphql's schema-loading message.
func TestCommentDirectiveErrors(t *testing.T) {
	d := newTestDB(t, `
		create table account(id int primary key);
		create table blog(id int primary key, account_id int);
		grant all on all tables in schema public to service_role;
	`)
	for comment, want := range map[string]string{
		`comment on table account is '@graphql({"max_rows": -1})'`: `{"errors": [{"message": "Error while loading schema, check comment directives. invalid value: integer ` + "`-1`" + `, expected u64"}]}`,
		`comment on table blog is '@graphql({"foreign_keys": [{"local_columns": "account_id", "foreign_schema": "public", "foreign_table": "account", "foreign_columns": ["id"]}]})'`: `{"errors": [{"message": "Error while loading schema, check comment directives. invalid type: string \"account_id\", expected a sequence"}]}`,
		`comment on table account is '@graphql({"max_rows": true})'`: `{"errors": [{"message": "Error while loading schema, check comment directives. invalid type: boolean ` + "`true`" + `, expected u64"}]}`,
		`comment on table blog is '@graphql({"foreign_keys": [{"local_columns": ["account_id"], "foreign_schema": "public", "foreign_table": "account", "foreign_columns": "i\"d"}]})'`: `{"errors": [{"message": "Error while loading schema, check comment directives. invalid type: string \"i\\\"d\", expected a sequence"}]}`,
		`comment on table account is '@graphql({"name": })'`: `{"data": null, "errors": [{"message": "invalid input syntax for type json"}]}`,
	} {
		d.exec(`comment on table account is null; comment on table blog is null; ` + comment)
		if got := d.query(`{ accountCollection { edges { node { id } } } }`); got != want {
			t.Errorf("%s\n got: %s\nwant: %s", comment, got, want)
		}
	}
	// A comment without a directive, or with text around it, is fine.
	d.exec(`comment on table account is 'just words'; comment on table blog is e'before\n@graphql({"name": "Post"})\nafter'`)
	d.expect(`{ postCollection { edges { node { id } } } accountCollection { edges { node { id } } } }`,
		`{"data": {"postCollection": {"edges": []}, "accountCollection": {"edges": []}}}`)
}
