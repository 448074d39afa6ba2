package resolve

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// Privileges (spec 1.18): one test per row of the table, evaluated for the request's role.

const privilegeFixture = `
comment on schema public is '@graphql({"inflect_names": true, "introspection": true})';
create table account(id serial primary key, encrypted_password varchar(255) not null, email text, parent_id int references account(id));
insert into account(encrypted_password, email) values ('secret', 'a@x.com');
do $$ begin create role api; exception when duplicate_object then null; end $$;
grant usage on schema public to api;
grant all on all tables in schema public to api;
grant all on all sequences in schema public to api;
grant api to service_role;
`

// rootFields lists the field names of Query and Mutation as role sees them, or "null" for a missing type.
func (d *testDB) rootFields(role, typeName string) string {
	d.t.Helper()
	body := d.as(role, nil, `{ __type(name: "`+typeName+`") { fields { name } } }`, "")
	var resp struct {
		Data struct {
			Type *struct{ Fields []struct{ Name string } } `json:"__type"`
		}
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		d.t.Fatalf("%s: %s", typeName, body)
	}
	if resp.Data.Type == nil {
		return "null"
	}
	var names []string
	for _, f := range resp.Data.Type.Fields {
		names = append(names, f.Name)
	}
	return strings.Join(names, ", ")
}

func TestPermissionsTableLevel(t *testing.T) {
	for _, tc := range []struct {
		revoke, query, mutation string
	}{
		{"", "accountByPk, accountCollection, node", "deleteFromAccountCollection, insertIntoAccountCollection, updateAccountCollection"},
		{"select", "node", "null"},
		{"insert", "accountByPk, accountCollection, node", "deleteFromAccountCollection, updateAccountCollection"},
		{"update", "accountByPk, accountCollection, node", "deleteFromAccountCollection, insertIntoAccountCollection"},
		{"delete", "accountByPk, accountCollection, node", "insertIntoAccountCollection, updateAccountCollection"},
	} {
		t.Run("revoke "+tc.revoke, func(t *testing.T) {
			d := newTestDB(t, privilegeFixture)
			if tc.revoke != "" {
				d.exec("revoke " + tc.revoke + " on account from api")
			}
			if got := d.rootFields("api", "Query"); got != tc.query {
				t.Errorf("Query fields: %s, want %s", got, tc.query)
			}
			if got := d.rootFields("api", "Mutation"); got != tc.mutation {
				t.Errorf("Mutation fields: %s, want %s", got, tc.mutation)
			}
			for _, typ := range []string{"InsertInput", "InsertResponse", "UpdateInput", "UpdateResponse", "DeleteResponse"} {
				var want string
				switch {
				case tc.revoke == "select":
					want = "null"
				case strings.HasPrefix(typ, "Insert") && tc.revoke == "insert",
					strings.HasPrefix(typ, "Update") && tc.revoke == "update",
					strings.HasPrefix(typ, "Delete") && tc.revoke == "delete":
					want = "null"
				}
				got := d.as("api", nil, `{ __type(name: "Account`+typ+`") { name } }`, "")
				if want == "null" && got != `{"data": {"__type": null}}` || want == "" && got != `{"data": {"__type": {"name": "Account`+typ+`"}}}` {
					t.Errorf("Account%s: %s", typ, got)
				}
			}
		})
	}
}

func TestPermissionsSchemaUsage(t *testing.T) {
	d := newTestDB(t, `
		do $$ begin create role api; exception when duplicate_object then null; end $$; grant api to service_role;
		create schema app;
		create table app.thing(id int primary key);
		insert into app.thing values (1);
		create function app.thing_count() returns int language sql stable as $$ select count(*)::int from app.thing $$;
		grant select on app.thing to api;
	`)
	run := func(query string) string {
		return string(d.engine.ExecuteAs(context.Background(), d.conn, Session{Role: "api", Claims: map[string]any{"role": "api"}, SearchPath: []string{"public", "app"}}, Request{Query: query}))
	}
	if got := run(`{ thingCollection { edges { node { id } } } }`); got != `{"data": null, "errors": [{"message": "Unknown field \"thingCollection\" on type Query"}]}` {
		t.Errorf("without USAGE: %s", got)
	}
	if got := run(`{ thing_count }`); got != `{"data": null, "errors": [{"message": "Unknown field \"thing_count\" on type Query"}]}` {
		t.Errorf("function without USAGE: %s", got)
	}
	d.exec(`grant usage on schema app to api`)
	if got := run(`{ thing_count thingCollection { edges { node { id } } } }`); got != `{"data": {"thing_count": 1, "thingCollection": {"edges": [{"node": {"id": 1}}]}}}` {
		t.Errorf("with USAGE: %s", got)
	}
	// A schema off the search path stays invisible whatever the grants.
	if got := d.as("api", nil, `{ thing_count }`, ""); got != `{"data": null, "errors": [{"message": "Unknown field \"thing_count\" on type Query"}]}` {
		t.Errorf("off the search path: %s", got)
	}
}

