package resolve

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// nodeID encodes a node id as pg_graphql does: base64 of the jsonb text of [schema, table, key...].
func nodeID(parts ...any) string {
	texts := make([]string, len(parts))
	for i, p := range parts {
		raw, _ := json.Marshal(p)
		texts[i] = string(raw)
	}
	return base64.StdEncoding.EncodeToString([]byte("[" + strings.Join(texts, ", ") + "]"))
}

// Issue 11: a filter on nodeId with the id of another collection answers "nodeId belongs to a different
// collection", whatever that collection is: another exposed table, one with a composite key, one the role does
// not see, one that does not exist. pg_graphql compares the id's schema and table with the filtered table's
// before anything else.
func TestNodeIDFilterOfAnotherCollection(t *testing.T) {
	d := newTestDB(t, blogFixture+`
create table pair(a int, b int, primary key (a, b));
create schema hidden;
create table hidden.secret(id int primary key);`)
	const want = `{"data": null, "errors": [{"message": "nodeId belongs to a different collection"}]}`
	for _, id := range []string{
		nodeID("public", "account", 2),
		nodeID("public", "pair", 1, 2),
		nodeID("hidden", "secret", 1),
		nodeID("public", "nope", 1),
		nodeID("public", "Blog", 1),
	} {
		for _, q := range []string{
			`{ blogCollection(filter: {nodeId: {eq: "%s"}}) { edges { cursor } } }`,
			`mutation { deleteFromBlogCollection(filter: {nodeId: {eq: "%s"}}) { affectedCount } }`,
			`mutation { updateBlogCollection(set: {name: "x"}, filter: {nodeId: {eq: "%s"}}) { affectedCount } }`,
		} {
			query := fmt.Sprintf(q, id)
			if got := d.query(query); got != want {
				t.Errorf("%s\n got: %s\nwant: %s", query, got, want)
			}
		}
	}
	// The id of the filtered table itself still selects its row.
	d.expect(fmt.Sprintf(`{ blogCollection(filter: {nodeId: {eq: "%s"}}) { edges { node { name } } } }`, nodeID("public", "blog", 2)),
		`{"data": {"blogCollection": {"edges": [{"node": {"name": "A: Blog 2"}}]}}}`)
}

// Issue 11: a computed field whose function is STRICT, SECURITY DEFINER, with its own search_path, and returns
// the row type of a view (with a primary key by comment directive) is a to-one field like any other.
func TestComputedFieldReturningAViewRow(t *testing.T) {
	d := newTestDB(t, blogFixture+`
comment on schema public is e'@graphql({"inflect_names": true, "introspection": true})';
create view account_card as select id, upper(email) as label from account where id < 3;
comment on view account_card is e'@graphql({"primary_key_columns": ["id"]})';
create function public._card(rec public.account) returns public.account_card
  language sql stable strict security definer set search_path = ''
  as $$ select c.* from public.account_card c where c.id = rec.id $$;
grant select on account_card to anon, authenticated, service_role;`)
	for _, role := range []string{"anon", "service_role"} {
		if got, want := d.as(role, nil, `{ accountCollection(first: 3) { edges { node { id card { id label nodeId __typename } } } } }`, ""),
			`{"data": {"accountCollection": {"edges": [{"node": {"id": 1, "card": {"id": 1, "label": "AARDVARK@X.COM", "nodeId": "`+nodeID("public", "account_card", 1)+`", "__typename": "AccountCard"}}}, {"node": {"id": 2, "card": {"id": 2, "label": "BAT@X.COM", "nodeId": "`+nodeID("public", "account_card", 2)+`", "__typename": "AccountCard"}}}, {"node": {"id": 3, "card": null}}]}}}`; got != want {
			t.Errorf("as %s\n got: %s\nwant: %s", role, got, want)
		}
	}
	d.expect(`mutation { updateAccountCollection(set: {encryptedPassword: "x"}, filter: {id: {eq: 2}}) { records { card { label } } } }`,
		`{"data": {"updateAccountCollection": {"records": [{"card": {"label": "BAT@X.COM"}}]}}}`)
	// The field is a nullable object of the view's type, as a to-one relationship is.
	if got := d.query(`{ __type(name: "Account") { fields { name type { kind name } } } }`); !strings.Contains(got, `{"name": "card", "type": {"kind": "OBJECT", "name": "AccountCard"}}`) {
		t.Errorf("Account's fields: %s", got)
	}
}

