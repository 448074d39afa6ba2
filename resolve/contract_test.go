package resolve

import "testing"

// TestRepresentativePairs replays the request/response pairs of the contract (graphql-api.md 1.21) byte for
// byte, each on a schema like the upstream test it comes from.
func TestRepresentativePairs(t *testing.T) {
	inflected := `comment on schema public is '@graphql({"inflect_names": true})';`
	cases := []struct {
		name, fixture, query, want string
	}{
		{"filter by id",
			`create table account(id serial primary key, email text); insert into account(email) select 'a' || i from generate_series(1, 3) i;`,
			`{ accountCollection(filter: {id: {eq: 2}}) { edges { node { id } } } }`,
			`{"data": {"accountCollection": {"edges": [{"node": {"id": 2}}]}}}`},
		{"fragment and cursor",
			inflected + `create table account(id serial primary key); insert into account default values;
			create table blog(id serial primary key, owner_id int not null references account(id), name text not null, description text);
			insert into blog(owner_id, name, description) values (1, 'A: Blog 1', 'first'), (1, 'A: Blog 2', 'second');`,
			`{ blogCollection(first: 1) { edges { cursor node { ...BaseBlog ownerId } } } } fragment BaseBlog on Blog { name description }`,
			`{"data": {"blogCollection": {"edges": [{"node": {"name": "A: Blog 1", "ownerId": 1, "description": "first"}, "cursor": "WzFd"}]}}}`},
		{"node with inline fragments",
			inflected + `create table account(id serial primary key, is_verified bool); insert into account(is_verified) values (true);
			create table blog(id serial primary key, owner_id int not null references account(id), name text not null);
			insert into blog(owner_id, name) values (1, 'Blog 1');`,
			`{ node(nodeId: "WyJwdWJsaWMiLCAiYmxvZyIsIDFd") { nodeId ... on Account { isVerified } ... on Blog { id name owner { id } } } }`,
			`{"data": {"node": {"id": 1, "name": "Blog 1", "owner": {"id": 1}, "nodeId": "WyJwdWJsaWMiLCAiYmxvZyIsIDFd"}}}`},
		{"composite primary key",
			inflected + `create table item(item_id int, product_id int, quantity int, price numeric(10, 2), primary key (item_id, product_id));
			insert into item values (1, 101, 3, 9.99), (1, 102, 1, 24.99);`,
			`{ itemByPk(itemId: 1, productId: 102) { itemId productId quantity price } }`,
			`{"data": {"itemByPk": {"price": "24.99", "itemId": 1, "quantity": 1, "productId": 102}}}`},
		{"missing primary key column",
			inflected + `create table item(item_id int, product_id int, primary key (item_id, product_id));`,
			`{ itemByPk(itemId: 1) { itemId productId } }`,
			`{"data": null, "errors": [{"message": "Missing primary key column(s): product_id"}]}`},
		{"insert explicit null",
			inflected + `create table account(id serial primary key, email text default 'x');`,
			`mutation { insertIntoAccountCollection(objects: [{ email: null }]) { affectedCount records { id email } } }`,
			`{"data": {"insertIntoAccountCollection": {"records": [{"id": 1, "email": null}], "affectedCount": 1}}}`},
		{"delete beyond atMost",
			inflected + `create table account(id serial primary key, email text); insert into account(email) values ('bat@x.com');`,
			`mutation { deleteFromAccountCollection(filter: {email: {eq: "bat@x.com"}} atMost: 0) { affectedCount records { id } } }`,
			`{"data": null, "errors": [{"message": "delete impacts too many records"}]}`},
		{"database error verbatim",
			inflected + `create table blog_post(id bigserial primary key, title text, parent_id bigint references blog_post(id));
			insert into blog_post(id, title) values (1, 'root'); select setval('blog_post_id_seq', 1, false);`,
			`mutation { insertIntoBlogPostCollection(objects: [{ title: "hello" parentId: "1" }]) { affectedCount records { id parentId } } }`,
			`{"data": null, "errors": [{"message": "duplicate key value violates unique constraint \"blog_post_pkey\""}]}`},
		{"introspection disabled",
			`create table blog(id serial primary key, content text); insert into blog(content) values ('hello, world');`,
			`{ __schema { types { name } } blogCollection { edges { node { id content } } } }`,
			`{"data": {"blogCollection": {"edges": [{"node": {"id": 1, "content": "hello, world"}}]}}, "errors": [{"message": "Unknown field \"__schema\" on type Query"}]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newTestDB(t, c.fixture)
			if got := d.query(c.query); got != c.want {
				t.Errorf("\n got: %s\nwant: %s", got, c.want)
			}
		})
	}
	// The bigserial pair proper: an empty table, ids from the sequence, bigint values as strings.
	d := newTestDB(t, inflected+`create table blog_post(id bigserial primary key, title text, parent_id bigint);`)
	d.expect(`mutation { insertIntoBlogPostCollection(objects: [{ title: "hello" parentId: "1" }]) { affectedCount records { id parentId } } }`,
		`{"data": {"insertIntoBlogPostCollection": {"records": [{"id": "1", "parentId": "1"}], "affectedCount": 1}}}`)
}
