package resolve

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/internal/dbsetup"
	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/pgtest"
	"github.com/pgreflect/pgreflect/reflect"
)

// TestMain also checks sqlgen's golden files for orphans: every one is a request of TestPlansRenderSQLGoldens.
func TestMain(m *testing.M) { os.Exit(sqlGoldens.AfterRun(pgtest.Main(m))) }

// testDB is a database with pgreflect's setup applied and fixture SQL loaded, plus an engine.
type testDB struct {
	t      testing.TB
	conn   *pgx.Conn
	engine *Engine
}

func newTestDB(t testing.TB, fixture string) *testDB {
	t.Helper()
	_, conn := testenv.SetupDB(t, fixture)
	return &testDB{t: t, conn: conn, engine: NewEngine(Options{})}
}

// sibling is another connection to d's database sharing d's engine, as the connections of a server's pool do.
func (d *testDB) sibling() *testDB {
	d.t.Helper()
	conn, err := pgx.Connect(context.Background(), d.conn.Config().ConnString())
	if err != nil {
		d.t.Fatal(err)
	}
	d.t.Cleanup(func() { conn.Close(context.Background()) })
	return &testDB{t: d.t, conn: conn, engine: d.engine}
}

// watch runs the schema watcher a server runs (reflect.Watch on dbsetup's channel) on d's database, passing
// announcements on to inv, until the test ends; it returns once the watcher listens.
func (d *testDB) watch(inv reflect.Invalidator) {
	d.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan struct{})
	connect := func(ctx context.Context) (*pgx.Conn, error) { return pgx.Connect(ctx, d.conn.Config().ConnString()) }
	go func() { reflect.Watch(ctx, connect, dbsetup.NotifyChannel, inv, ready, d.t.Logf); close(done) }()
	d.t.Cleanup(func() { cancel(); <-done })
	<-ready
}

// exec runs SQL as the superuser and forgets cached schemas (the tests do not run the LISTEN watcher).
func (d *testDB) exec(sql string) {
	d.t.Helper()
	if _, err := d.conn.Exec(context.Background(), sql); err != nil {
		d.t.Fatal(err)
	}
	d.engine.Invalidate()
}

// as resolves a request as role with claims.
func (d *testDB) as(role string, claims map[string]any, query string, variables string) string {
	d.t.Helper()
	if claims == nil {
		claims = map[string]any{"role": role}
	}
	req := Request{Query: query}
	if variables != "" {
		req.Variables = json.RawMessage(variables)
	}
	body := d.engine.ExecuteAs(context.Background(), d.conn, Session{Role: role, Claims: claims, SearchPath: []string{"public"}}, req)
	if s := d.conn.PgConn().TxStatus(); s != 'I' {
		d.t.Fatalf("connection left in transaction state %q", s)
	}
	return string(body)
}

func (d *testDB) query(query string) string {
	d.t.Helper()
	return d.as("service_role", nil, query, "")
}

func (d *testDB) expect(query, want string) {
	d.t.Helper()
	if got := d.query(query); got != want {
		d.t.Errorf("query %s\n got: %s\nwant: %s", query, got, want)
	}
}

const blogFixture = `
create table account(
  id serial primary key,
  email varchar(255) not null,
  encrypted_password varchar(255),
  created_at timestamp not null default '2023-07-28 12:40:05',
  updated_at timestamp not null default '2023-07-28 12:40:05'
);
create table blog(
  id serial primary key,
  owner_id integer not null references account(id),
  name varchar(255) not null,
  description varchar(255),
  created_at timestamp not null default '2023-07-28 12:40:05'
);
create type blog_post_status as enum ('PENDING', 'RELEASED');
create table blog_post(
  id uuid not null default gen_random_uuid() primary key,
  blog_id integer not null references blog(id),
  title varchar(255) not null,
  body varchar(10000),
  status blog_post_status not null default 'PENDING',
  created_at timestamp not null default '2023-07-28 12:40:05'
);
insert into account(email) values ('aardvark@x.com'), ('bat@x.com'), ('cat@x.com'), ('dog@x.com'), ('elephant@x.com');
insert into blog(owner_id, name, description) values (1, 'A: Blog 1', 'first'), (1, 'A: Blog 2', 'second'), (2, 'B: Blog 3', 'third');
insert into blog_post(id, blog_id, title, status) values
  ('00000000-0000-0000-0000-000000000001', 1, 'post 1', 'RELEASED'),
  ('00000000-0000-0000-0000-000000000002', 1, 'post 2', 'PENDING');
comment on schema public is '@graphql({"inflect_names": true})';
grant all on all tables in schema public to anon, authenticated, service_role;
grant all on all sequences in schema public to anon, authenticated, service_role;
`