// Issue 11: a table whose every column has a name GraphQL cannot show still gets its type, with nodeId (as
// pg_graphql's omit_weird_names test shows).
func TestTableOfUnnameableColumns(t *testing.T) {
	d := newTestDB(t, `
comment on schema public is e'@graphql({"inflect_names": true, "introspection": true})';
create table xyz("! q" int primary key);
insert into xyz values (1);
grant all on xyz to anon, authenticated, service_role;`)
	d.expect(`{ __type(name: "Xyz") { fields { name } } }`,
		`{"data": {"__type": {"fields": [{"name": "nodeId"}]}}}`)
	d.expect(`{ xyzCollection { edges { node { nodeId } } } }`,
		`{"data": {"xyzCollection": {"edges": [{"node": {"nodeId": "`+nodeID("public", "xyz", 1)+`"}}]}}}`)
	// No input lists a column it cannot name.
	d.expect(`{ __type(name: "XyzInsertInput") { inputFields { name } } }`, `{"data": {"__type": null}}`)
	d.expect(`mutation { deleteFromXyzCollection(filter: {nodeId: {eq: "`+nodeID("public", "xyz", 1)+`"}}) { affectedCount } }`,
		`{"data": {"deleteFromXyzCollection": {"affectedCount": 1}}}`)
}

