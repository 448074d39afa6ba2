package resolve

import (
	"strings"
	"testing"
)

// A partitioned table with its partitions; the test sets or leaves the opt-in comment. The foreign key from
// payment to customer is cloned by Postgres onto every partition, and the one from refund to payment references
// the partitioned table, which Postgres also clones onto a constraint per referenced partition.
const partitionFixture = `
comment on schema public is '@graphql({"inflect_names": true, "introspection": true})';
create table customer(id int primary key, name text not null);
create table payment(
  id int not null,
  paid_on date not null,
  customer_id int not null references customer(id),
  amount numeric(8,2) not null,
  primary key (id, paid_on)
) partition by range (paid_on);
create table payment_2024 partition of payment for values from ('2024-01-01') to ('2025-01-01');
create table payment_2025 partition of payment for values from ('2025-01-01') to ('2026-01-01')
  partition by range (paid_on);
create table payment_2025_h1 partition of payment_2025 for values from ('2025-01-01') to ('2025-07-01');
create table payment_2025_h2 partition of payment_2025 for values from ('2025-07-01') to ('2026-01-01');
create table refund(id int primary key, payment_id int not null, paid_on date not null,
  foreign key (payment_id, paid_on) references payment(id, paid_on));
insert into customer values (1, 'ann'), (2, 'bob');
insert into payment values (1, '2024-03-01', 1, 10), (2, '2025-02-01', 1, 20), (3, '2025-09-01', 2, 30);
insert into refund values (1, 3, '2025-09-01');
grant all on all tables in schema public to service_role;
`

func TestPartitionedTableDefaultShowsPartitions(t *testing.T) {
	d := newTestDB(t, partitionFixture)
	// pg_graphql's default: the partitioned tables are not collections, their leaf partitions are tables.
	fields := d.rootFields("service_role", "Query")
	for _, want := range []string{"payment2024Collection", "payment2025H1Collection", "payment2025H2Collection", "customerCollection"} {
		if !strings.Contains(fields, want) {
			t.Errorf("Query lacks %s: %s", want, fields)
		}
	}
	for _, absent := range []string{"paymentCollection", "payment2025Collection"} {
		if strings.Contains(fields+", ", absent+", ") {
			t.Errorf("Query has %s: %s", absent, fields)
		}
	}
	d.expect(`{ payment2025H2Collection { edges { node { id amount customer { name } } } } }`,
		`{"data": {"payment2025H2Collection": {"edges": [{"node": {"id": 3, "amount": "30.00", "customer": {"name": "bob"}}}]}}}`)
	// A directive of another shape, or a comment that is not JSON, on the partitioned table keeps the default.
	for _, comment := range []string{`@graphql({"partitions": true})`, `@graphql({"partitions": "hidden"`} {
		d.exec(`comment on table payment is '` + comment + `'`)
		if got := d.rootFields("service_role", "Query"); got != fields {
			t.Errorf("comment %s changed the schema:\n got: %s\nwant: %s", comment, got, fields)
		}
	}
}