func TestPermissionsColumnLevel(t *testing.T) {
	d := newTestDB(t, privilegeFixture)
	d.exec(`revoke select, insert, update on account from api;
		grant select (id, email, parent_id) on account to api;
		grant insert (encrypted_password, email) on account to api;
		grant update (email) on account to api`)
	for query, want := range map[string]string{
		`{ accountCollection { edges { node { encryptedPassword } } } }`:                           `Unknown field 'encryptedPassword' on type 'Account'`,
		`{ accountByPk(id: 1) { encryptedPassword } }`:                                             `Unknown field "encryptedPassword" on type Account`,
		`{ accountCollection(filter: {encryptedPassword: {eq: "x"}}) { edges { cursor } } }`:       `Input for type AccountFilter contains extra keys ["encryptedPassword"]`,
		`{ accountCollection(orderBy: [{encryptedPassword: AscNullsLast}]) { edges { cursor } } }`: `Input for type AccountOrderBy contains extra keys ["encryptedPassword"]`,
		`mutation { updateAccountCollection(set: {parentId: 1}) { affectedCount } }`:               `Input for type AccountUpdateInput contains extra keys ["parentId"]`,
		`mutation { insertIntoAccountCollection(objects: [{parentId: 1}]) { affectedCount } }`:     `Input for type AccountInsertInput contains extra keys ["parentId"]`,
	} {
		if got, exp := d.as("api", nil, query, ""), `{"data": null, "errors": [{"message": `+jsonString(want)+`}]}`; got != exp {
			t.Errorf("%s\n got: %s\nwant: %s", query, got, exp)
		}
	}
	// The granted columns work, and records of a mutation show only readable columns.
	if got := d.as("api", nil, `mutation { insertIntoAccountCollection(objects: [{encryptedPassword: "p", email: "b@x.com"}]) { affectedCount records { id email } } }`, ""); got != `{"data": {"insertIntoAccountCollection": {"records": [{"id": 2, "email": "b@x.com"}], "affectedCount": 1}}}` {
		t.Errorf("column insert: %s", got)
	}
	if got := d.as("api", nil, `mutation { updateAccountCollection(set: {email: "c@x.com"}, filter: {id: {eq: 2}}) { records { id email parentId } } }`, ""); got != `{"data": {"updateAccountCollection": {"records": [{"id": 2, "email": "c@x.com", "parentId": null}]}}}` {
		t.Errorf("column update: %s", got)
	}
}

func TestPermissionsEnumUsage(t *testing.T) {
	d := newTestDB(t, `
		comment on schema public is '@graphql({"inflect_names": true})';
		create type mood as enum ('happy', 'sad');
		create table diary(id int primary key, mood mood);
		insert into diary values (1, 'happy');
		do $$ begin create role api; exception when duplicate_object then null; end $$; grant usage on schema public to api; grant select on diary to api; grant api to service_role;
	`)
	d.expect(`{ diaryCollection(filter: {mood: {eq: happy}}) { edges { node { mood } } } }`,
		`{"data": {"diaryCollection": {"edges": [{"node": {"mood": "happy"}}]}}}`)
	d.exec(`revoke usage on type mood from public`)
	// Without USAGE on the type, the enum is gone and the column is Opaque (still readable, compared by text).
	if got := d.as("api", nil, `{ diaryCollection(filter: {mood: {eq: "happy"}}) { edges { node { mood } } } }`, ""); got != `{"data": {"diaryCollection": {"edges": [{"node": {"mood": "happy"}}]}}}` {
		t.Errorf("opaque enum: %s", got)
	}
	if got := d.as("api", nil, `{ diaryCollection(filter: {mood: {in: ["happy"]}}) { edges { cursor } } }`, ""); got != `{"data": null, "errors": [{"message": "Input for type OpaqueFilter contains extra keys [\"in\"]"}]}` {
		t.Errorf("opaque filter has no in: %s", got)
	}
}

func TestPermissionsExecuteAndComputed(t *testing.T) {
	d := newTestDB(t, privilegeFixture+`
		create function account_label(account) returns text stable language sql as $$ select 'acct ' || $1.id $$;
		create function account_count() returns int stable language sql as $$ select count(*)::int from account $$;
		create function make_account(email text) returns account volatile language sql as $$ insert into account(encrypted_password, email) values ('x', email) returning * $$;
	`)
	d.expect(`{ accountByPk(id: 1) { accountLabel } }`, `{"data": {"accountByPk": {"accountLabel": "acct 1"}}}`)
	if got := d.as("api", nil, `{ accountCount accountByPk(id: 1) { accountLabel } }`, ""); got != `{"data": {"accountByPk": {"accountLabel": "acct 1"}, "accountCount": 1}}` {
		t.Errorf("as api: %s", got)
	}
	if got := d.as("api", nil, `mutation { makeAccount(email: "m@x.com") { email accountLabel } }`, ""); got != `{"data": {"makeAccount": {"email": "m@x.com", "accountLabel": "acct 2"}}}` {
		t.Errorf("volatile function as api: %s", got)
	}
	d.exec(`revoke execute on function account_count(), account_label(account), make_account(text) from public`)
	for query, want := range map[string]string{
		`{ accountCount }`:                                  `Unknown field "accountCount" on type Query`,
		`{ accountByPk(id: 1) { accountLabel } }`:           `Unknown field "accountLabel" on type Account`,
		`mutation { makeAccount(email: "m@x.com") { id } }`: `Unknown field "makeAccount" on type Mutation`,
	} {
		if got := d.as("api", nil, query, ""); got != `{"data": null, "errors": [{"message": `+jsonString(want)+`}]}` {
			t.Errorf("%s: %s", query, got)
		}
	}
	// Functions returning a table the role cannot select are hidden as well.
	d.exec(`grant execute on function make_account(text) to api; revoke select on account from api`)
	if got := d.as("api", nil, `mutation { makeAccount(email: "m@x.com") { id } }`, ""); got != `{"data": null, "errors": [{"message": "Unknown type Mutation"}]}` {
		t.Errorf("function returning unreadable table: %s", got)
	}
	var n int
	if err := d.conn.QueryRow(context.Background(), "select count(*) from account").Scan(&n); err != nil || n != 2 {
		t.Errorf("accounts: %d %v", n, err)
	}
}
