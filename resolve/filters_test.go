package resolve

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// filterFixture has a column per filter input type (contract 1.6) and four rows, the last all NULL.
const filterFixture = `
create type status as enum ('draft', 'published', 'archived');
comment on type status is '@graphql({"mappings": {"archived": "ARCHIVED"}})';
create table item(
  id int primary key,
  n int, f float8, b bigint, bf numeric, s text, v varchar(10), ok bool, u uuid, d date, t time, ts timestamptz,
  st status, ip inet,
  tags text[], nums int[], bigs bigint[], bfs numeric[], flags bool[], uuids uuid[], fs float8[], days date[],
  times time[], tss timestamp[], sts status[], js jsonb
);
insert into item values
  (1, 1, 1.5, 10000000000, 1.10, 'apple', 'Apple', true, '00000000-0000-0000-0000-000000000001', '2024-01-01',
   '08:00', '2024-01-01 08:00+00', 'draft', '10.0.0.1',
   '{red,green}', '{1,2}', '{10000000000}', '{1.1}', '{true}', '{00000000-0000-0000-0000-000000000001}', '{1.5}',
   '{2024-01-01}', '{08:00}', '{2024-01-01 08:00}', '{draft}', '{"a": 1}'),
  (2, 2, 2.5, 20000000000, 2.20, 'banana', 'Banana', false, '00000000-0000-0000-0000-000000000002', '2024-02-01',
   '12:00', '2024-02-01 12:00+00', 'published', '10.0.0.2',
   '{green}', '{2,3}', '{20000000000}', '{2.2}', '{false}', '{00000000-0000-0000-0000-000000000002}', '{2.5}',
   '{2024-02-01}', '{12:00}', '{2024-02-01 12:00}', '{published}', '{"a": 2}'),
  (3, 3, 3.5, 30000000000, 3.30, 'cherry', 'cherry%', true, '00000000-0000-0000-0000-000000000003', '2024-03-01',
   '18:00', '2024-03-01 18:00+00', 'archived', '10.0.0.3',
   '{}', '{3}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', null),
  (4, null, null, null, null, null, null, null, null, null, null, null, null, null,
   null, null, null, null, null, null, null, null, null, null, null, null);
create table logic(id int primary key, "and" int, "or" text, "not" bool);
insert into logic values (1, 1, 'x', true), (2, 2, 'y', false);
grant all on all tables in schema public to service_role;
`

// filterIDs runs a filter on a collection and returns the ids it matches, comma-separated, or the error body.
func filterIDs(t *testing.T, d *testDB, collection, filter, vars string) string {
	t.Helper()
	return collectionIDs(t, d, collection, `filter: `+filter, vars)
}