func TestRepresentativeRequests(t *testing.T) {
	d := newTestDB(t, blogFixture)
	d.expect(`{ accountCollection(filter: {id: {eq: 2}}) { edges { node { id } } } }`,
		`{"data": {"accountCollection": {"edges": [{"node": {"id": 2}}]}}}`)
	d.expect(`{ blogCollection(first: 1) { edges { cursor node { ...BaseBlog ownerId } } } } fragment BaseBlog on Blog { name description }`,
		`{"data": {"blogCollection": {"edges": [{"node": {"name": "A: Blog 1", "ownerId": 1, "description": "first"}, "cursor": "WzFd"}]}}}`)
	d.expect(`{ node(nodeId: "WyJwdWJsaWMiLCAiYmxvZyIsIDFd") { nodeId ... on Account { email } ... on Blog { id name owner { id } } } }`,
		`{"data": {"node": {"id": 1, "name": "A: Blog 1", "owner": {"id": 1}, "nodeId": "WyJwdWJsaWMiLCAiYmxvZyIsIDFd"}}}`)
	d.expect(`{ accountByPk(id: 2) { id email nodeId } }`,
		`{"data": {"accountByPk": {"id": 2, "email": "bat@x.com", "nodeId": "WyJwdWJsaWMiLCAiYWNjb3VudCIsIDJd"}}}`)
	d.expect(`{ accountByPk(id: 99) { id } }`, `{"data": {"accountByPk": null}}`)
	d.expect(`{ blogPostCollection(filter: {status: {eq: RELEASED}}) { edges { node { title status blog { name owner { email } } } } } }`,
		`{"data": {"blogPostCollection": {"edges": [{"node": {"blog": {"name": "A: Blog 1", "owner": {"email": "aardvark@x.com"}}, "title": "post 1", "status": "RELEASED"}}]}}}`)
	d.expect(`{ accountCollection(first: 1) { edges { node { blogCollection { edges { node { name blogPostCollection(first: 1) { edges { node { title } } } } } } } } } }`,
		`{"data": {"accountCollection": {"edges": [{"node": {"blogCollection": {"edges": [{"node": {"name": "A: Blog 1", "blogPostCollection": {"edges": [{"node": {"title": "post 1"}}]}}}, {"node": {"name": "A: Blog 2", "blogPostCollection": {"edges": []}}}]}}}]}}}`)
	d.expect(`{ a: accountCollection(first: 1) { __typename pageInfo { __typename } edges { __typename node { __typename createdAt } } } __typename }`,
		`{"data": {"a": {"edges": [{"node": {"createdAt": "2023-07-28T12:40:05", "__typename": "Account"}, "__typename": "AccountEdge"}], "pageInfo": {"__typename": "PageInfo"}, "__typename": "AccountConnection"}, "__typename": "Query"}}`)
}

