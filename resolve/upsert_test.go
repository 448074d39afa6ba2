package resolve

import (
	"strings"
	"testing"
)

const (
	aliceID = "11111111-1111-1111-1111-111111111111"
	bobID   = "22222222-2222-2222-2222-222222222222"
)

var (
	alice = map[string]any{"role": "authenticated", "sub": aliceID}
	bob   = map[string]any{"role": "authenticated", "sub": bobID}
)

// upsertFixture: profiles anyone may read, that a user inserts and updates only as their own.
const upsertFixture = `
comment on schema public is '@graphql({"inflect_names": true, "features": ["upsert"]})';
create table profile(
  id serial primary key,
  user_id uuid not null default auth.uid(),
  handle text not null unique,
  bio text,
  active bool not null default true,
  constraint profile_bio_key unique (bio) deferrable
);
alter table profile enable row level security;
create policy read on profile for select using (true);
create policy own_insert on profile for insert to authenticated with check (user_id = auth.uid());
create policy own_update on profile for update to authenticated using (user_id = auth.uid()) with check (user_id = auth.uid());
grant select, insert, update on profile to anon, authenticated, service_role;
grant usage on sequence profile_id_seq to anon, authenticated, service_role;
insert into profile(user_id, handle, bio) values
  ('11111111-1111-1111-1111-111111111111', 'alice', 'a'),
  ('22222222-2222-2222-2222-222222222222', 'bob', 'b');
`