// collectionIDs queries a collection with the given arguments and returns the ids of its edges,
// comma-separated, or the body when it holds errors.
func collectionIDs(t *testing.T, d *testDB, collection, args, vars string) string {
	t.Helper()
	body := d.as("service_role", nil, `query Q($s: String, $n: Int, $l: [Int!], $f: itemFilter, $st: status, $b: Boolean) {
		`+collection+`(`+args+`) { edges { node { id } } } }`, vars)
	var resp struct {
		Data map[string]struct {
			Edges []struct{ Node struct{ ID int } }
		}
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil || strings.Contains(body, `"errors"`) {
		return body
	}
	var out []string
	for _, e := range resp.Data[collection].Edges {
		out = append(out, strconv.Itoa(e.Node.ID))
	}
	return strings.Join(out, ",")
}

// TestFilterOperators runs every operator of every filter input type.
func TestFilterOperators(t *testing.T) {
	d := newTestDB(t, filterFixture)
	for _, c := range []struct{ filter, want string }{
		// IntFilter
		{`{n: {eq: 2}}`, "2"}, {`{n: {neq: 2}}`, "1,3"}, {`{n: {gt: 2}}`, "3"}, {`{n: {gte: 2}}`, "2,3"},
		{`{n: {lt: 2}}`, "1"}, {`{n: {lte: 2}}`, "1,2"}, {`{n: {in: [1, 3]}}`, "1,3"}, {`{n: {is: NULL}}`, "4"},
		{`{n: {is: NOT_NULL}}`, "1,2,3"},
		// FloatFilter
		{`{f: {eq: 2.5}}`, "2"}, {`{f: {neq: 2.5}}`, "1,3"}, {`{f: {gt: 2}}`, "2,3"}, {`{f: {gte: 2.5}}`, "2,3"},
		{`{f: {lt: 2.5}}`, "1"}, {`{f: {lte: 2.5}}`, "1,2"}, {`{f: {in: [1.5, 3.5]}}`, "1,3"}, {`{f: {is: NULL}}`, "4"},
		// BigIntFilter: strings or numbers
		{`{b: {eq: "20000000000"}}`, "2"}, {`{b: {eq: 20000000000}}`, "2"}, {`{b: {neq: "20000000000"}}`, "1,3"},
		{`{b: {gt: "10000000000"}}`, "2,3"}, {`{b: {gte: "20000000000"}}`, "2,3"}, {`{b: {lt: 20000000000}}`, "1"},
		{`{b: {lte: 20000000000}}`, "1,2"}, {`{b: {in: ["10000000000", 30000000000]}}`, "1,3"}, {`{b: {is: NOT_NULL}}`, "1,2,3"},
		// BigFloatFilter: strings only
		{`{bf: {eq: "2.2"}}`, "2"}, {`{bf: {neq: "2.20"}}`, "1,3"}, {`{bf: {gt: "1.1"}}`, "2,3"}, {`{bf: {gte: "2.2"}}`, "2,3"},
		{`{bf: {lt: "2.2"}}`, "1"}, {`{bf: {lte: "2.2"}}`, "1,2"}, {`{bf: {in: ["1.1", "3.3"]}}`, "1,3"}, {`{bf: {is: NULL}}`, "4"},
		// StringFilter
		{`{s: {eq: "banana"}}`, "2"}, {`{s: {neq: "banana"}}`, "1,3"}, {`{s: {gt: "apple"}}`, "2,3"},
		{`{s: {gte: "banana"}}`, "2,3"}, {`{s: {lt: "banana"}}`, "1"}, {`{s: {lte: "banana"}}`, "1,2"},
		{`{s: {in: ["apple", "cherry"]}}`, "1,3"}, {`{s: {is: NULL}}`, "4"},
		{`{s: {like: "%an%"}}`, "2"}, {`{v: {like: "B%"}}`, "2"}, {`{v: {ilike: "b%"}}`, "2"}, {`{v: {ilike: "%A%"}}`, "1,2"},
		{`{s: {regex: "^(a|c)"}}`, "1,3"}, {`{v: {regex: "^a"}}`, ""}, {`{v: {iregex: "^a"}}`, "1"},
		// startsWith takes the prefix literally: % is not a wildcard.
		{`{v: {startsWith: "cherry%"}}`, "3"}, {`{v: {startsWith: "ch%"}}`, ""}, {`{s: {startsWith: "b"}}`, "2"},
		// BooleanFilter
		{`{ok: {eq: true}}`, "1,3"}, {`{ok: {eq: false}}`, "2"}, {`{ok: {is: NULL}}`, "4"},
		// UUIDFilter
		{`{u: {eq: "00000000-0000-0000-0000-000000000002"}}`, "2"},
		{`{u: {neq: "00000000-0000-0000-0000-000000000002"}}`, "1,3"},
		{`{u: {in: ["00000000-0000-0000-0000-000000000001", "00000000-0000-0000-0000-000000000003"]}}`, "1,3"},
		{`{u: {is: NULL}}`, "4"},
		// DateFilter, TimeFilter, DatetimeFilter
		{`{d: {eq: "2024-02-01"}}`, "2"}, {`{d: {neq: "2024-02-01"}}`, "1,3"}, {`{d: {gt: "2024-01-15"}}`, "2,3"},
		{`{d: {gte: "2024-02-01"}}`, "2,3"}, {`{d: {lt: "2024-02-01"}}`, "1"}, {`{d: {lte: "2024-02-01"}}`, "1,2"},
		{`{d: {in: ["2024-01-01", "2024-03-01"]}}`, "1,3"}, {`{d: {is: NULL}}`, "4"},
		{`{t: {eq: "12:00"}}`, "2"}, {`{t: {neq: "12:00:00"}}`, "1,3"}, {`{t: {gt: "09:00"}}`, "2,3"}, {`{t: {gte: "12:00"}}`, "2,3"},
		{`{t: {lt: "12:00"}}`, "1"}, {`{t: {lte: "12:00"}}`, "1,2"}, {`{t: {in: ["08:00", "18:00"]}}`, "1,3"}, {`{t: {is: NULL}}`, "4"},
		{`{ts: {eq: "2024-02-01T12:00:00+00:00"}}`, "2"}, {`{ts: {eq: "2024-02-01T14:00:00+02:00"}}`, "2"},
		{`{ts: {neq: "2024-02-01T12:00:00Z"}}`, "1,3"}, {`{ts: {gt: "2024-01-15"}}`, "2,3"}, {`{ts: {gte: "2024-02-01T12:00Z"}}`, "2,3"},
		{`{ts: {lt: "2024-02-01T12:00Z"}}`, "1"}, {`{ts: {lte: "2024-02-01T12:00Z"}}`, "1,2"},
		{`{ts: {in: ["2024-01-01T08:00Z", "2024-03-01T18:00Z"]}}`, "1,3"}, {`{ts: {is: NOT_NULL}}`, "1,2,3"},
		// Enum filters: literals or strings, through mappings
		{`{st: {eq: published}}`, "2"}, {`{st: {eq: "published"}}`, "2"}, {`{st: {eq: ARCHIVED}}`, "3"},
		{`{st: {neq: draft}}`, "2,3"}, {`{st: {in: [draft, ARCHIVED]}}`, "1,3"}, {`{st: {in: "ARCHIVED"}}`, "3"},
		{`{st: {is: NULL}}`, "4"}, {`{st: {eq: $st}}`, "3"},
		// OpaqueFilter: Postgres parses the value
		{`{ip: {eq: "10.0.0.2"}}`, "2"}, {`{ip: {is: NULL}}`, "4"},
		// IDFilter
		{`{nodeId: {eq: "WyJwdWJsaWMiLCAiaXRlbSIsIDJd"}}`, "2"},
		// List filters
		{`{tags: {contains: ["green"]}}`, "1,2"}, {`{tags: {contains: "red"}}`, "1"}, {`{tags: {contains: []}}`, "1,2,3"},
		{`{tags: {containedBy: ["green", "blue"]}}`, "2,3"}, {`{tags: {overlaps: ["red", "blue"]}}`, "1"},
		{`{tags: {eq: ["red", "green"]}}`, "1"}, {`{tags: {eq: ["green", "red"]}}`, ""}, {`{tags: {eq: []}}`, "3"},
		{`{tags: {is: NULL}}`, "4"}, {`{tags: {is: NOT_NULL}}`, "1,2,3"},
		{`{nums: {contains: 2}}`, "1,2"}, {`{nums: {containedBy: [1, 2, 3]}}`, "1,2,3"}, {`{nums: {overlaps: [1, 3]}}`, "1,2,3"},
		{`{nums: {eq: [2, 3]}}`, "2"},
		{`{bigs: {contains: ["20000000000"]}}`, "2"}, {`{bigs: {overlaps: [10000000000]}}`, "1"},
		{`{bfs: {contains: "2.2"}}`, "2"}, {`{flags: {contains: true}}`, "1"}, {`{flags: {eq: [false]}}`, "2"},
		{`{uuids: {contains: "00000000-0000-0000-0000-000000000002"}}`, "2"}, {`{fs: {overlaps: [1.5, 9]}}`, "1"},
		{`{days: {contains: "2024-02-01"}}`, "2"}, {`{times: {containedBy: ["08:00", "09:00"]}}`, "1,3"},
		{`{tss: {contains: "2024-01-01T08:00"}}`, "1"},
		// Several operators and several columns are AND-ed.
		{`{n: {gt: 1, lt: 3}}`, "2"}, {`{n: {gte: 1}, s: {like: "%e%"}}`, "1,3"},
	} {
		if got := filterIDs(t, d, "itemCollection", c.filter, `{"st": "ARCHIVED"}`); got != c.want {
			t.Errorf("filter %s\n got: %s\nwant: %s", c.filter, got, c.want)
		}
	}
}

// TestFilterCompound covers and/or/not nesting and the null, empty and missing-variable rules.
func TestFilterCompound(t *testing.T) {
	d := newTestDB(t, filterFixture)
	for _, c := range []struct{ filter, vars, want string }{
		{`{or: [{n: {eq: 1}}, {n: {eq: 3}}]}`, "", "1,3"},
		{`{and: [{n: {gte: 2}}, {n: {lte: 3}}]}`, "", "2,3"},
		{`{not: {n: {eq: 1}}}`, "", "2,3"},
		{`{not: {or: [{n: {eq: 1}}, {n: {is: NULL}}]}}`, "", "2,3"},
		{`{or: [{and: [{n: {gt: 1}}, {ok: {eq: true}}]}, {s: {eq: "apple"}}]}`, "", "1,3"},
		// A single object given for a list is a one-element list: an or of one AND-ed object.
		{`{or: {n: {eq: 1}, s: {eq: "banana"}}}`, "", ""},
		{`{or: {n: {eq: 2}, s: {eq: "banana"}}}`, "", "2"},
		// Ignored: null filter, null column, empty compound lists, empty not, empty entries.
		{`null`, "", "1,2,3,4"},
		{`{n: null}`, "", "1,2,3,4"},
		{`{and: [], or: [], not: {}}`, "", "1,2,3,4"},
		{`{or: [{}]}`, "", "1,2,3,4"},
		{`{and: [{}]}`, "", "1,2,3,4"},
		{`{or: [{}, {n: {eq: 2}}]}`, "", "2"},
		{`{not: {or: [{}]}}`, "", "1,2,3,4"},
		{`{not: {n: {eq: $n}}}`, `{}`, "1,2,3,4"},
		// A missing variable removes its operator; an explicit null is a literal that matches nothing.
		{`{s: {eq: $s}}`, `{}`, "1,2,3,4"},
		{`{or: [{s: {eq: $s}}]}`, `{}`, "1,2,3,4"},
		{`{s: {eq: $s}}`, `{"s": null}`, ""},
		{`{s: {eq: $s}}`, `{"s": "cherry"}`, "3"},
		{`{n: {lt: null}}`, "", ""},
		{`{s: {in: null}}`, "", ""},
		{`{n: {in: []}}`, "", ""},
		{`{n: {in: $l}}`, `{"l": [2, 3]}`, "2,3"},
		{`{n: {in: $l}}`, `{"l": 3}`, "3"},
		{`$f`, `{"f": {"n": {"eq": 1}}}`, "1"},
		{`$f`, `{}`, "1,2,3,4"},
		{`{ok: {eq: $b}}`, `{"b": false}`, "2"},
	} {
		if got := filterIDs(t, d, "itemCollection", c.filter, c.vars); got != c.want {
			t.Errorf("filter %s vars %s\n got: %s\nwant: %s", c.filter, c.vars, got, c.want)
		}
	}
	for _, c := range []struct{ filter, message string }{
		{`{n: {is: null}}`, "Error transpiling Is filter value type"},
		{`{n: {is: MAYBE}}`, "Invalid input for FilterIs type"},
		{`{n: {like: "1"}}`, `Input for type IntFilter contains extra keys ["like"]`},
		{`{tags: {in: ["a"]}}`, `Input for type StringListFilter contains extra keys ["in"]`},
		{`{ok: {neq: true}}`, `Input for type BooleanFilter contains extra keys ["neq"]`},
		{`{ip: {in: ["10.0.0.1"]}}`, `Input for type OpaqueFilter contains extra keys ["in"]`},
		{`{nodeId: {neq: "x"}}`, `Input for type IDFilter contains extra keys ["neq"]`},
		{`{js: {eq: "{}"}}`, `Input for type itemFilter contains extra keys ["js"]`},
		{`{sts: {contains: [draft]}}`, `Input for type itemFilter contains extra keys ["sts"]`},
		{`{n: 1}`, "Invalid input for IntFilter type"},
		{`[{n: {eq: 1}}]`, "Invalid input for itemFilter type"},
		{`{or: [1]}`, "Invalid input for itemFilter type"},
		{`{st: {eq: nope}}`, "Invalid input for status type"},
		{`{n: {in: [1, null]}}`, "Invalid input for NonNull type"},
	} {
		want := `{"data": null, "errors": [{"message": ` + jsonString(c.message) + `}]}`
		if got := filterIDs(t, d, "itemCollection", c.filter, ""); got != want {
			t.Errorf("filter %s\n got: %s\nwant: %s", c.filter, got, want)
		}
	}
}

// TestFilterCompoundNamesYieldToColumns: columns named and/or/not keep their filters and the compound operators
// of those names are omitted.
func TestFilterCompoundNamesYieldToColumns(t *testing.T) {
	d := newTestDB(t, filterFixture+`comment on schema public is '@graphql({"introspection": true})';`)
	if got, want := typeSignatures(t, d, "logicFilter"), "id: IntFilter, and: IntFilter, or: StringFilter, not: BooleanFilter, nodeId: IDFilter"; got != want {
		t.Errorf("logicFilter\n got: %s\nwant: %s", got, want)
	}
	for filter, want := range map[string]string{
		`{and: {eq: 2}}`:              "2",
		`{or: {eq: "x"}}`:             "1",
		`{not: {eq: false}}`:          "2",
		`{and: {gt: 0}, id: {eq: 1}}`: "1",
	} {
		if got := filterIDs(t, d, "logicCollection", filter, ""); got != want {
			t.Errorf("filter %s: got %s want %s", filter, got, want)
		}
	}
}

// TestOrderBy covers the order-by input (contract 1.7): which columns are orderable, directions, coercion of a
// single object, null directions, and the cursors that encode the order.
func TestOrderBy(t *testing.T) {
	d := newTestDB(t, filterFixture)
	for _, c := range []struct{ orderBy, want string }{
		{`{n: DescNullsLast}`, "3,2,1,4"},
		{`[{n: "DescNullsLast"}]`, "3,2,1,4"},
		{`[{n: DescNullsFirst}]`, "4,3,2,1"},
		{`[{n: AscNullsFirst}]`, "4,1,2,3"},
		{`[{n: AscNullsLast}]`, "1,2,3,4"},
		{`null`, "1,2,3,4"},
		{`[]`, "1,2,3,4"},
		{`[{n: null}]`, "1,2,3,4"},
		{`[{ok: DescNullsLast}, {s: AscNullsLast}]`, "1,3,2,4"},
		{`[{ok: AscNullsFirst}, {s: DescNullsFirst}]`, "4,2,3,1"},
		// Opaque and enum columns are orderable: enums by their declared order.
		{`[{ip: DescNullsLast}]`, "3,2,1,4"},
		{`[{st: DescNullsFirst}]`, "4,3,2,1"},
	} {
		if got := collectionIDs(t, d, "itemCollection", `orderBy: `+c.orderBy, ""); got != c.want {
			t.Errorf("orderBy %s: got %s want %s", c.orderBy, got, c.want)
		}
	}
	// Cursors hold the order keys then the primary key, as jsonb text in base64.
	d.expect(`{ itemCollection(orderBy: [{s: DescNullsFirst}], first: 2) { edges { cursor } } }`,
		`{"data": {"itemCollection": {"edges": [{"cursor": "W251bGwsIDRd"}, {"cursor": "WyJjaGVycnkiLCAzXQ=="}]}}}`)
	// Row 4, whose ip is NULL, sorts last but is not after a cursor whose ip is not NULL (pg_graphql v1.6.1).
	d.expect(`{ itemCollection(orderBy: [{ip: AscNullsLast}], after: "WyIxMC4wLjAuMSIsIDFd") { edges { cursor node { nodeId } } } }`,
		`{"data": {"itemCollection": {"edges": [{"node": {"nodeId": "WyJwdWJsaWMiLCAiaXRlbSIsIDJd"}, "cursor": "WyIxMC4wLjAuMiIsIDJd"}, `+
			`{"node": {"nodeId": "WyJwdWJsaWMiLCAiaXRlbSIsIDNd"}, "cursor": "WyIxMC4wLjAuMyIsIDNd"}]}}}`)
	// A cursor from another ordering with fewer keys is accepted; one with more keys than the order is not.
	d.expect(`{ itemCollection(first: 1, after: "WzJd") { edges { node { id } } } }`,
		`{"data": {"itemCollection": {"edges": [{"node": {"id": 3}}]}}}`)
	for query, message := range map[string]string{
		`{ itemCollection(orderBy: [{tags: AscNullsLast}]) { edges { cursor } } }`: `Input for type itemOrderBy contains extra keys ["tags"]`,
		`{ itemCollection(orderBy: [{js: AscNullsLast}]) { edges { cursor } } }`:   `Input for type itemOrderBy contains extra keys ["js"]`,
		`{ itemCollection(orderBy: [{n: ASC}]) { edges { cursor } } }`:             "Invalid input for OrderByDirection type",
		`{ itemCollection(after: "WzEsIDJd") { edges { cursor } } }`:               "orderBy clause incompatible with pagination cursor",
		`{ itemCollection(after: "/w==") { edges { cursor } } }`:                   "Failed to decode cursor, error 2",
		`{ itemCollection(after: "bm9wZQ==") { edges { cursor } } }`:               "Failed to decode cursor, error 3",
		`{ itemCollection(after: 1) { edges { cursor } } }`:                        "Invalid input for Cursor type",
	} {
		want := `{"data": null, "errors": [{"message": ` + jsonString(message) + `}]}`
		if got := d.query(query); got != want {
			t.Errorf("%s\n got: %s\nwant: %s", query, got, want)
		}
	}
}

// TestKeysetPagingWithNulls walks every ordering of a nullable column (plus a second key) forwards and
// backwards page by page under the exactPaging feature and compares with the order Postgres gives the whole
// set: no row is skipped or repeated. (Without the feature the pages are pg_graphql's, which skip NULLs that sort
// after a non-NULL cursor value: TestLastBeforeWithMixedDirections.)
func TestKeysetPagingWithNulls(t *testing.T) {
	d := newTestDB(t, `
		create table entry(id int primary key, a int, b text);
		comment on table entry is '@graphql({"features": ["exactPaging"]})';
		insert into entry select i, case when i % 4 = 0 then null else i % 3 end, case when i % 5 = 0 then null else chr(97 + i % 2) end
		  from generate_series(1, 23) i;
		grant select on entry to service_role;
	`)
	type page struct {
		Data struct {
			EntryCollection struct {
				PageInfo struct {
					StartCursor, EndCursor       *string
					HasNextPage, HasPreviousPage bool
				}
				Edges []struct {
					Cursor string
					Node   struct{ ID int }
				}
			}
		}
	}
	fetch := func(args string) page {
		t.Helper()
		body := d.query(`{ entryCollection(` + args + `) { pageInfo { startCursor endCursor hasNextPage hasPreviousPage } edges { cursor node { id } } } }`)
		var p page
		if err := json.Unmarshal([]byte(body), &p); err != nil || strings.Contains(body, "errors") {
			t.Fatalf("%s: %s", args, body)
		}
		return p
	}
	dirs := []string{"AscNullsFirst", "AscNullsLast", "DescNullsFirst", "DescNullsLast"}
	for _, da := range dirs {
		for _, db := range dirs {
			order := `orderBy: [{a: ` + da + `}, {b: ` + db + `}]`
			sqlOrder := func(dir string) string {
				return strings.NewReplacer("Asc", " asc", "Desc", " desc", "NullsFirst", " nulls first", "NullsLast", " nulls last").Replace(dir)
			}
			var want []int
			rows, err := d.conn.Query(t.Context(), `select id from entry order by a`+sqlOrder(da)+`, b`+sqlOrder(db)+`, id`)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var id int
				if err := rows.Scan(&id); err != nil {
					t.Fatal(err)
				}
				want = append(want, id)
			}
			rows.Close()
			// Forward in pages of 4.
			var got []int
			after := ""
			for i := 0; ; i++ {
				args := order + `, first: 4`
				if after != "" {
					args += `, after: "` + after + `"`
				}
				p := fetch(args).Data.EntryCollection
				for _, e := range p.Edges {
					got = append(got, e.Node.ID)
				}
				if p.PageInfo.HasPreviousPage != (i > 0) {
					t.Errorf("%s forward page %d: hasPreviousPage %v", order, i, p.PageInfo.HasPreviousPage)
				}
				if !p.PageInfo.HasNextPage {
					break
				}
				after = *p.PageInfo.EndCursor
				if i > 10 {
					t.Fatalf("%s: no end", order)
				}
			}
			if fmt := intsString(got); fmt != intsString(want) {
				t.Errorf("%s forward:\n got %s\nwant %s", order, fmt, intsString(want))
			}
			// Backward in pages of 5, from the end.
			got = nil
			before := ""
			for i := 0; ; i++ {
				args := order + `, last: 5`
				if before != "" {
					args += `, before: "` + before + `"`
				}
				p := fetch(args).Data.EntryCollection
				var ids []int
				for _, e := range p.Edges {
					ids = append(ids, e.Node.ID)
				}
				got = append(ids, got...)
				if p.PageInfo.HasNextPage != (i > 0) {
					t.Errorf("%s backward page %d: hasNextPage %v", order, i, p.PageInfo.HasNextPage)
				}
				if !p.PageInfo.HasPreviousPage {
					break
				}
				before = *p.PageInfo.StartCursor
				if i > 10 {
					t.Fatalf("%s: no start", order)
				}
			}
			if fmt := intsString(got); fmt != intsString(want) {
				t.Errorf("%s backward:\n got %s\nwant %s", order, fmt, intsString(want))
			}
		}
	}
}

