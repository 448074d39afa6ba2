package resolve

import (
	"strings"
	"testing"
)

// compositeFixture: shops with an address and a price of composite types, readable by their owner (and, for
// shops without one, by anyone); plain has an address column but not the composite feature.
const compositeFixture = `
comment on schema public is '@graphql({"inflect_names": true, "introspection": true})';
create type mood as enum ('happy', 'sad');
create type address as (street_name text, city text, zip int, big bigint, mood mood, nested_point point);
create type price as (amount numeric, currency varchar(3));
create table shop(id int primary key, owner_id uuid, address address, price price);
comment on table shop is '@graphql({"features": ["composite"]})';
create table plain(id int primary key, address address);
insert into shop values
  (1, '11111111-1111-1111-1111-111111111111', row('Main St', 'Oslo', 150, 9007199254740993, 'happy', null), row(9.90, 'NOK')),
  (2, '22222222-2222-2222-2222-222222222222', row('High St', 'Bergen', 5003, 1, 'sad', null), null),
  (3, null, row(null, null, null, null, null, null), row(1, 'EUR'));
insert into plain values (1, row('x', 'y', 1, 1, 'happy', null));
alter table shop enable row level security;
create policy read on shop for select using (owner_id is null or owner_id = auth.uid());
create function shops_in(cities text[], m mood, moods mood[] default null) returns setof shop stable language sql
  as $$ select * from shop where (address).city = any(cities) and (address).mood = m and (moods is null or (address).mood = any(moods)) $$;
grant all on all tables in schema public to anon, authenticated, service_role;
`

func TestCompositeColumns(t *testing.T) {
	d := newTestDB(t, compositeFixture)
	q := `{ shopCollection(filter: {address: {city: {in: ["Oslo", "Bergen"]}, zip: {gt: 100}}}) { edges { node { id
		address { __typename streetName city zip big mood } price { amount currency } } } } }`
	for _, tc := range []struct {
		name   string
		role   string
		claims map[string]any
		want   string
	}{
		{"anon", "anon", nil, `{"data": {"shopCollection": {"edges": []}}}`},
		{"alice", "authenticated", alice, `{"data": {"shopCollection": {"edges": [{"node": {"id": 1, "price": {"amount": "9.90", "currency": "NOK"}, "address": {"big": "9007199254740993", "zip": 150, "city": "Oslo", "mood": "happy", "__typename": "Address", "streetName": "Main St"}}}]}}}`},
		{"bob", "authenticated", bob, `{"data": {"shopCollection": {"edges": [{"node": {"id": 2, "price": null, "address": {"big": "1", "zip": 5003, "city": "Bergen", "mood": "sad", "__typename": "Address", "streetName": "High St"}}}]}}}`},
		{"service_role", "service_role", nil, `{"data": {"shopCollection": {"edges": [{"node": {"id": 1, "price": {"amount": "9.90", "currency": "NOK"}, "address": {"big": "9007199254740993", "zip": 150, "city": "Oslo", "mood": "happy", "__typename": "Address", "streetName": "Main St"}}}, {"node": {"id": 2, "price": null, "address": {"big": "1", "zip": 5003, "city": "Bergen", "mood": "sad", "__typename": "Address", "streetName": "High St"}}}]}}}`},
	} {
		if got := d.as(tc.role, tc.claims, q, ""); got != tc.want {
			t.Errorf("as %s\n got: %s\nwant: %s", tc.name, got, tc.want)
		}
	}
	// An all-NULL composite reads as null; a filter on a field skips it.
	d.expect(`{ shopCollection(filter: {address: {nestedPoint: {is: NULL}, city: {is: NOT_NULL}}}) { edges { node { id } } } }`,
		`{"data": {"shopCollection": {"edges": [{"node": {"id": 1}}, {"node": {"id": 2}}]}}}`)
	d.expect(`{ shopCollection(filter: {price: {currency: {eq: "EUR"}}}) { edges { node { id address { city } price { amount } } } } }`,
		`{"data": {"shopCollection": {"edges": [{"node": {"id": 3, "price": {"amount": "1"}, "address": null}}]}}}`)
	for q, want := range map[string]string{
		`{ shopCollection { edges { node { address } } } }`:                                `{"data": null, "errors": [{"message": "Field address of type Address must have a selection of subfields"}]}`,
		`{ shopCollection { edges { node { address { nope } } } } }`:                       `{"data": null, "errors": [{"message": "Unknown field 'nope' on type 'Address'"}]}`,
		`{ shopCollection(filter: {address: {nope: {eq: 1}}}) { edges { node { id } } } }`: `{"data": null, "errors": [{"message": "Input for type AddressFilter contains extra keys [\"nope\"]"}]}`,
		`{ shopCollection(orderBy: [{address: AscNullsLast}]) { edges { node { id } } } }`: `{"data": null, "errors": [{"message": "Input for type ShopOrderBy contains extra keys [\"address\"]"}]}`,
		`{ plainCollection { edges { node { address { city } } } } }`:                      `{"data": null, "errors": [{"message": "Unknown field 'address' on type 'Plain'"}]}`,
	} {
		if got := d.query(q); got != want {
			t.Errorf("%s\n got: %s\nwant: %s", q, got, want)
		}
	}
	expectOneRoundTrip(t, d, Session{Role: "authenticated", Claims: alice, SearchPath: []string{"public"}}, q)
	// Mutations filter on and return composite fields; the column itself is not writable.
	d.expect(`mutation { updateShopCollection(set: {ownerId: null}, filter: {address: {city: {eq: "Bergen"}}}) { records { id address { city zip } } } }`,
		`{"data": {"updateShopCollection": {"records": [{"id": 2, "address": {"zip": 5003, "city": "Bergen"}}]}}}`)
	d.expect(`mutation { insertIntoShopCollection(objects: [{id: 9, address: null}]) { affectedCount } }`,
		`{"data": null, "errors": [{"message": "Input for type ShopInsertInput contains extra keys [\"address\"]"}]}`)
	// Introspection: the composite types appear with the feature and only where it is on.
	intro := introspected(t, d, "anon", nil)
	for s, want := range map[string]bool{
		"AddressFilter: streetName city zip big mood nestedPoint\n": true,
		"PriceFilter: amount currency\n":                            true,
		"ShopInsertInput: id ownerId\n":                             true,
		"PlainFilter: id nodeId and or not\n":                       true,
		"shopsIn":                                                   false,
	} {
		if strings.Contains(intro, s) != want {
			t.Errorf("introspection and %q (want %v):\n%s", s, want, intro)
		}
	}
}