// Issue 11 and 18: last + before (and first + after) over an orderBy of several columns in mixed directions returns
// the page next to the cursor that pg_graphql v1.6.1 returns, in the requested order, and with exactPaging the
// exact neighbours. Every combination of directions is paged backward and forward from every row, at the root
// and nested under a relationship, against pgGraphQLAfter applied to the rows themselves (or their positions).
func TestLastBeforeWithMixedDirections(t *testing.T) {
	type item struct {
		id, grp, rank any // int or nil
		label         any // string or nil
	}
	items := []item{{1, 1, 2, "k"}, {2, 1, 1, "z"}, {3, 1, 2, nil}, {4, 2, 1, "k"}, {5, 2, 2, "z"},
		{6, 2, 1, "k"}, {7, nil, 2, nil}, {8, 3, 1, "a"}, {9, nil, 2, "a"}, {10, 1, 1, "z"}}
	byID := map[int]map[string]any{}
	var values []string
	for _, it := range items {
		byID[it.id.(int)] = map[string]any{"id": it.id, "grp": it.grp, "label": it.label, "rank": it.rank}
		values = append(values, fmt.Sprintf("(%d, 1, %s, %s, %d)", it.id, sqlLiteral(it.grp), sqlLiteral(it.label), it.rank))
	}
	d := newTestDB(t, `
comment on schema public is e'@graphql({"inflect_names": true})';
create table box(id int primary key);
insert into box values (1);
create table item(id int primary key, box_id int not null references box(id), grp int, label varchar(10), rank int not null);
insert into item values `+strings.Join(values, ", ")+`;
grant all on all tables in schema public to anon, authenticated, service_role;`)
	directions := []string{"AscNullsFirst", "AscNullsLast", "DescNullsFirst", "DescNullsLast"}
	type edge struct {
		Cursor string
		Node   struct{ ID int }
	}
	type pageInfo struct{ HasNextPage, HasPreviousPage bool }
	type connection struct {
		Edges    []edge
		PageInfo pageInfo
	}
	page := func(nested bool, args string) connection {
		t.Helper()
		var out struct {
			Data struct {
				ItemCollection connection
				BoxCollection  struct {
					Edges []struct {
						Node struct{ ItemCollection connection }
					}
				}
			}
			Errors []struct{ Message string }
		}
		const sel = `{ edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage } }`
		q := `{ itemCollection(` + args + `) ` + sel + ` }`
		if nested {
			q = `{ boxCollection { edges { node { itemCollection(` + args + `) ` + sel + ` } } } }`
		}
		body := d.query(q)
		if err := json.Unmarshal([]byte(body), &out); err != nil || len(out.Errors) > 0 {
			t.Fatalf("%s: %s", q, body)
		}
		if nested {
			return out.Data.BoxCollection.Edges[0].Node.ItemCollection
		}
		return out.Data.ItemCollection
	}
	ids := func(edges []edge) string {
		var s []string
		for _, e := range edges {
			s = append(s, fmt.Sprint(e.Node.ID))
		}
		return strings.Join(s, ",")
	}
	// Under the exactPaging extension the page is the exact neighbour of the cursor instead.
	for _, exact := range []bool{false, true} {
		if exact {
			d.exec(`comment on table item is '@graphql({"features": ["exactPaging"]})'`)
		}
		for _, g := range directions {
			for _, l := range directions {
				// Without id in orderBy the primary key breaks ties, as pg_graphql appends it; rank is NOT NULL.
				for _, order := range [][]orderTerm{
					{{"grp", g}, {"label", l}, {"id", "AscNullsLast"}},
					{{"grp", g}, {"label", l}, {"id", "DescNullsFirst"}, {"id", "AscNullsLast"}},
					{{"rank", g}, {"label", l}, {"id", "AscNullsLast"}},
					{{"label", g}, {"id", l}, {"grp", "AscNullsFirst"}, {"id", "AscNullsLast"}},
				} {
					var terms []string
					for _, o := range order[:len(order)-1] {
						terms = append(terms, fmt.Sprintf("{%s: %s}", o.column, o.direction))
					}
					orderBy := "orderBy: [" + strings.Join(terms, ", ") + "]"
					all := page(false, orderBy).Edges
					if len(all) != len(items) {
						t.Fatalf("%s: %d rows", orderBy, len(all))
					}
					// The rows pg_graphql puts on a page next to cursor row c, in the natural order.
					beyond := func(c int, backward bool) []edge {
						switch {
						case exact && backward:
							return all[:c]
						case exact:
							return all[c+1:]
						}
						var out []edge
						for _, e := range all {
							if pgGraphQLAfter(byID[e.Node.ID], byID[all[c].Node.ID], order, backward) {
								out = append(out, e)
							}
						}
						return out
					}
					for _, nested := range []bool{false, true} {
						for _, n := range []int{1, 4, 12} {
							if got, want := ids(page(nested, fmt.Sprintf(`%s, last: %d`, orderBy, n)).Edges), ids(all[max(0, len(all)-n):]); got != want {
								t.Errorf("%s, last %d (nested %v): %s, want %s", orderBy, n, nested, got, want)
							}
						}
						for i := range all {
							const n = 2
							// The cursor's row is on the far side of a page that is not empty: as in pg_graphql, there
							// is a page there.
							before := beyond(i, true)
							want := before[max(0, len(before)-n):]
							back := page(nested, fmt.Sprintf(`%s, last: %d, before: "%s"`, orderBy, n, all[i].Cursor))
							if got := ids(back.Edges); got != ids(want) || back.PageInfo != (pageInfo{len(want) > 0, len(before) > n}) {
								t.Errorf("%s, last %d before row %d (nested %v): %s %+v, want %s", orderBy, n, all[i].Node.ID, nested, got, back.PageInfo, ids(want))
							}
							after := beyond(i, false)
							want = after[:min(n, len(after))]
							fwd := page(nested, fmt.Sprintf(`%s, first: %d, after: "%s"`, orderBy, n, all[i].Cursor))
							if got := ids(fwd.Edges); got != ids(want) || fwd.PageInfo != (pageInfo{len(after) > n, len(want) > 0}) {
								t.Errorf("%s, first %d after row %d (nested %v): %s %+v, want %s", orderBy, n, all[i].Node.ID, nested, got, fwd.PageInfo, ids(want))
							}
						}
					}
				}
			}
		}
	}
}

// orderTerm is one element of an effective order: a column and a pg_graphql direction.
type orderTerm struct{ column, direction string }

// pgGraphQLAfter says whether row sorts strictly after the cursor row in the paging direction as pg_graphql
// v1.6.1's pagination clause decides it (backward paging reverses every direction, nulls placement included): a
// NULL equals a NULL, a non-NULL value is after a NULL one only where NULLs come first, and a NULL value is never
// after a non-NULL one.
func pgGraphQLAfter(row, cursor map[string]any, order []orderTerm, backward bool) bool {
	for _, o := range order {
		asc := strings.HasPrefix(o.direction, "Asc")
		nullsFirst := strings.HasSuffix(o.direction, "NullsFirst")
		if backward {
			asc, nullsFirst = !asc, !nullsFirst
		}
		r, c := row[o.column], cursor[o.column]
		switch {
		case r == nil && c == nil:
			continue
		case c == nil:
			return nullsFirst
		case r == nil:
			return false
		}
		var cmp int
		switch r := r.(type) {
		case int:
			cmp = r - c.(int)
		case string:
			cmp = strings.Compare(r, c.(string))
		}
		if cmp != 0 {
			return (cmp > 0) == asc
		}
	}
	return false
}