func intsString(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return strings.Join(s, ",")
}

// TestCompositeKeyCursorsAndNodeIDs: a two-column primary key is appended to every order and appears in cursors
// and node ids in key order.
func TestCompositeKeyCursorsAndNodeIDs(t *testing.T) {
	d := newTestDB(t, `
		create table pair(a int, b int, label text, primary key (a, b));
		insert into pair values (1, 4, 'x'), (1, 5, 'y'), (2, 1, 'x');
		grant select on pair to service_role;
	`)
	d.expect(`{ pairCollection(first: 1) { edges { cursor node { nodeId } } } }`,
		`{"data": {"pairCollection": {"edges": [{"node": {"nodeId": "WyJwdWJsaWMiLCAicGFpciIsIDEsIDRd"}, "cursor": "WzEsIDRd"}]}}}`)
	d.expect(`{ pairCollection(first: 1, after: "WzEsIDRd") { edges { node { a b } } } }`,
		`{"data": {"pairCollection": {"edges": [{"node": {"a": 1, "b": 5}}]}}}`)
	d.expect(`{ node(nodeId: "WyJwdWJsaWMiLCAicGFpciIsIDEsIDRd") { ... on pair { a b label } } }`,
		`{"data": {"node": {"a": 1, "b": 4, "label": "x"}}}`)
	d.expect(`{ pairCollection(orderBy: {label: DescNullsLast}, last: 1) { edges { cursor node { a b } } } }`,
		`{"data": {"pairCollection": {"edges": [{"node": {"a": 2, "b": 1}, "cursor": "WyJ4IiwgMiwgMV0="}]}}}`)
	d.expect(`{ pairCollection(filter: {nodeId: {eq: "WyJwdWJsaWMiLCAicGFpciIsIDEsIDRd"}}) { edges { node { label } } } }`,
		`{"data": {"pairCollection": {"edges": [{"node": {"label": "x"}}]}}}`)
	d.expect(`{ pairByPk(a: 2, b: 1) { label } }`, `{"data": {"pairByPk": {"label": "x"}}}`)
}