func TestUpsert(t *testing.T) {
	d := newTestDB(t, upsertFixture)
	rows := func() string {
		return d.scalar("select string_agg(handle || ':' || coalesce(bio, '-') || ':' || active || ':' || left(user_id::text, 1), ',' order by id) from profile")
	}
	upsert := func(claims map[string]any, objects, onConflict string) string {
		role, _ := claims["role"].(string)
		return d.as(role, claims, `mutation { insertIntoProfileCollection(objects: `+objects+`, onConflict: `+onConflict+`) { affectedCount records { handle bio } } }`, "")
	}
	for _, tc := range []struct {
		name        string
		claims      map[string]any
		objects     string
		onConflict  string
		want, after string
	}{
		{"alice updates her own profile and inserts a new one", alice,
			`[{handle: "alice", bio: "a2", active: false}, {handle: "alice2", bio: "x"}]`,
			`{constraint: profile_handle_key, updateColumns: [bio, bio]}`,
			`{"data": {"insertIntoProfileCollection": {"records": [{"bio": "a2", "handle": "alice"}, {"bio": "x", "handle": "alice2"}], "affectedCount": 2}}}`,
			"alice:a2:true:1,bob:b:true:2,alice2:x:true:1"},
		{"the update path under another user's row fails whole", alice,
			`[{handle: "alice3", bio: "new"}, {handle: "bob", bio: "hacked"}]`,
			`{constraint: profile_handle_key, updateColumns: [bio]}`,
			`{"data": null, "errors": [{"message": "new row violates row-level security policy (USING expression) for table \"profile\""}]}`,
			"alice:a2:true:1,bob:b:true:2,alice2:x:true:1"},
		{"bob updates his own", bob,
			`[{handle: "bob", bio: "b2"}]`,
			`{constraint: profile_handle_key, updateColumns: [bio]}`,
			`{"data": {"insertIntoProfileCollection": {"records": [{"bio": "b2", "handle": "bob"}], "affectedCount": 1}}}`,
			"alice:a2:true:1,bob:b2:true:2,alice2:x:true:1"},
		{"the filter leaves rows it does not match, and they are not affected", nil,
			`[{handle: "bob", bio: "b3", userId: "22222222-2222-2222-2222-222222222222"}]`,
			`{constraint: profile_handle_key, updateColumns: [bio], filter: {bio: {eq: "nope"}}}`,
			`{"data": {"insertIntoProfileCollection": {"records": [], "affectedCount": 0}}}`,
			"alice:a2:true:1,bob:b2:true:2,alice2:x:true:1"},
		{"service_role bypasses the policies", nil,
			`[{handle: "bob", bio: "b4", userId: "22222222-2222-2222-2222-222222222222"}, {handle: "carol", userId: "33333333-3333-3333-3333-333333333333"}]`,
			`{constraint: profile_handle_key, updateColumns: [bio], filter: {bio: {eq: "b2"}}}`,
			`{"data": {"insertIntoProfileCollection": {"records": [{"bio": "b4", "handle": "bob"}, {"bio": null, "handle": "carol"}], "affectedCount": 2}}}`,
			"alice:a2:true:1,bob:b4:true:2,alice2:x:true:1,carol:-:true:3"},
		{"no update columns leaves a conflicting row as it is", nil,
			`[{handle: "carol", bio: "ignored", userId: "33333333-3333-3333-3333-333333333333"}]`,
			`{constraint: profile_handle_key, updateColumns: []}`,
			`{"data": {"insertIntoProfileCollection": {"records": [], "affectedCount": 0}}}`,
			"alice:a2:true:1,bob:b4:true:2,alice2:x:true:1,carol:-:true:3"},
		{"anon has no insert policy", map[string]any{"role": "anon"},
			`[{handle: "alice", bio: "anon"}]`,
			`{constraint: profile_handle_key, updateColumns: [bio]}`,
			`{"data": null, "errors": [{"message": "new row violates row-level security policy for table \"profile\""}]}`,
			"alice:a2:true:1,bob:b4:true:2,alice2:x:true:1,carol:-:true:3"},
		{"an unknown constraint", nil,
			`[{handle: "alice"}]`, `{constraint: nope, updateColumns: [bio]}`,
			`{"data": null, "errors": [{"message": "Invalid input for ProfileConstraint type"}]}`,
			"alice:a2:true:1,bob:b4:true:2,alice2:x:true:1,carol:-:true:3"},
		{"a column that cannot be updated", nil,
			`[{handle: "alice"}]`, `{constraint: profile_handle_key, updateColumns: [nodeId]}`,
			`{"data": null, "errors": [{"message": "Invalid input for ProfileUpdateColumn type"}]}`,
			"alice:a2:true:1,bob:b4:true:2,alice2:x:true:1,carol:-:true:3"},
		{"an object conflicting with another of the same request", nil,
			`[{handle: "dave", userId: "44444444-4444-4444-4444-444444444444"}, {handle: "dave", userId: "44444444-4444-4444-4444-444444444444"}]`,
			`{constraint: profile_handle_key, updateColumns: [bio]}`,
			`{"data": null, "errors": [{"message": "ON CONFLICT DO UPDATE command cannot affect row a second time"}]}`,
			"alice:a2:true:1,bob:b4:true:2,alice2:x:true:1,carol:-:true:3"},
		{"a deferrable unique key is no conflict target (ON CONFLICT refuses it)", nil,
			`[{handle: "alice", bio: "a2"}]`,
			`{constraint: profile_bio_key, updateColumns: [bio]}`,
			`{"data": null, "errors": [{"message": "Invalid input for ProfileConstraint type"}]}`,
			"alice:a2:true:1,bob:b4:true:2,alice2:x:true:1,carol:-:true:3"},
		{"a serial primary key is no conflict target (the insert input has no id)", nil,
			`[{handle: "alice", bio: "by id"}]`,
			`{constraint: profile_pkey, updateColumns: [bio]}`,
			`{"data": null, "errors": [{"message": "Invalid input for ProfileConstraint type"}]}`,
			"alice:a2:true:1,bob:b4:true:2,alice2:x:true:1,carol:-:true:3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			claims := tc.claims
			if claims == nil {
				claims = map[string]any{"role": "service_role"}
			}
			if got := upsert(claims, tc.objects, tc.onConflict); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if got := rows(); got != tc.after {
				t.Errorf("rows %s, want %s", got, tc.after)
			}
		})
	}
	// Variables carry the enums as strings, as a client written for pg_graphql's pull request #622 sends them.
	got := d.as("service_role", nil, `mutation M($objs: [ProfileInsertInput!]!, $on: ProfileOnConflict) {
		insertIntoProfileCollection(objects: $objs, onConflict: $on) { affectedCount } }`,
		`{"objs": [{"handle": "carol", "bio": "c", "userId": "33333333-3333-3333-3333-333333333333"}], "on": {"constraint": "profile_handle_key", "updateColumns": ["bio"]}}`)
	if got != `{"data": {"insertIntoProfileCollection": {"affectedCount": 1}}}` {
		t.Errorf("with variables: %s", got)
	}
}

