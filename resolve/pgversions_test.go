package resolve

import (
	"strings"
	"testing"

	"github.com/pgreflect/pgreflect/pgtest"
)

// What newer PostgreSQL versions add to the catalog, each tested on the version that has it (`make test PG=18`;
// .ci/run runs this package on every supported version).

// PostgreSQL 18 records NOT NULL as constraints, and one added NOT VALID sets attnotnull while old rows still
// hold NULL: the field stays nullable until the constraint is validated, or reading those rows would break the
// response with a null in a non-null field.
func TestNotValidNotNullLeavesTheFieldNullable(t *testing.T) {
	pgtest.SkipBelow(t, 18, "NOT NULL ... NOT VALID came with PostgreSQL 18")
	d := newTestDB(t, `
		comment on schema public is '@graphql({"inflect_names": true, "introspection": true})';
		create table item(id int primary key, label text);
		insert into item values (1, 'one'), (2, null);
		alter table item add constraint item_label_not_null not null label not valid;
		grant all on item to service_role;
	`)
	if got, want := d.fieldTypes("Item"), "id: Int!, label: String, nodeId: ID!"; got != want {
		t.Errorf("Item fields = %s, want %s", got, want)
	}
	d.expect(`{ itemCollection(orderBy: [{id: AscNullsLast}]) { edges { node { id label } } } }`,
		`{"data": {"itemCollection": {"edges": [{"node": {"id": 1, "label": "one"}}, {"node": {"id": 2, "label": null}}]}}}`)

	// Once validated, the constraint holds for every row and the field is non-null, as for NOT NULL.
	d.exec(`update item set label = 'two' where id = 2; alter table item validate constraint item_label_not_null`)
	if got, want := d.fieldTypes("Item"), "id: Int!, label: String!, nodeId: ID!"; got != want {
		t.Errorf("after validate, Item fields = %s, want %s", got, want)
	}
}

// PostgreSQL 18's virtual generated columns are computed when read: readable, filterable and orderable fields,
// left out of the insert and update inputs like stored generated columns.
func TestVirtualGeneratedColumnsAreReadOnlyFields(t *testing.T) {
	pgtest.SkipBelow(t, 18, "virtual generated columns came with PostgreSQL 18")
	d := newTestDB(t, `
		comment on schema public is '@graphql({"inflect_names": true, "introspection": true})';
		create table price(
			id int primary key,
			net int not null,
			gross int generated always as (net * 2) virtual,
			doubled int generated always as (net * 2) stored
		);
		insert into price(id, net) values (1, 10), (2, 5);
		grant all on price to service_role;
	`)
	if got, want := d.fieldTypes("Price"), "doubled: Int, gross: Int, id: Int!, net: Int!, nodeId: ID!"; got != want {
		t.Errorf("Price fields = %s, want %s", got, want)
	}
	for _, input := range []string{"PriceInsertInput", "PriceUpdateInput"} {
		d.expect(`{ __type(name: "`+input+`") { inputFields { name } } }`,
			`{"data": {"__type": {"inputFields": [{"name": "id"}, {"name": "net"}]}}}`)
	}
	d.expect(`{ priceCollection(filter: {gross: {gt: 10}}, orderBy: [{gross: DescNullsLast}]) { edges { node { id gross doubled } } } }`,
		`{"data": {"priceCollection": {"edges": [{"node": {"id": 1, "gross": 20, "doubled": 20}}]}}}`)
	d.expect(`mutation { insertIntoPriceCollection(objects: [{id: 3, net: 7}]) { records { id gross } } }`,
		`{"data": {"insertIntoPriceCollection": {"records": [{"id": 3, "gross": 14}]}}}`)
	d.expect(`mutation { updatePriceCollection(set: {net: 8}, filter: {id: {eq: 3}}) { records { gross doubled } } }`,
		`{"data": {"updatePriceCollection": {"records": [{"gross": 16, "doubled": 16}]}}}`)
	body := d.query(`mutation { insertIntoPriceCollection(objects: [{id: 4, net: 1, gross: 2}]) { affectedCount } }`)
	if !strings.Contains(body, `"errors"`) || !strings.Contains(body, "gross") {
		t.Errorf("an insert that sets the virtual column was not refused: %s", body)
	}
}