// TestNodeIDsAndCursorsOfKeyTypes: bigint keys are JSON numbers inside node ids and cursors (while the column
// itself is a string), text and uuid keys JSON strings; node(nodeId:) finds each.
func TestNodeIDsAndCursorsOfKeyTypes(t *testing.T) {
	d := newTestDB(t, `
		create table big(id bigint primary key);
		create table tagged(tag text primary key);
		create table uid(id uuid primary key);
		insert into big values (9007199254740993);
		insert into tagged values ('a b');
		insert into uid values ('00000000-0000-0000-0000-000000000001');
		grant select on all tables in schema public to service_role;
	`)
	d.expect(`{ bigCollection { edges { cursor node { id nodeId } } } }`,
		`{"data": {"bigCollection": {"edges": [{"node": {"id": "9007199254740993", "nodeId": "WyJwdWJsaWMiLCAiYmlnIiwgOTAwNzE5OTI1NDc0MDk5M10="}, "cursor": "WzkwMDcxOTkyNTQ3NDA5OTNd"}]}}}`)
	d.expect(`{ node(nodeId: "WyJwdWJsaWMiLCAiYmlnIiwgOTAwNzE5OTI1NDc0MDk5M10=") { ... on big { id } } }`,
		`{"data": {"node": {"id": "9007199254740993"}}}`)
	d.expect(`{ taggedCollection { edges { cursor node { nodeId } } } }`,
		`{"data": {"taggedCollection": {"edges": [{"node": {"nodeId": "WyJwdWJsaWMiLCAidGFnZ2VkIiwgImEgYiJd"}, "cursor": "WyJhIGIiXQ=="}]}}}`)
	d.expect(`{ node(nodeId: "WyJwdWJsaWMiLCAidGFnZ2VkIiwgImEgYiJd") { ... on tagged { tag } } }`,
		`{"data": {"node": {"tag": "a b"}}}`)
	d.expect(`{ uidCollection { edges { node { nodeId } } } }`,
		`{"data": {"uidCollection": {"edges": [{"node": {"nodeId": "WyJwdWJsaWMiLCAidWlkIiwgIjAwMDAwMDAwLTAwMDAtMDAwMC0wMDAwLTAwMDAwMDAwMDAwMSJd"}}]}}}`)
	d.expect(`{ bigCollection(after: "WzkwMDcxOTkyNTQ3NDA5OTNd") { edges { cursor } } }`,
		`{"data": {"bigCollection": {"edges": []}}}`)
}