func TestPartitionedTableShownWhole(t *testing.T) {
	d := newTestDB(t, partitionFixture+`comment on table payment is '@graphql({"partitions": "hidden", "totalCount": {"enabled": true}})';`)
	fields := d.rootFields("service_role", "Query")
	if !strings.Contains(fields, "paymentCollection") {
		t.Errorf("Query lacks paymentCollection: %s", fields)
	}
	if strings.Contains(fields, "payment20") {
		t.Errorf("a partition is shown: %s", fields)
	}
	if got := d.rootFields("service_role", "Mutation"); !strings.Contains(got, "insertIntoPaymentCollection") || strings.Contains(got, "payment20") {
		t.Errorf("Mutation: %s", got)
	}
	// Relationships to and from the partitioned table are its own, not one per partition.
	if got, want := d.fieldTypes("Customer"), "id: Int!, name: String!, nodeId: ID!, paymentCollection: PaymentConnection"; got != want {
		t.Errorf("Customer\n got: %s\nwant: %s", got, want)
	}
	if got, want := d.fieldTypes("Refund"), "id: Int!, nodeId: ID!, paidOn: Date!, payment: Payment!, paymentId: Int!"; got != want {
		t.Errorf("Refund\n got: %s\nwant: %s", got, want)
	}
	d.expect(`{ paymentCollection(orderBy: [{id: AscNullsFirst}]) { totalCount edges { node { id paidOn amount customer { name } refundCollection { edges { node { id } } } } } } }`,
		`{"data": {"paymentCollection": {"edges": [{"node": {"id": 1, "amount": "10.00", "paidOn": "2024-03-01", "customer": {"name": "ann"}, "refundCollection": {"edges": []}}}, {"node": {"id": 2, "amount": "20.00", "paidOn": "2025-02-01", "customer": {"name": "ann"}, "refundCollection": {"edges": []}}}, {"node": {"id": 3, "amount": "30.00", "paidOn": "2025-09-01", "customer": {"name": "bob"}, "refundCollection": {"edges": [{"node": {"id": 1}}]}}}], "totalCount": 3}}}`)
	d.expect(`{ customerByPk(id: 1) { paymentCollection(filter: {amount: {gt: "15"}}) { edges { node { id } } } } refundByPk(id: 1) { payment { amount } } }`,
		`{"data": {"refundByPk": {"payment": {"amount": "30.00"}}, "customerByPk": {"paymentCollection": {"edges": [{"node": {"id": 2}}]}}}}`)
	// nodeId names the partitioned table, and node() finds a row in any partition.
	d.expect(`{ node(nodeId: "WyJwdWJsaWMiLCAicGF5bWVudCIsIDIsICIyMDI1LTAyLTAxIl0=") { ... on Payment { id amount } } }`,
		`{"data": {"node": {"id": 2, "amount": "20.00"}}}`)
	// Writes go through the partitioned table: Postgres routes each row to its partition, and moves it when an
	// update changes the partition key.
	d.expect(`mutation { insertIntoPaymentCollection(objects: [{id: 4, paidOn: "2025-11-30", customerId: 2, amount: "40"}]) { affectedCount records { nodeId id } } }`,
		`{"data": {"insertIntoPaymentCollection": {"records": [{"id": 4, "nodeId": "WyJwdWJsaWMiLCAicGF5bWVudCIsIDQsICIyMDI1LTExLTMwIl0="}], "affectedCount": 1}}}`)
	if got := d.scalar(`select tableoid::regclass::text from payment where id = 4`); got != "payment_2025_h2" {
		t.Errorf("inserted row is in %s", got)
	}
	d.expect(`mutation { updatePaymentCollection(set: {paidOn: "2024-12-31"}, filter: {id: {eq: 4}}) { affectedCount records { paidOn } } }`,
		`{"data": {"updatePaymentCollection": {"records": [{"paidOn": "2024-12-31"}], "affectedCount": 1}}}`)
	if got := d.scalar(`select tableoid::regclass::text from payment where id = 4`); got != "payment_2024" {
		t.Errorf("updated row is in %s", got)
	}
	d.expect(`mutation { deleteFromPaymentCollection(filter: {customerId: {eq: 1}}, atMost: 1) { affectedCount } }`,
		`{"data": null, "errors": [{"message": "delete impacts too many records"}]}`)
	d.expect(`mutation { deleteFromPaymentCollection(filter: {id: {eq: 4}}) { affectedCount records { id } } }`,
		`{"data": {"deleteFromPaymentCollection": {"records": [{"id": 4}], "affectedCount": 1}}}`)
	if got := d.scalar(`select count(*) from payment`); got != "3" {
		t.Errorf("payment rows after the failed and the good delete: %s", got)
	}
	// A row outside every partition is Postgres' error, and nothing is written.
	if got := d.query(`mutation { insertIntoPaymentCollection(objects: [{id: 9, paidOn: "2030-01-01", customerId: 1, amount: "1"}]) { affectedCount } }`); !strings.Contains(got, `"errors"`) || !strings.Contains(got, "no partition of relation") {
		t.Errorf("insert outside the partitions: %s", got)
	}
}