func TestEnumArgumentsOfFunctions(t *testing.T) {
	d := newTestDB(t, compositeFixture)
	q := `{ shopsIn(cities: ["Oslo", "Bergen"], m: happy, moods: [happy, sad]) { edges { node { id address { city } } } } }`
	// Off: pg_graphql skips functions taking enums.
	if got, want := d.query(q), `{"data": null, "errors": [{"message": "Unknown field \"shopsIn\" on type Query"}]}`; got != want {
		t.Errorf("feature off\n got: %s\nwant: %s", got, want)
	}
	d.exec(`comment on schema public is '@graphql({"inflect_names": true, "introspection": true, "features": ["composite"]})'`)
	d.expect(q, `{"data": {"shopsIn": {"edges": [{"node": {"id": 1, "address": {"city": "Oslo"}}}]}}}`)
	if got := d.as("authenticated", bob, q, ""); got != `{"data": {"shopsIn": {"edges": []}}}` {
		t.Errorf("as bob: %s", got)
	}
	d.expect(`{ shopsIn(cities: ["Bergen"], m: sad) { edges { node { id } } } }`, `{"data": {"shopsIn": {"edges": [{"node": {"id": 2}}]}}}`)
	for q, want := range map[string]string{
		`{ shopsIn(cities: ["Oslo"], m: angry) { edges { node { id } } } }`:             `{"data": null, "errors": [{"message": "Invalid input for Mood type"}]}`,
		`{ shopsIn(cities: ["Oslo"], m: happy, moods: [1]) { edges { node { id } } } }`: `{"data": null, "errors": [{"message": "Invalid input for Mood type"}]}`,
	} {
		if got := d.query(q); got != want {
			t.Errorf("%s\n got: %s\nwant: %s", q, got, want)
		}
	}
}