func TestPaginationAndCursors(t *testing.T) {
	d := newTestDB(t, `create table account(id int primary key, name text);
		insert into account select i, case when i % 3 = 0 then null else 'n' || (i % 4) end from generate_series(1, 10) i;
		grant select on account to service_role;`)
	page := `pageInfo { startCursor endCursor hasNextPage hasPreviousPage } edges { node { id } }`
	d.expect(`{ accountCollection(first: 3) { `+page+` } }`,
		`{"data": {"accountCollection": {"edges": [{"node": {"id": 1}}, {"node": {"id": 2}}, {"node": {"id": 3}}], "pageInfo": {"endCursor": "WzNd", "hasNextPage": true, "startCursor": "WzFd", "hasPreviousPage": false}}}}`)
	d.expect(`{ accountCollection(first: 3, after: "WzNd") { `+page+` } }`,
		`{"data": {"accountCollection": {"edges": [{"node": {"id": 4}}, {"node": {"id": 5}}, {"node": {"id": 6}}], "pageInfo": {"endCursor": "WzZd", "hasNextPage": true, "startCursor": "WzRd", "hasPreviousPage": true}}}}`)
	d.expect(`{ accountCollection(last: 3, before: "WzRd") { `+page+` } }`,
		`{"data": {"accountCollection": {"edges": [{"node": {"id": 1}}, {"node": {"id": 2}}, {"node": {"id": 3}}], "pageInfo": {"endCursor": "WzNd", "hasNextPage": true, "startCursor": "WzFd", "hasPreviousPage": false}}}}`)
	d.expect(`{ accountCollection(last: 2, before: "WzRd") { pageInfo { hasNextPage hasPreviousPage } edges { node { id } } } }`,
		`{"data": {"accountCollection": {"edges": [{"node": {"id": 2}}, {"node": {"id": 3}}], "pageInfo": {"hasNextPage": true, "hasPreviousPage": true}}}}`)
	d.expect(`{ accountCollection(first: 2, after: "WzBd") { pageInfo { hasPreviousPage } } }`,
		`{"data": {"accountCollection": {"pageInfo": {"hasPreviousPage": false}}}}`)
	d.expect(`{ accountCollection(first: 2, after: "WzFd") { pageInfo { hasPreviousPage } } }`,
		`{"data": {"accountCollection": {"pageInfo": {"hasPreviousPage": true}}}}`)
	d.expect(`{ accountCollection(last: 2) { pageInfo { hasNextPage hasPreviousPage } edges { node { id } } } }`,
		`{"data": {"accountCollection": {"edges": [{"node": {"id": 9}}, {"node": {"id": 10}}], "pageInfo": {"hasNextPage": false, "hasPreviousPage": true}}}}`)
	d.expect(`{ accountCollection(first: 2, offset: 8) { pageInfo { hasNextPage hasPreviousPage } edges { node { id } } } }`,
		`{"data": {"accountCollection": {"edges": [{"node": {"id": 9}}, {"node": {"id": 10}}], "pageInfo": {"hasNextPage": false, "hasPreviousPage": true}}}}`)
	// Walking a nullable ordering forward page by page visits every row once, in order.
	var seen []string
	after := ""
	for i := 0; i < 10; i++ {
		args := `first: 3, orderBy: [{name: DescNullsFirst}]`
		if after != "" {
			args += `, after: "` + after + `"`
		}
		var resp struct {
			Data struct {
				AccountCollection struct {
					PageInfo struct {
						EndCursor   *string
						HasNextPage bool
					}
					Edges []struct{ Node struct{ ID int } }
				}
			}
		}
		body := d.query(`{ accountCollection(` + args + `) { pageInfo { endCursor hasNextPage } edges { node { id } } } }`)
		if err := json.Unmarshal([]byte(body), &resp); err != nil {
			t.Fatal(body)
		}
		for _, e := range resp.Data.AccountCollection.Edges {
			seen = append(seen, string(rune('0'+e.Node.ID)))
		}
		if !resp.Data.AccountCollection.PageInfo.HasNextPage {
			break
		}
		after = *resp.Data.AccountCollection.PageInfo.EndCursor
	}
	// DescNullsFirst: NULL names (3, 6, 9) first, then n3 (7), n2 (2, 10), n1 (1, 5), then id ascending.
	if got := strings.Join(seen, ","); got != "3,6,9,7,2,:,1,5,4,8" {
		t.Errorf("keyset walk visited %s", got)
	}
}