// PostgreSQL 18's WITHOUT OVERLAPS keys are exclusion constraints: a primary key (id, valid WITHOUT OVERLAPS)
// still identifies a row by equality (nodeId, ByPk), but ON CONFLICT DO UPDATE refuses it, so upsert does not
// offer it; and a foreign key with PERIOD matches rows whose ranges overlap, not equal ones, which no
// relationship field expresses, so it is left out.
func TestWithoutOverlapsKeys(t *testing.T) {
	pgtest.SkipBelow(t, 18, "WITHOUT OVERLAPS and PERIOD foreign keys came with PostgreSQL 18")
	d := newTestDB(t, `
		comment on schema public is '@graphql({"inflect_names": true, "introspection": true, "features": ["upsert"]})';
		create extension btree_gist;
		create table room(id int, valid daterange, name text not null, code text unique,
			primary key (id, valid without overlaps));
		create table booking(id int primary key, room_id int not null, valid daterange not null,
			foreign key (room_id, period valid) references room (id, period valid));
		insert into room values (1, '[2025-01-01,2025-07-01)', 'old', 'r1'), (1, '[2025-07-01,2026-01-01)', 'new', 'r2');
		insert into booking values (10, 1, '[2025-02-01,2025-02-03)');
		grant all on room, booking to service_role;
	`)
	body := d.query(`{ roomCollection(orderBy: [{name: AscNullsLast}]) { edges { node { nodeId name } } } }`)
	var nodeID string
	if i := strings.Index(body, `"nodeId": "`); i >= 0 {
		nodeID = strings.SplitN(body[i+len(`"nodeId": "`):], `"`, 2)[0]
	}
	if nodeID == "" {
		t.Fatalf("rooms without nodeId: %s", body)
	}
	d.expect(`{ node(nodeId: "`+nodeID+`") { ... on Room { name } } }`, `{"data": {"node": {"name": "new"}}}`)

	// ON CONFLICT DO UPDATE refuses the WITHOUT OVERLAPS key: only the plain unique key is a conflict target.
	d.expect(`{ __type(name: "RoomConstraint") { enumValues { name } } }`,
		`{"data": {"__type": {"enumValues": [{"name": "room_code_key"}]}}}`)
	for typ, want := range map[string]string{
		"Booking": "id: Int!, nodeId: ID!, roomId: Int!, valid: Opaque!",
		"Room":    "code: String, id: Int!, name: String!, nodeId: ID!, valid: Opaque!",
	} {
		if got := d.fieldTypes(typ); got != want {
			t.Errorf("%s fields = %s, want %s (no relationship from the PERIOD foreign key)", typ, got, want)
		}
	}
}

// A foreign key that existing rows may break (added NOT VALID and not validated yet, on every version; NOT
// ENFORCED on PostgreSQL 18) gives a nullable to-one field even on a NOT NULL column: a row whose reference
// finds nothing reads as null instead of failing the response.
func TestUncheckedForeignKeysGiveNullableToOneFields(t *testing.T) {
	for _, key := range []string{"not valid", "not enforced"} {
		t.Run(key, func(t *testing.T) {
			if key == "not enforced" {
				pgtest.SkipBelow(t, 18, "NOT ENFORCED foreign keys came with PostgreSQL 18")
			}
			add := `alter table post add constraint post_author_id_fkey foreign key (author_id) references author(id) ` + key
			d := newTestDB(t, `
				comment on schema public is '@graphql({"inflect_names": true, "introspection": true})';
				create table author(id int primary key, name text not null);
				create table post(id int primary key, author_id int not null);
				insert into author values (1, 'ann');
				insert into post values (1, 1), (2, 99);
				`+add+`;
				grant all on author, post to service_role;
			`)
			if got, want := d.fieldTypes("Post"), "author: Author, authorId: Int!, id: Int!, nodeId: ID!"; got != want {
				t.Errorf("Post fields = %s, want %s", got, want)
			}
			d.expect(`{ postCollection(orderBy: [{id: AscNullsLast}]) { edges { node { id author { name } } } } }`,
				`{"data": {"postCollection": {"edges": [{"node": {"id": 1, "author": {"name": "ann"}}}, {"node": {"id": 2, "author": null}}]}}}`)
			if key == "not valid" {
				// Validated, the key holds for every row, and the field is non-null as for any foreign key.
				d.exec(`delete from post where id = 2; alter table post validate constraint post_author_id_fkey`)
				if got, want := d.fieldTypes("Post"), "author: Author!, authorId: Int!, id: Int!, nodeId: ID!"; got != want {
					t.Errorf("after validate, Post fields = %s, want %s", got, want)
				}
			}
		})
	}
}