func TestUpsertOnlyWhereTurnedOn(t *testing.T) {
	d := newTestDB(t, strings.Replace(upsertFixture, `, "features": ["upsert"]`, "", 1)+`
		create table other(id int primary key, name text);
		grant all on other to service_role;
		comment on table profile is '@graphql({"features": ["upsert"]})';`)
	got := d.query(`mutation { insertIntoOtherCollection(objects: [{id: 1}], onConflict: {constraint: other_pkey, updateColumns: [name]}) { affectedCount } }`)
	if got != `{"data": null, "errors": [{"message": "Input contains extra keys [\"onConflict\"]"}]}` {
		t.Errorf("onConflict on a table without the feature: %s", got)
	}
	got = d.query(`mutation { insertIntoOtherCollection(objects: [{id: 1}]) { affectedCount } }`)
	if got != `{"data": {"insertIntoOtherCollection": {"affectedCount": 1}}}` {
		t.Errorf("plain insert: %s", got)
	}
	got = d.query(`mutation { insertIntoProfileCollection(objects: [{handle: "alice", bio: "t", userId: "` + aliceID + `"}], onConflict: {constraint: profile_handle_key, updateColumns: [bio]}) { affectedCount } }`)
	if got != `{"data": {"insertIntoProfileCollection": {"affectedCount": 1}}}` {
		t.Errorf("onConflict on the table that turns it on: %s", got)
	}
	if got := d.scalar("select bio from profile where handle = 'alice'"); got != "t" {
		t.Errorf("alice's bio after the upsert: %s", got)
	}
	// A composite primary key the input fills is a conflict target.
	d.exec(`create table pair(a int, b int, n int, primary key (a, b)); grant all on pair to service_role;
		comment on table pair is '@graphql({"features": ["upsert"]})'; insert into pair values (1, 2, 0);`)
	got = d.query(`mutation { insertIntoPairCollection(objects: [{a: 1, b: 2, n: 5}, {a: 2, b: 1, n: 1}], onConflict: {constraint: pair_pkey, updateColumns: [n]}) { affectedCount records { a b n } } }`)
	if got != `{"data": {"insertIntoPairCollection": {"records": [{"a": 1, "b": 2, "n": 5}, {"a": 2, "b": 1, "n": 1}], "affectedCount": 2}}}` {
		t.Errorf("composite key: %s", got)
	}
}

// TestWriteExtensionsOnPartitionedTable: a partitioned table shown whole takes upserts and nested inserts,
// which Postgres routes to the partitions.
func TestWriteExtensionsOnPartitionedTable(t *testing.T) {
	d := newTestDB(t, `
		comment on schema public is '@graphql({"inflect_names": true, "features": ["upsert", "nestedInsert"]})';
		create table customer(id serial primary key, name text not null);
		create table payment(id int, month int, customer_id int not null references customer(id), amount int, primary key (id, month)) partition by list (month);
		create table payment_1 partition of payment for values in (1);
		create table payment_2 partition of payment for values in (2);
		comment on table payment is '@graphql({"partitions": "hidden"})';
		grant all on all tables in schema public to service_role; grant usage on sequence customer_id_seq to service_role;`)
	got := d.query(`mutation { insertIntoCustomerCollection(objects: [{name: "c", paymentCollection: [{id: 1, month: 1, amount: 5}, {id: 1, month: 2, amount: 6}]}]) { affectedCount } }`)
	if got != `{"data": {"insertIntoCustomerCollection": {"affectedCount": 1}}}` {
		t.Errorf("nested: %s", got)
	}
	got = d.query(`mutation { insertIntoPaymentCollection(objects: [{id: 1, month: 2, amount: 7, customerId: 1}], onConflict: {constraint: payment_pkey, updateColumns: [amount]}) { affectedCount records { amount } } }`)
	if got != `{"data": {"insertIntoPaymentCollection": {"records": [{"amount": 7}], "affectedCount": 1}}}` {
		t.Errorf("upsert: %s", got)
	}
	if got := d.scalar("select string_agg(tableoid::regclass || ':' || amount, ',' order by month) from payment"); got != "payment_1:5,payment_2:7" {
		t.Errorf("rows: %s", got)
	}
}