func TestArgumentAndFieldErrors(t *testing.T) {
	d := newTestDB(t, blogFixture)
	for query, want := range map[string]string{
		`{ accountCollection(first: -1) { edges { cursor } } }`:                                                 "`first` must be an unsigned integer",
		`{ accountCollection(first: 1, last: 1) { edges { cursor } } }`:                                         `only one of "first" and "last" may be provided`,
		`{ accountCollection(first: 1, before: "WzFd") { edges { cursor } } }`:                                  `"first" may only be used with "after"`,
		`{ accountCollection(last: 1, offset: 1) { edges { cursor } } }`:                                        `"offset" may only be used with "first" and "after"`,
		`{ accountCollection(after: "!!") { edges { cursor } } }`:                                               "Failed to decode cursor, error 1",
		`{ accountCollection(after: "e30=") { edges { cursor } } }`:                                             "Failed to decode cursor, error 4",
		`{ accountCollection(after: "WzEsMiwzXQ==") { edges { cursor } } }`:                                     "orderBy clause incompatible with pagination cursor",
		`{ accountCollection { edges { node { dneField } } } }`:                                                 "Unknown field 'dneField' on type 'Account'",
		`{ accountByPk(id: 1) { nonExistentField } }`:                                                           `Unknown field "nonExistentField" on type Account`,
		`{ accountCollection { totalCount } }`:                                                                  "unknown field in connection",
		`{ accountCollection { aggregate { count } } }`:                                                         "enable the aggregate directive to use aggregates",
		`{ accountCollection { edges { x } } }`:                                                                 "unknown field in edge",
		`{ accountCollection { pageInfo { x } } }`:                                                              "unknown field in pageInfo",
		`{ accountCollection(unknown: 1) { edges { cursor } } }`:                                                `Input contains extra keys ["unknown"]`,
		`{ accountCollection(filter: {id: {is: null}}) { edges { cursor } } }`:                                  "Error transpiling Is filter value type",
		`{ accountCollection(filter: {email: {eq: 1}}) { edges { cursor } } }`:                                  "Invalid input for String(Some(255)) type",
		`{ accountCollection(filter: {id: {eq: "x"}}) { edges { cursor } } }`:                                   "Invalid input for Int type",
		`{ accountCollection(filter: {dne: {eq: 1}}) { edges { cursor } } }`:                                    `Input for type AccountFilter contains extra keys ["dne"]`,
		`{ accountCollection(orderBy: [{id: Sideways}]) { edges { cursor } } }`:                                 "Invalid input for OrderByDirection type",
		`{ blogCollection { edges { node { owner(first: 1) { id } } } } }`:                                      `Input contains extra keys ["first"]`,
		`{ node(nodeId: "WyJwdWJsaWMiLCAibm9wZSIsIDFd") { nodeId } }`:                                           "Collection referenced by nodeId did not match any known collection",
		`{ node(nodeId: "") { nodeId } }`:                                                                       "Invalid value passed to nodeId argument. Error 4",
		`{ node(nodeId: "WyJwdWJsaWMiLCAiYWNjb3VudCIsIDEsIDJd") { nodeId } }`:                                   "Primary key column count mismatch. Expected 1, provided 2",
		`{ blogCollection(filter: {nodeId: {eq: "WyJwdWJsaWMiLCAiYWNjb3VudCIsIDJd"}}) { edges { cursor } } }`:   "nodeId belongs to a different collection",
		`{ accountCollection(filter: {email: {eq: "` + strings.Repeat("x", 256) + `"}}) { edges { cursor } } }`: "Invalid input for String type. Maximum character length 255",
	} {
		got := d.query(query)
		want := `{"data": null, "errors": [{"message": ` + jsonString(want) + `}]}`
		if got != want {
			t.Errorf("%s\n got: %s\nwant: %s", query, got, want)
		}
	}
	// A failing root field leaves the others' data in place.
	d.expect(`{ account { id } accountByPk(id: 1) { id } }`,
		`{"data": {"accountByPk": {"id": 1}}, "errors": [{"message": "Unknown field \"account\" on type Query"}]}`)
	d.expect(`{ __schema { types { name } } accountByPk(id: 1) { id } }`,
		`{"data": {"accountByPk": {"id": 1}}, "errors": [{"message": "Unknown field \"__schema\" on type Query"}]}`)
	for query, want := range map[string]string{
		`{ accountCollection { `:                                             "",
		`query A { __typename } query A { __typename }`:                      "Operation names must be unique",
		`{ __typename } query B { __typename }`:                              "Anonymous operations must be the only defined operation",
		`subscription { __typename }`:                                        "Subscriptions are not supported",
		`{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }`: "Found a cycle between fragments",
		`{ __typename @skip(if: true) }`:                                     "Selection set must not be empty",
		`{ __typename @foo }`:                                                "Unknown directive foo",
	} {
		got := d.query(query)
		if want == "" {
			if !strings.HasPrefix(got, `{"errors": [{"message": "query parse error: Parse error at 1:`) {
				t.Errorf("%s: %s", query, got)
			}
			continue
		}
		if exp := `{"errors": [{"message": ` + jsonString(want) + `}]}`; got != exp {
			t.Errorf("%s\n got: %s\nwant: %s", query, got, exp)
		}
	}
	if got := d.as("service_role", nil, `{ __typename }`, `[1]`); got != `{"errors": [{"message": "variables must be an object"}]}` {
		t.Errorf("array variables: %s", got)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestFiltersAndVariables(t *testing.T) {
	d := newTestDB(t, blogFixture)
	ids := func(filter, vars string) string {
		t.Helper()
		body := d.as("service_role", nil, `query Q($v: String, $n: Int, $l: [Int!]) { accountCollection(filter: `+filter+`) { edges { node { id } } } }`, vars)
		var resp struct {
			Data struct {
				AccountCollection struct {
					Edges []struct{ Node struct{ ID int } }
				}
			}
			Errors []struct{ Message string }
		}
		if err := json.Unmarshal([]byte(body), &resp); err != nil || len(resp.Errors) > 0 {
			t.Fatalf("%s: %s", filter, body)
		}
		var out []string
		for _, e := range resp.Data.AccountCollection.Edges {
			out = append(out, string(rune('0'+e.Node.ID)))
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct{ filter, vars, want string }{
		{`{id: {gt: 3}}`, "", "4,5"},
		{`{id: {in: [1, 3]}}`, "", "1,3"},
		{`{id: {in: 2}}`, "", "2"},
		{`{id: {in: []}}`, "", ""},
		{`{id: {lt: null}}`, "", ""},
		{`{email: {startsWith: "c"}}`, "", "3"},
		{`{email: {like: "%a%"}}`, "", "1,2,3,5"},
		{`{email: {ilike: "B%"}}`, "", "2"},
		{`{email: {regex: "^[cd]"}}`, "", "3,4"},
		{`{encryptedPassword: {is: NULL}}`, "", "1,2,3,4,5"},
		{`{or: [{id: {eq: 1}}, {id: {eq: 5}}]}`, "", "1,5"},
		{`{and: [{id: {gte: 2}}, {id: {lte: 3}}]}`, "", "2,3"},
		{`{not: {id: {eq: 1}}}`, "", "2,3,4,5"},
		{`{or: [], and: [], not: {}}`, "", "1,2,3,4,5"},
		{`{id: null}`, "", "1,2,3,4,5"},
		{`{email: {eq: $v}}`, `{}`, "1,2,3,4,5"},
		{`{email: {eq: $v}}`, `{"v": "dog@x.com"}`, "4"},
		{`{id: {eq: $n}}`, `{"n": 3}`, "3"},
		{`{id: {in: $l}}`, `{"l": [4, 5]}`, "4,5"},
		{`{nodeId: {eq: "WyJwdWJsaWMiLCAiYWNjb3VudCIsIDJd"}}`, "", "2"},
	} {
		if got := ids(c.filter, c.vars); got != c.want {
			t.Errorf("filter %s vars %s: got %q want %q", c.filter, c.vars, got, c.want)
		}
	}
}

func TestMutations(t *testing.T) {
	d := newTestDB(t, blogFixture+`alter table account add constraint email_has_at check (email like '%@%');`)
	if got := d.query(`mutation { insertIntoAccountCollection(objects: [{email: "new@x.com"}, {email: "newer@x.com", encryptedPassword: null}]) { affectedCount records { id email encryptedPassword } } }`); got !=
		`{"data": {"insertIntoAccountCollection": {"records": [{"id": 6, "email": "new@x.com", "encryptedPassword": null}, {"id": 7, "email": "newer@x.com", "encryptedPassword": null}], "affectedCount": 2}}}` {
		t.Errorf("insert: %s", got)
	}
	if got := d.query(`mutation { updateAccountCollection(set: {email: "x@x.com"}, filter: {id: {gt: 5}}) { affectedCount } }`); got !=
		`{"data": null, "errors": [{"message": "update impacts too many records"}]}` {
		t.Errorf("atMost: %s", got)
	}
	d.expect(`{ accountCollection(filter: {id: {gt: 5}}) { edges { node { email } } } }`,
		`{"data": {"accountCollection": {"edges": [{"node": {"email": "new@x.com"}}, {"node": {"email": "newer@x.com"}}]}}}`)
	// The second field fails a check constraint: the first field's insert must not survive.
	if got := d.query(`mutation { a: insertIntoAccountCollection(objects: [{email: "kept@x.com"}]) { affectedCount } b: updateAccountCollection(set: {email: "bad"}, filter: {email: {eq: "kept@x.com"}}) { affectedCount } }`); got !=
		`{"data": null, "errors": [{"message": "new row for relation \"account\" violates check constraint \"email_has_at\""}]}` {
		t.Errorf("rollback: %s", got)
	}
	d.expect(`{ accountCollection(filter: {email: {eq: "kept@x.com"}}) { edges { node { id } } } }`,
		`{"data": {"accountCollection": {"edges": []}}}`)
	// A later field sees the earlier one's effect.
	if got := d.query(`mutation { a: insertIntoAccountCollection(objects: [{email: "seen@x.com"}]) { affectedCount } b: deleteFromAccountCollection(filter: {email: {eq: "seen@x.com"}}) { affectedCount records { email } } }`); got !=
		`{"data": {"a": {"affectedCount": 1}, "b": {"records": [{"email": "seen@x.com"}], "affectedCount": 1}}}` {
		t.Errorf("sequential: %s", got)
	}
	for query, want := range map[string]string{
		`mutation { insertIntoAccountCollection(objects: []) { affectedCount } }`:                                   "At least one record must be provided to objects",
		`mutation { updateAccountCollection(set: {}) { affectedCount } }`:                                           "At least one mapping must be provided to set argument",
		`mutation { deleteFromAccountCollection(filter: {email: {eq: "bat@x.com"}}, atMost: 0) { affectedCount } }`: "delete impacts too many records",
		`mutation { insertIntoAccountCollection(objects: [{invalidKey: 1}]) { affectedCount } }`:                    `Input for type AccountInsertInput contains extra keys ["invalidKey"]`,
		`mutation { insertIntoAccountCollection(objects: [{email: "a@b"}]) { x } }`:                                 "unknown field in insert",
		`mutation { nope { x } }`: `Unknown field "nope" on type Mutation`,
	} {
		if got, exp := d.query(query), `{"data": null, "errors": [{"message": `+jsonString(want)+`}]}`; got != exp {
			t.Errorf("%s\n got: %s\nwant: %s", query, got, exp)
		}
	}
	d.expect(`{ accountByPk(id: 2) { email } }`, `{"data": {"accountByPk": {"email": "bat@x.com"}}}`)
}

func TestRowLevelSecurityAndRoles(t *testing.T) {
	d := newTestDB(t, `
		comment on schema public is '@graphql({"inflect_names": true})';
		create table todo(id serial primary key, user_id uuid not null, task text not null);
		alter table todo enable row level security;
		create policy own on todo for all to authenticated using (auth.uid() = user_id) with check (auth.uid() = user_id);
		grant select, insert, update, delete on todo to authenticated;
		grant usage on sequence todo_id_seq to authenticated;
		insert into todo(user_id, task) values
		  ('11111111-1111-1111-1111-111111111111', 'alice 1'), ('22222222-2222-2222-2222-222222222222', 'bob 1');
	`)
	alice := map[string]any{"role": "authenticated", "sub": "11111111-1111-1111-1111-111111111111"}
	q := `{ todoCollection { edges { node { task } } } }`
	if got := d.as("authenticated", alice, q, ""); got != `{"data": {"todoCollection": {"edges": [{"node": {"task": "alice 1"}}]}}}` {
		t.Errorf("alice sees %s", got)
	}
	// anon has the default grants but no policy admits it.
	if got := d.as("anon", nil, q, ""); got != `{"data": {"todoCollection": {"edges": []}}}` {
		t.Errorf("anon sees %s", got)
	}
	// Alice cannot touch Bob's row: the update matches nothing and the row is unchanged.
	if got := d.as("authenticated", alice, `mutation { updateTodoCollection(set: {task: "hacked"}, filter: {userId: {eq: "22222222-2222-2222-2222-222222222222"}}) { affectedCount } }`, ""); got != `{"data": {"updateTodoCollection": {"affectedCount": 0}}}` {
		t.Errorf("cross-user update: %s", got)
	}
	if got := d.as("authenticated", alice, `mutation { insertIntoTodoCollection(objects: [{userId: "22222222-2222-2222-2222-222222222222", task: "forged"}]) { affectedCount } }`, ""); !strings.Contains(got, "violates row-level security policy") {
		t.Errorf("forged insert: %s", got)
	}
	var tasks string
	if err := d.conn.QueryRow(context.Background(), "select string_agg(task, ',' order by id) from todo").Scan(&tasks); err != nil || tasks != "alice 1,bob 1" {
		t.Errorf("rows after attacks: %q %v", tasks, err)
	}
	// Revoking UPDATE removes only the update entry point; granting it back restores it.
	d.exec("revoke update on todo from authenticated")
	upd := `mutation { updateTodoCollection(set: {task: "x"}) { affectedCount } }`
	if got := d.as("authenticated", alice, upd, ""); got != `{"data": null, "errors": [{"message": "Unknown field \"updateTodoCollection\" on type Mutation"}]}` {
		t.Errorf("after revoke: %s", got)
	}
	if got := d.as("authenticated", alice, `mutation { deleteFromTodoCollection(filter: {task: {eq: "none"}}) { affectedCount } }`, ""); got != `{"data": {"deleteFromTodoCollection": {"affectedCount": 0}}}` {
		t.Errorf("delete after update revoke: %s", got)
	}
	d.exec("grant update on todo to authenticated")
	if got := d.as("authenticated", alice, upd, ""); got != `{"data": {"updateTodoCollection": {"affectedCount": 1}}}` {
		t.Errorf("after grant: %s", got)
	}
	// Column-level SELECT: the revoked column disappears.
	d.exec("revoke select on todo from authenticated; grant select (id, task) on todo to authenticated")
	if got := d.as("authenticated", alice, `{ todoCollection { edges { node { userId } } } }`, ""); got != `{"data": null, "errors": [{"message": "Unknown field 'userId' on type 'Todo'"}]}` {
		t.Errorf("column revoke: %s", got)
	}
}

func TestLibraryExecuteInCallerTransaction(t *testing.T) {
	d := newTestDB(t, blogFixture)
	ctx := context.Background()
	tx, err := d.conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "insert into account(email) values ('in-tx@x.com')"); err != nil {
		t.Fatal(err)
	}
	got := string(d.engine.Execute(ctx, tx.Conn(), Request{Query: `{ accountCollection(filter: {email: {eq: "in-tx@x.com"}}) { edges { node { id } } } }`}))
	if got != `{"data": {"accountCollection": {"edges": [{"node": {"id": 6}}]}}}` {
		t.Errorf("sees caller's uncommitted row: %s", got)
	}
	// A failing request rolls back to its savepoint; the caller's transaction goes on.
	got = string(d.engine.Execute(ctx, tx.Conn(), Request{Query: `mutation { insertIntoAccountCollection(objects: [{email: "x@x.com"}]) { affectedCount } deleteFromAccountCollection(atMost: 0) { affectedCount } }`}))
	if got != `{"data": null, "errors": [{"message": "delete impacts too many records"}]}` {
		t.Errorf("failing request: %s", got)
	}
	var n int
	if err := tx.QueryRow(ctx, "select count(*) from account").Scan(&n); err != nil || n != 6 {
		t.Fatalf("caller's transaction after failed request: n=%d err=%v", n, err)
	}
}

// The library's Execute reads the schema inside the caller's transaction, as the connection's role. What it
// keeps must not stand for a session's schema (whose prelude sets the role: a schema kept by Execute has none,
// and a session's request would run as the login role), nor outlive what only that transaction saw: its own
// uncommitted DDL, or an old snapshot.
func TestLibraryExecuteKeepsNoSchemaOthersMisread(t *testing.T) {
	d := newTestDB(t, `create function whoami() returns text stable language sql as 'select current_user::text';
		create table scratch (id int);`)
	ctx := t.Context()
	inTx := func(setup, query string, conn *pgx.Conn) string {
		t.Helper()
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(context.Background())
		if setup != "" {
			if _, err := tx.Exec(ctx, setup); err != nil {
				t.Fatal(err)
			}
		}
		return string(d.engine.Execute(ctx, tx.Conn(), Request{Query: query}))
	}
	const asAnon = "set local role anon; set local search_path = public"
	if got := inTx(asAnon, `{ whoami }`, d.conn); got != `{"data": {"whoami": "anon"}}` {
		t.Fatalf("Execute as anon: %s", got)
	}
	if got := d.as("anon", nil, `{ whoami }`, ""); got != `{"data": {"whoami": "anon"}}` {
		t.Errorf("a session of anon after Execute as anon: %s", got)
	}

	// A transaction that has written rows, and not the catalog, uses the schema kept, and keeps what it reads.
	if got := inTx("insert into scratch values (1); set local role authenticated; set local search_path = public",
		`{ whoami }`, d.conn); got != `{"data": {"whoami": "authenticated"}}` {
		t.Fatalf("Execute as authenticated in a transaction that has written: %s", got)
	}
	if _, err := d.engine.executed.Get(ctx, "authenticated", []string{"public"}, func(context.Context) (*gqlschema.Schema, error) {
		t.Error("the schema read in a transaction that wrote rows only was not kept")
		return nil, errors.New("not kept")
	}); err != nil {
		t.Log(err)
	}

	// DDL of the caller's transaction, rolled back
	const ghost = `{ ghostCollection { edges { node { id } } } }`
	if got := inTx(asAnon+"; reset role; create table ghost (id int primary key); grant select on ghost to anon; "+asAnon, ghost, d.conn); got != `{"data": {"ghostCollection": {"edges": []}}}` {
		t.Errorf("Execute after its transaction's own DDL: %s", got)
	}
	if got := inTx(asAnon, ghost, d.conn); !strings.Contains(got, "Unknown field") {
		t.Errorf("Execute after that transaction rolled back: %s", got)
	}

	// A repeatable read transaction whose snapshot is older than a change
	old, err := d.conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Rollback(context.Background())
	if _, err := old.Exec(ctx, "set transaction isolation level repeatable read; select 1; "+asAnon); err != nil {
		t.Fatal(err)
	}
	other := d.sibling()
	other.exec(`create table late (id int primary key); grant select on late to anon`)
	const late = `{ lateCollection { edges { node { id } } } }`
	if got := string(d.engine.Execute(ctx, old.Conn(), Request{Query: late})); !strings.Contains(got, "Unknown field") {
		t.Fatalf("Execute in a snapshot from before the table: %s", got)
	}
	if got := inTx(asAnon, late, other.conn); got != `{"data": {"lateCollection": {"edges": []}}}` {
		t.Errorf("Execute in a transaction after the change: %s", got)
	}
}

// A transaction of repeatable read keeps one snapshot, so Execute keeps the schema it read there for the
// transaction's later calls, and those still see the catalog of the snapshot after a change that others see; a
// transaction with a snapshot of after the change reads it afresh. One that has changed the catalog itself keeps
// nothing: its own DDL after a first call shows in the next, though its snapshot is the same.
func TestLibraryExecuteKeepsASnapshotsSchemaForItsTransaction(t *testing.T) {
	d := newTestDB(t, `create table early (id int primary key); grant select on early to anon;`)
	ctx := t.Context()
	begin := func(conn *pgx.Conn) (pgx.Tx, string) {
		t.Helper()
		tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tx.Rollback(context.Background()) })
		if _, err := tx.Exec(ctx, "set local role anon; set local search_path = public"); err != nil {
			t.Fatal(err)
		}
		var snapshot string
		if err := tx.QueryRow(ctx, "select pg_current_snapshot()::text").Scan(&snapshot); err != nil {
			t.Fatal(err)
		}
		return tx, snapshot
	}
	kept := func(snapshot string) bool {
		t.Helper()
		_, err := d.engine.snapshotted.GetInSnapshot(ctx, snapshot, "anon", []string{"public"}, func(context.Context) (*gqlschema.Schema, error) {
			return nil, errors.New("not kept")
		})
		return err == nil
	}
	const early, late = `{ earlyCollection { edges { node { id } } } }`, `{ lateCollection { edges { node { id } } } }`
	old, snapshot := begin(d.conn)
	if got := string(d.engine.Execute(ctx, old.Conn(), Request{Query: early})); got != `{"data": {"earlyCollection": {"edges": []}}}` {
		t.Fatalf("Execute in a repeatable read transaction: %s", got)
	}
	if !kept(snapshot) {
		t.Error("the schema read in a repeatable read transaction was not kept for its snapshot")
	}
	other := d.sibling()
	other.exec(`create table late (id int primary key); grant select on late to anon`)
	if got := string(d.engine.Execute(ctx, old.Conn(), Request{Query: late})); !strings.Contains(got, "Unknown field") {
		t.Errorf("Execute again in the snapshot from before the table: %s", got)
	}
	fresh, _ := begin(other.conn)
	if got := string(d.engine.Execute(ctx, fresh.Conn(), Request{Query: late})); got != `{"data": {"lateCollection": {"edges": []}}}` {
		t.Errorf("Execute in a repeatable read transaction after the change: %s", got)
	}

	// The transaction's own DDL
	own, _ := begin(d.sibling().conn)
	if _, err := own.Exec(ctx, "reset role; create table mine (id int primary key); grant select on mine to anon; set local role anon"); err != nil {
		t.Fatal(err)
	}
	const mine = `{ mineCollection { edges { node { id } } } }`
	if got := string(d.engine.Execute(ctx, own.Conn(), Request{Query: mine})); got != `{"data": {"mineCollection": {"edges": []}}}` {
		t.Fatalf("Execute after its transaction's own DDL: %s", got)
	}
	if _, err := own.Exec(ctx, "reset role; drop table mine; set local role anon"); err != nil {
		t.Fatal(err)
	}
	if got := string(d.engine.Execute(ctx, own.Conn(), Request{Query: mine})); !strings.Contains(got, "Unknown field") {
		t.Errorf("Execute after the transaction dropped its table: %s", got)
	}
}
