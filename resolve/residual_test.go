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

// Issue 11: last + before over an orderBy of several columns in mixed directions returns the page just before
// the cursor, in the requested order. Every combination of directions is paged backward (and forward) from
// every row, at the root and nested under a relationship, against the order of the whole collection.
func TestLastBeforeWithMixedDirections(t *testing.T) {
	d := newTestDB(t, `
comment on schema public is e'@graphql({"inflect_names": true})';
create table box(id int primary key);
insert into box values (1);
create table item(id int primary key, box_id int not null references box(id), grp int, label varchar(10), rank int not null);
insert into item values (1, 1, 1, 'k', 2), (2, 1, 1, 'z', 1), (3, 1, 1, null, 2), (4, 1, 2, 'k', 1), (5, 1, 2, 'z', 2),
  (6, 1, 2, 'k', 1), (7, 1, null, null, 2), (8, 1, 3, 'a', 1), (9, 1, null, 'a', 2), (10, 1, 1, 'z', 1);
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
	for _, g := range directions {
		for _, l := range directions {
			// Without id in orderBy the primary key breaks ties, as pg_graphql appends it; rank is NOT NULL.
			for _, format := range []string{"[{grp: %s}, {label: %s}]", "[{grp: %s}, {label: %s}, {id: DescNullsFirst}]",
				"[{rank: %s}, {label: %s}]", "[{label: %s}, {id: %s}, {grp: AscNullsFirst}]"} {
				order := "orderBy: " + fmt.Sprintf(format, g, l)
				all := page(false, order).Edges
				if len(all) != 10 {
					t.Fatalf("%s: %d rows", order, len(all))
				}
				for _, nested := range []bool{false, true} {
					for _, n := range []int{1, 4, 12} {
						if got, want := ids(page(nested, fmt.Sprintf(`%s, last: %d`, order, n)).Edges), ids(all[max(0, len(all)-n):]); got != want {
							t.Errorf("%s, last %d (nested %v): %s, want %s", order, n, nested, got, want)
						}
					}
					for i := range all {
						const n = 2
						// The cursor's row is on the far side of a page that is not empty: as in pg_graphql, there
						// is a page there.
						back := page(nested, fmt.Sprintf(`%s, last: %d, before: "%s"`, order, n, all[i].Cursor))
						if got, want := ids(back.Edges), ids(all[max(0, i-n):i]); got != want || back.PageInfo != (pageInfo{i > 0, i-n > 0}) {
							t.Errorf("%s, last %d before row %d (nested %v): %s %+v, want %s", order, n, all[i].Node.ID, nested, got, back.PageInfo, want)
						}
						fwd := page(nested, fmt.Sprintf(`%s, first: %d, after: "%s"`, order, n, all[i].Cursor))
						if got, want := ids(fwd.Edges), ids(all[i+1:min(len(all), i+1+n)]); got != want || fwd.PageInfo != (pageInfo{i+1+n < len(all), i+1 < len(all)}) {
							t.Errorf("%s, first %d after row %d (nested %v): %s %+v, want %s", order, n, all[i].Node.ID, nested, got, fwd.PageInfo, want)
						}
					}
				}
			}
		}
	}
}
