package resolve

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
)

// Issue 13 item 4: concurrent updates of overlapping rows deadlocked when their scans met the rows in different
// orders. Here half the clients select rows by an id range (an index scan, ascending ids) and half by a group
// (a sequential scan, and the rows are stored in descending id order), so without one lock order every pair of
// overlapping statements locks their shared rows in opposite orders.
func TestOverlappingUpdatesDoNotDeadlock(t *testing.T) {
	d := newTestDB(t, `
		comment on schema public is '@graphql({"inflect_names": true})';
		create table slot(id int primary key, grp int not null, owner text, version int not null default 0);
		insert into slot(id, grp) select i, i % 40 from generate_series(2000, 1, -1) i;
		create function bump_version() returns trigger language plpgsql as $$ begin new.version = old.version + 1; return new; end $$;
		create trigger slot_version before update on slot for each row execute function bump_version();
		analyze slot;
		grant all on all tables in schema public to service_role;
	`)
	const clients, rounds = 8, 50
	d.concurrently(clients, func(c int, run func(string) string) error {
		for r := 0; r < rounds; r++ {
			var query string
			want := 50
			if c%2 == 0 {
				lo := 1 + (c*7+r*13)%1950
				query = fmt.Sprintf(`mutation { updateSlotCollection(set: {owner: "c%d-r%d"}, filter: {id: {gte: %d, lt: %d}}, atMost: 50) { affectedCount } }`, c, r, lo, lo+50)
			} else {
				query = fmt.Sprintf(`mutation { updateSlotCollection(set: {owner: "c%d-r%d"}, filter: {grp: {eq: %d}}, atMost: 50) { affectedCount } }`, c, r, (c+r)%40)
			}
			if got := run(query); got != `{"data": {"updateSlotCollection": {"affectedCount": `+strconv.Itoa(want)+`}}}` {
				return fmt.Errorf("client %d round %d: %s", c, r, got)
			}
		}
		return nil
	})
	// Every statement applied to all its rows exactly once.
	if got := d.scalar("select sum(version) from slot"); got != strconv.Itoa(clients*rounds*50) {
		t.Errorf("sum of versions %s, want %d", got, clients*rounds*50)
	}
}

// The same for deletes: overlapping deletes from an id range and from a group stored in the opposite order.
// Every row is deleted by exactly one statement, and none fails.
func TestOverlappingDeletesDoNotDeadlock(t *testing.T) {
	d := newTestDB(t, `
		comment on schema public is '@graphql({"inflect_names": true})';
		create table slot(id int primary key, grp int not null);
		insert into slot(id, grp) select i, i % 40 from generate_series(4000, 1, -1) i;
		analyze slot;
		grant all on all tables in schema public to service_role;
	`)
	const clients, rounds = 8, 50
	var mu sync.Mutex
	deleted := 0
	d.concurrently(clients, func(c int, run func(string) string) error {
		for r := 0; r < rounds; r++ {
			filter := fmt.Sprintf(`{grp: {eq: %d}}`, (c*5+r)%40)
			if c%2 == 0 {
				lo := 1 + (c*500+r*40)%3950
				filter = fmt.Sprintf(`{id: {gte: %d, lt: %d}}`, lo, lo+50)
			}
			got := run(`mutation { deleteFromSlotCollection(filter: ` + filter + `, atMost: 200) { affectedCount } }`)
			var n int
			if _, err := fmt.Sscanf(got, `{"data": {"deleteFromSlotCollection": {"affectedCount": %d}}}`, &n); err != nil {
				return fmt.Errorf("client %d round %d: %s", c, r, got)
			}
			mu.Lock()
			deleted += n
			mu.Unlock()
		}
		return nil
	})
	if left := d.scalar("select count(*) from slot"); left != strconv.Itoa(4000-deleted) {
		t.Errorf("%s rows left after %d were reported deleted from 4000", left, deleted)
	}
}

// Locking by key must not widen or break a write: through a view whose primary_key_columns directive is not
// unique an update still touches only the rows its filter selects, a role that may update rows without
// reading their key still can, and so can a role that may delete but not update.
func TestOrderedUpdateKeepsItsRows(t *testing.T) {
	d := newTestDB(t, `
		comment on schema public is '@graphql({"inflect_names": true})';
		create table item(id int primary key, grp int not null, note text);
		insert into item select i, i % 2, null from generate_series(1, 6) i;
		create view item_by_group as select id, grp, note from item;
		comment on view item_by_group is '@graphql({"primary_key_columns": ["grp"]})';
		grant all on item, item_by_group to service_role;
		revoke all on item from authenticated, anon;
		grant select (grp, note), update (note) on item to authenticated;
		grant select, delete on item to anon;
	`)
	d.expect(`mutation { updateItemByGroupCollection(set: {note: "v"}, filter: {id: {eq: 3}}, atMost: 5) { affectedCount } }`,
		`{"data": {"updateItemByGroupCollection": {"affectedCount": 1}}}`)
	if got := d.scalar("select string_agg(id::text, ',' order by id) from item where note = 'v'"); got != "3" {
		t.Errorf("the update through the view wrote rows %s, want 3", got)
	}
	got := d.as("authenticated", nil, `mutation { updateItemCollection(set: {note: "a"}, filter: {grp: {eq: 0}}, atMost: 5) { affectedCount } }`, "")
	if want := `{"data": {"updateItemCollection": {"affectedCount": 3}}}`; got != want {
		t.Errorf("update without reading the key:\n got: %s\nwant: %s", got, want)
	}
	// Locking FOR UPDATE needs UPDATE privilege, which a role that may only delete lacks.
	got = d.as("anon", nil, `mutation { deleteFromItemCollection(filter: {grp: {eq: 1}}, atMost: 5) { affectedCount } }`, "")
	if want := `{"data": {"deleteFromItemCollection": {"affectedCount": 3}}}`; got != want {
		t.Errorf("delete without UPDATE privilege:\n got: %s\nwant: %s", got, want)
	}
}