// TestPaginationCursorNulls replays the queries of pg_graphql's pagination_cursor_nulls test, which comes with a
// newer pagination clause than v1.6.1's. pgreflect answers as v1.6.1 does (issue 18): a row
// whose order key is NULL is never after a cursor whose key is not NULL, so where NULLs sort after such a cursor
// they are not on the page (that test expects them); a NULL cursor key still reaches the rows after it.
func TestPaginationCursorNulls(t *testing.T) {
	d := newTestDB(t, `
		create table account(id int primary key, score int);
		insert into account values (1, 10), (2, null), (3, 20), (4, null);
		grant select on account to service_role;
	`)
	d.expect(`{ accountCollection(first: 2, orderBy: [{score: AscNullsLast}]) { pageInfo { hasNextPage endCursor } edges { node { id score } } } }`,
		`{"data": {"accountCollection": {"edges": [{"node": {"id": 1, "score": 10}}, {"node": {"id": 3, "score": 20}}], "pageInfo": {"endCursor": "WzIwLCAzXQ==", "hasNextPage": true}}}}`)
	d.expect(`{ accountCollection(first: 2, after: "WzIwLCAzXQ==", orderBy: [{score: AscNullsLast}]) { pageInfo { hasNextPage } edges { node { id score } } } }`,
		`{"data": {"accountCollection": {"edges": [], "pageInfo": {"hasNextPage": false}}}}`)
	d.expect(`{ accountCollection(first: 1, after: "WzEwLCAxXQ==", orderBy: [{score: AscNullsLast}]) { pageInfo { hasNextPage } edges { node { id score } } } }`,
		`{"data": {"accountCollection": {"edges": [{"node": {"id": 3, "score": 20}}], "pageInfo": {"hasNextPage": false}}}}`)
	d.expect(`{ accountCollection(first: 2, after: "WzEwLCAxXQ==", orderBy: [{score: DescNullsLast}]) { edges { node { id score } } } }`,
		`{"data": {"accountCollection": {"edges": []}}}`)
	d.expect(`{ accountCollection(last: 2, before: "WzEwLCAxXQ==", orderBy: [{score: AscNullsFirst}]) { edges { node { id score } } } }`,
		`{"data": {"accountCollection": {"edges": []}}}`)
	d.expect(`{ accountCollection(first: 3, after: "W251bGwsIDJd", orderBy: [{score: AscNullsFirst}]) { edges { node { id score } } } }`,
		`{"data": {"accountCollection": {"edges": [{"node": {"id": 4, "score": null}}, {"node": {"id": 1, "score": 10}}, {"node": {"id": 3, "score": 20}}]}}}`)
}
