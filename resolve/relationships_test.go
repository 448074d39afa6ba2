package resolve

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"
)

// fieldTypes lists a type's fields as "name: SDL type" through introspection, sorted.
func (d *testDB) fieldTypes(typeName string) string {
	d.t.Helper()
	body := d.query(`{ __type(name: "` + typeName + `") { fields { name type { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } }`)
	var resp struct {
		Data struct {
			Type *struct {
				Fields []struct {
					Name string
					Type introspectedRef
				}
			} `json:"__type"`
		}
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil || resp.Data.Type == nil {
		d.t.Fatalf("__type(%s): %s", typeName, body)
	}
	var out []string
	for _, f := range resp.Data.Type.Fields {
		out = append(out, f.Name+": "+f.Type.String())
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

type introspectedRef struct {
	Kind   string
	Name   *string
	OfType *introspectedRef
}

func (r introspectedRef) String() string {
	switch r.Kind {
	case "NON_NULL":
		return r.OfType.String() + "!"
	case "LIST":
		return "[" + r.OfType.String() + "]"
	}
	if r.Name == nil {
		return "?"
	}
	return *r.Name
}

const relationshipFixture = `
comment on schema public is '@graphql({"inflect_names": true, "introspection": true})';
create table account(id serial primary key, email text not null, parent_id int references account(id));
create table address(id serial primary key, account_id int not null unique references account(id), city text);
create table blog(id serial primary key, owner_id int not null references account(id), name text not null);
create table tag(id int primary key, blog_id int references blog(id), label text);
create unique index tag_one_per_blog on tag(blog_id) where label = 'pinned';
create table post(id int primary key, author int references account(id), title text);
create table item(order_id int, line int, note text, primary key (order_id, line));
create table shipment(id int primary key, order_id int not null, line int not null, foreign key (order_id, line) references item(order_id, line));
create table review(id int primary key, blog_id int not null constraint review_blog_fk references blog(id), stars int);
comment on constraint review_blog_fk on review is '@graphql({"foreign_name": "reviewedBlog", "local_name": "critiques"})';
insert into account(email, parent_id) values ('root@x.com', null), ('child@x.com', 1), ('grandchild@x.com', 2);
insert into address(account_id, city) values (1, 'Paris');
insert into blog(owner_id, name) values (1, 'b1'), (1, 'b2'), (2, 'b3');
insert into tag values (1, 1, 't1'), (2, 1, 't2');
insert into post values (1, 3, 'p1');
insert into item values (1, 1, 'first line'), (1, 2, 'second line');
insert into shipment values (10, 1, 2);
insert into review values (1, 1, 5), (2, 1, 3);
grant all on all tables in schema public to service_role;
`

func TestRelationshipNamesAndTypes(t *testing.T) {
	d := newTestDB(t, relationshipFixture)
	for typ, want := range map[string]string{
		// parent_id -> parent (to-one, nullable column); the self reference yields accountCollection; the unique
		// address.account_id gives a to-one address; post.author has no suffix so it is named after the type.
		"Account": "accountCollection: AccountConnection, address: Address, blogCollection: BlogConnection, email: String!, id: Int!, nodeId: ID!, parent: Account, parentId: Int, postCollection: PostConnection",
		"Address": "account: Account!, accountId: Int!, city: String, id: Int!, nodeId: ID!",
		// The partial unique index on tag.blog_id is ignored: tags are a collection. Directive names win.
		"Blog":     "critiques: ReviewConnection, id: Int!, name: String!, nodeId: ID!, owner: Account!, ownerId: Int!, tagCollection: TagConnection",
		"Tag":      "blog: Blog, blogId: Int, id: Int!, label: String, nodeId: ID!",
		"Post":     "account: Account, author: Int, id: Int!, nodeId: ID!, title: String",
		"Item":     "line: Int!, nodeId: ID!, note: String, orderId: Int!, shipmentCollection: ShipmentConnection",
		"Shipment": "id: Int!, item: Item!, line: Int!, nodeId: ID!, orderId: Int!",
		"Review":   "blogId: Int!, id: Int!, nodeId: ID!, reviewedBlog: Blog!, stars: Int",
	} {
		if got := d.fieldTypes(typ); got != want {
			t.Errorf("%s fields\n got: %s\nwant: %s", typ, got, want)
		}
	}
	// Relationship fields take no arguments; to-many ones take the collection arguments.
	if got := d.query(`{ blogCollection { edges { node { owner(filter: {}) { id } } } } }`); got != `{"data": null, "errors": [{"message": "Input contains extra keys [\"filter\"]"}]}` {
		t.Errorf("args on to-one: %s", got)
	}
}

func TestRelationshipNamesWithoutInflection(t *testing.T) {
	d := newTestDB(t, `
		comment on schema public is '@graphql({"introspection": true})';
		create table "Person"(id int primary key);
		create table book(id int primary key, "authorId" int references "Person"(id), owner_id int not null references "Person"(id));
		grant all on all tables in schema public to service_role;
	`)
	// Without inflection only an "Id" suffix is stripped; owner_id keeps the type name.
	if got, want := d.fieldTypes("book"), `author: Person, authorId: Int, id: Int!, nodeId: ID!, owner_id: Int!, person: Person!`; got != want {
		t.Errorf("book\n got: %s\nwant: %s", got, want)
	}
	if got, want := d.fieldTypes("Person"), `bookCollection: bookConnection, bookCollection: bookConnection, id: Int!, nodeId: ID!`; got != want {
		t.Errorf("Person\n got: %s\nwant: %s", got, want)
	}
}

func TestRelationshipNullabilityFollowsRLS(t *testing.T) {
	d := newTestDB(t, relationshipFixture)
	if got := d.fieldTypes("Blog"); !strings.Contains(got, "owner: Account!") {
		t.Fatalf("before RLS: %s", got)
	}
	d.exec(`alter table account enable row level security`)
	// Policies may hide the referenced row, so the to-one field must be nullable.
	if got := d.fieldTypes("Blog"); !strings.Contains(got, "owner: Account,") {
		t.Errorf("with RLS on account: %s", got)
	}
	if got := d.fieldTypes("Address"); !strings.Contains(got, "account: Account,") {
		t.Errorf("with RLS on account: %s", got)
	}
	// RLS on the referencing table does not matter.
	if got := d.fieldTypes("Review"); !strings.Contains(got, "reviewedBlog: Blog!") {
		t.Errorf("RLS elsewhere: %s", got)
	}
	// A hidden referenced row really comes back null.
	d.exec(`do $$ begin create role reader; exception when duplicate_object then null; end $$; grant usage on schema public to reader; grant select on all tables in schema public to reader;
		grant reader to service_role;
		create policy only_root on account for select to reader using (id = 1)`)
	if got := d.as("reader", nil, `{ blogCollection(filter: {id: {eq: 3}}) { edges { node { name owner { id } } } } }`, ""); got != `{"data": {"blogCollection": {"edges": [{"node": {"name": "b3", "owner": null}}]}}}` {
		t.Errorf("hidden owner: %s", got)
	}
}

func TestRelationshipData(t *testing.T) {
	d := newTestDB(t, relationshipFixture)
	d.expect(`{ accountByPk(id: 1) { address { city account { email } } blogCollection { edges { node { name tagCollection { edges { node { label } } } critiques(orderBy: [{stars: AscNullsLast}]) { edges { node { stars } } } } } } } }`,
		`{"data": {"accountByPk": {"address": {"city": "Paris", "account": {"email": "root@x.com"}}, "blogCollection": {"edges": [{"node": {"name": "b1", "critiques": {"edges": [{"node": {"stars": 3}}, {"node": {"stars": 5}}]}, "tagCollection": {"edges": [{"node": {"label": "t1"}}, {"node": {"label": "t2"}}]}}}, {"node": {"name": "b2", "critiques": {"edges": []}, "tagCollection": {"edges": []}}}]}}}}`)
	// A missing to-one row is null; a self reference walks up and down.
	d.expect(`{ accountCollection { edges { node { id address { city } parent { id parent { id } } accountCollection { edges { node { id } } } } } } }`,
		`{"data": {"accountCollection": {"edges": [{"node": {"id": 1, "parent": null, "address": {"city": "Paris"}, "accountCollection": {"edges": [{"node": {"id": 2}}]}}}, {"node": {"id": 2, "parent": {"id": 1, "parent": null}, "address": null, "accountCollection": {"edges": [{"node": {"id": 3}}]}}}, {"node": {"id": 3, "parent": {"id": 2, "parent": {"id": 1}}, "address": null, "accountCollection": {"edges": []}}}]}}}`)
	// Multi-column keys join on every column.
	d.expect(`{ shipmentCollection { edges { node { id item { note shipmentCollection { edges { node { id } } } } } } } }`,
		`{"data": {"shipmentCollection": {"edges": [{"node": {"id": 10, "item": {"note": "second line", "shipmentCollection": {"edges": [{"node": {"id": 10}}]}}}}]}}}`)
	// Collection arguments on a to-many relationship, including totalCount-free pagination.
	d.expect(`{ accountByPk(id: 1) { blogCollection(first: 1, orderBy: [{name: DescNullsLast}]) { pageInfo { hasNextPage } edges { node { name } } } } }`,
		`{"data": {"accountByPk": {"blogCollection": {"edges": [{"node": {"name": "b2"}}], "pageInfo": {"hasNextPage": true}}}}}`)
	// Any depth still resolves in the one statement of the root field.
	deep := `{ accountByPk(id: 3) { parent { parent { blogCollection { edges { node { owner { address { account { blogCollection(first: 1) { edges { node { critiques { edges { node { reviewedBlog { owner { email } } } } } } } } } } } } } } } } } }`
	d.expect(deep, `{"data": {"accountByPk": {"parent": {"parent": {"blogCollection": {"edges": [{"node": {"owner": {"address": {"account": {"blogCollection": {"edges": [{"node": {"critiques": {"edges": [{"node": {"reviewedBlog": {"owner": {"email": "root@x.com"}}}}, {"node": {"reviewedBlog": {"owner": {"email": "root@x.com"}}}}]}}}]}}}}}}, {"node": {"owner": {"address": {"account": {"blogCollection": {"edges": [{"node": {"critiques": {"edges": [{"node": {"reviewedBlog": {"owner": {"email": "root@x.com"}}}}, {"node": {"reviewedBlog": {"owner": {"email": "root@x.com"}}}}]}}}]}}}}}}]}}}}}}`)
}

func TestRelationshipsNeedSelectableKeys(t *testing.T) {
	d := newTestDB(t, relationshipFixture)
	// Without SELECT on the key column the relationship disappears (both directions); the rest stays.
	d.exec(`revoke select on blog from service_role; grant select (id, name) on blog to service_role`)
	if got, want := d.fieldTypes("Blog"), "critiques: ReviewConnection, id: Int!, name: String!, nodeId: ID!, tagCollection: TagConnection"; got != want {
		t.Errorf("Blog\n got: %s\nwant: %s", got, want)
	}
	if got := d.fieldTypes("Account"); strings.Contains(got, "blogCollection") {
		t.Errorf("Account still has blogCollection: %s", got)
	}
	// Without any SELECT on the target table the relationship to it disappears.
	d.exec(`revoke select on address from service_role`)
	if got := d.fieldTypes("Account"); strings.Contains(got, "address") {
		t.Errorf("Account still has address: %s", got)
	}
}

// The reverse to-one field is named from the referenced column (pg_graphql applies the suffix rule to it).
func TestReverseToOneNamedFromReferencedColumn(t *testing.T) {
	d := newTestDB(t, `
		comment on schema public is '@graphql({"inflect_names": true, "introspection": true})';
		create table users(user_id int primary key);
		create table profile(id int primary key, owner int unique references users(user_id));
		insert into users values (1); insert into profile values (7, 1);
		grant select on all tables in schema public to service_role;
	`)
	if got, want := d.fieldTypes("Users"), "nodeId: ID!, user: Profile, userId: Int!"; got != want {
		t.Errorf("Users\n got: %s\nwant: %s", got, want)
	}
	d.expect(`{ usersCollection { edges { node { user { id users { userId } } } } } }`,
		`{"data": {"usersCollection": {"edges": [{"node": {"user": {"id": 7, "users": {"userId": 1}}}}]}}}`)
}

// Each side of a relationship is named with the inflection of the schema of the table the field leads to.
func TestRelationshipNamesAcrossSchemas(t *testing.T) {
	d := newTestDB(t, `
		create schema a; create schema b;
		comment on schema a is '@graphql({"inflect_names": true})';
		create table a.parent(parent_id int primary key);
		create table b.child(id int primary key, parent_id int unique references a.parent(parent_id));
		insert into a.parent values (1); insert into b.child values (5, 1);
		grant usage on schema a, b to service_role;
		grant select on all tables in schema a, b to service_role;
	`)
	body := string(d.engine.ExecuteAs(context.Background(), d.conn,
		Session{Role: "service_role", Claims: map[string]any{"role": "service_role"}, SearchPath: []string{"a", "b"}},
		Request{Query: `{ parentCollection { edges { node { parentId child { id parent { parentId } } } } } }`}))
	if want := `{"data": {"parentCollection": {"edges": [{"node": {"child": {"id": 5, "parent": {"parentId": 1}}, "parentId": 1}}]}}}`; body != want {
		t.Errorf("\n got: %s\nwant: %s", body, want)
	}
}