// sqlLiteral writes an int, a string without quotes in it, or nil as SQL.
func sqlLiteral(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return "'" + v + "'"
	default:
		return fmt.Sprint(v)
	}
}

// Issue 18: pg_graphql's own cursor test, "Last before w/ complex order" (and its "First after"), on its exact
// table: 20 rows, reversed = (20 - id) % 5, title cycling 'a', 'b', NULL, paged from the cursor [3, "a"] under
// [{reversed: AscNullsLast}, {title: AscNullsFirst}]. Row 12 is (3, NULL): it sorts just before the cursor, but
// pg_graphql v1.6.1 never counts a NULL as past a non-NULL cursor value, so the page skips it.
func TestCursorPageSkipsNullsAfterANonNullCursorValue(t *testing.T) {
	d := newTestDB(t, `
create table blog(id int primary key, reversed int, title text);
insert into blog(id, reversed, title)
select x.id, (20 - id) % 5, case id % 3 when 1 then 'a' when 2 then 'b' end from generate_series(1, 20) x(id);
grant select on blog to service_role;`)
	cursor := base64.StdEncoding.EncodeToString([]byte(`[3, "a"]`))
	const order = `orderBy: [{reversed: AscNullsLast}, {title: AscNullsFirst}]`
	d.expect(`{ blogCollection(last: 5, before: "`+cursor+`", `+order+`) { edges { node { id reversed title } } } }`,
		`{"data": {"blogCollection": {"edges": [{"node": {"id": 14, "title": "b", "reversed": 1}}, {"node": {"id": 3, "title": null, "reversed": 2}}, {"node": {"id": 18, "title": null, "reversed": 2}}, {"node": {"id": 13, "title": "a", "reversed": 2}}, {"node": {"id": 8, "title": "b", "reversed": 2}}]}}}`)
	// pg_graphql's "First after w/ complex order": NULL titles come first going forward, nothing is skipped.
	d.expect(`{ blogCollection(first: 5, after: "`+cursor+`", `+order+`) { edges { node { id } } } }`,
		`{"data": {"blogCollection": {"edges": [{"node": {"id": 2}}, {"node": {"id": 17}}, {"node": {"id": 6}}, {"node": {"id": 1}}, {"node": {"id": 16}}]}}}`)
	// after under the opposite order reaches the same rows as last + before: (3, NULL) is skipped there too.
	d.expect(`{ blogCollection(first: 5, after: "`+cursor+`", orderBy: [{reversed: DescNullsFirst}, {title: DescNullsLast}]) { edges { node { id } } } }`,
		`{"data": {"blogCollection": {"edges": [{"node": {"id": 8}}, {"node": {"id": 13}}, {"node": {"id": 3}}, {"node": {"id": 18}}, {"node": {"id": 14}}]}}}`)
}

// Issue 18: pg_graphql's issue_511 test, its exact setup. A computed field returns a row of a view that has no
// primary key (no primary_key_columns directive): pg_graphql requires a key only for what the root reaches, so
// the field is an object of the view's type, without nodeId, and null where the view has no row.
func TestComputedFieldReturningAKeylessViewRow(t *testing.T) {
	d := newTestDB(t, `
create table users(id uuid primary key, email character varying (255), phone text);
insert into public.users(id, email, phone) values
  ('dd5add8a-7dd2-4495-bc1a-a1dfe95ef23a', 'a@b.com', '987654321'),
  ('12e684cc-b7c2-492e-8554-9ab3e03fa37f', null, null),
  ('748a81bb-5f71-4dc8-88d9-efe9f03a14b8', null, '123456789');
create or replace view users_with_phone as select id, email, phone from public.users where phone is not null;
create table polls(id uuid primary key, user_id uuid references users(id));
insert into public.polls(id, user_id) values
  ('98813159-4814-42fa-911d-5cc900bd80b8', 'dd5add8a-7dd2-4495-bc1a-a1dfe95ef23a'),
  ('07dc0104-3811-4a5d-8887-4018c8116e5c', '12e684cc-b7c2-492e-8554-9ab3e03fa37f'),
  ('3bec2818-7bea-40ba-81fa-7d0ba061c3de', '748a81bb-5f71-4dc8-88d9-efe9f03a14b8');
create or replace function author (rec polls) returns users_with_phone stable strict language sql security definer
  set search_path = public as $$ select * from users_with_phone u where u.id = $1.user_id; $$;
grant select on users, users_with_phone, polls to anon, authenticated, service_role;`)
	d.expect(`{ pollsCollection { edges { node { author { id, email, phone } } } } }`,
		`{"data": {"pollsCollection": {"edges": [{"node": {"author": null}}, `+
			`{"node": {"author": {"id": "748a81bb-5f71-4dc8-88d9-efe9f03a14b8", "email": null, "phone": "123456789"}}}, `+
			`{"node": {"author": {"id": "dd5add8a-7dd2-4495-bc1a-a1dfe95ef23a", "email": "a@b.com", "phone": "987654321"}}}]}}}`)
	// The keyless type has computed fields of its own; a set of keyless rows is left out (its connection's
	// cursors would need a key).
	d.exec(`
create function digits(rec users_with_phone) returns int stable language sql as $$ select length(rec.phone) $$;
create function fans(rec polls) returns setof users_with_phone stable language sql as $$ select * from users_with_phone $$;`)
	d.expect(`{ pollsCollection(first: 2, offset: 1) { edges { node { author { phone digits } } } } }`,
		`{"data": {"pollsCollection": {"edges": [{"node": {"author": {"phone": "123456789", "digits": 9}}}, {"node": {"author": {"phone": "987654321", "digits": 9}}}]}}}`)
	d.expect(`{ pollsCollection { edges { node { fans { __typename } } } } }`,
		`{"data": null, "errors": [{"message": "Unknown field 'fans' on type 'polls'"}]}`)
	d.expect(`{ pollsCollection { edges { node { author { id, email, phone } } } } }`,
		`{"data": {"pollsCollection": {"edges": [{"node": {"author": null}}, `+
			`{"node": {"author": {"id": "748a81bb-5f71-4dc8-88d9-efe9f03a14b8", "email": null, "phone": "123456789"}}}, `+
			`{"node": {"author": {"id": "dd5add8a-7dd2-4495-bc1a-a1dfe95ef23a", "email": "a@b.com", "phone": "987654321"}}}]}}}`)
	// The type has no nodeId, and the view is no collection: only the computed field reaches it.
	d.expect(`{ pollsCollection(first: 1) { edges { node { author { nodeId } } } } }`,
		`{"data": null, "errors": [{"message": "Unknown field 'nodeId' on type 'users_with_phone'"}]}`)
	d.expect(`{ users_with_phoneCollection { edges { node { id } } } }`,
		`{"data": null, "errors": [{"message": "Unknown field \"users_with_phoneCollection\" on type Query"}]}`)
	// A keyless relation no field reaches adds nothing, not even the types of its composite columns.
	d.exec(`create type geo as (lat float8, lng float8);
create view places as select 1 as id, row(1, 2)::geo as pos;
grant select on places to service_role;
comment on schema public is e'@graphql({"introspection": true, "features": ["composite"]})'`)
	d.expect(`{ places: __type(name: "places") { name } geo: __type(name: "geo") { name } }`,
		`{"data": {"geo": null, "places": null}}`)
	d.expect(`{ __type(name: "users_with_phone") { kind interfaces { name } fields { name type { kind name ofType { name } } } } }`,
		`{"data": {"__type": {"kind": "OBJECT", "fields": [{"name": "id", "type": {"kind": "SCALAR", "name": "UUID", "ofType": null}}, `+
			`{"name": "email", "type": {"kind": "SCALAR", "name": "String", "ofType": null}}, `+
			`{"name": "phone", "type": {"kind": "SCALAR", "name": "String", "ofType": null}}, `+
			`{"name": "digits", "type": {"kind": "SCALAR", "name": "Int", "ofType": null}}], "interfaces": []}}}`)
	if got := d.query(`{ __type(name: "polls") { fields { name type { kind name } } } }`); !strings.Contains(got, `{"name": "author", "type": {"kind": "OBJECT", "name": "users_with_phone"}}`) {
		t.Errorf("polls' fields: %s", got)
	}
}
