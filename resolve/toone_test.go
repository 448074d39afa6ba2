package resolve

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/pgreflect/pgreflect/gqlschema"
)

// toOneFixture has blogs with an owner twice: as tables, whose foreign key ends at a primary key (a page joins
// the owner), and as views whose relationship is a directive (nothing says the owner is unique: read by a
// subquery per row). Owners repeat, some blogs have none, names repeat and some are NULL.
const toOneFixture = `
create table account(id int primary key, email text, referrer_id int references account(id));
create table blog(id int primary key, owner_id int references account(id), name text);
create view account_v as select * from account;
comment on view account_v is e'@graphql({"primary_key_columns": ["id"], "foreign_keys": [{"local_columns": ["referrer_id"],
  "foreign_schema": "public", "foreign_table": "account_v", "foreign_columns": ["id"]}]})';
create view blog_v as select * from blog;
comment on view blog_v is e'@graphql({"primary_key_columns": ["id"], "foreign_keys": [{"local_columns": ["owner_id"],
  "foreign_schema": "public", "foreign_table": "account_v", "foreign_columns": ["id"]}]})';
insert into account select i, 'user' || i || '@x.com', nullif(i / 2, 0) from generate_series(1, 6) i;
insert into blog select i, case when i % 7 = 0 then null else i % 5 + 1 end,
  case when i % 4 = 0 then null else 'blog ' || i % 9 end from generate_series(1, 40) i;
-- one-to-one from the other side: at a primary key (joined), at a deferrable unique key (which may hold
-- duplicates until commit: read per row)
create table profile(account_id int primary key references account(id), bio text);
create table address(id int primary key, account_id int references account(id), city text,
  constraint address_account_key unique (account_id) deferrable);
insert into profile values (1, 'one'), (2, 'two');
-- and at a unique index left invalid by a failed CREATE INDEX CONCURRENTLY (TestToOneJoinedOnlyAtAnEnforcedKey
-- makes it), which may hold duplicates: read per row
create table badge(id int primary key, account_id int references account(id));
insert into badge values (1, 1), (2, 1), (3, 2);
create function label(blog) returns text language sql stable as $$ select $1.name || '!' $$;
insert into address values (1, 2, 'Oslo');
grant select on all tables in schema public to service_role, anon;
alter table account enable row level security;
create policy all_but_3 on account for select using (id <> 3);
`

// A to-one record joined to its page answers what a subquery per row answers: pages forward and backward, after
// an offset and a cursor over NULLs, nested in another page, the same relationship twice, no record, records
// joined to records three deep; and no more than three records are joined in one join problem (the others are
// subqueries, which cost less to plan).
func TestToOneJoinedToThePageAnswersAsASubqueryDoes(t *testing.T) {
	d := newTestDB(t, toOneFixture)
	schema := d.schemaOf("service_role", gqlschema.Options{})
	answers := ""
	cursor := base64.StdEncoding.EncodeToString([]byte(`["blog 3", 12]`))
	for _, q := range []string{
		`{ BLOG(first: 8, offset: 3, orderBy: [{name: DescNullsLast}]) { edges { cursor node { id name owner: OWNER { id email } } }
			pageInfo { startCursor endCursor hasNextPage hasPreviousPage } } }`,
		`{ BLOG(last: 6, before: "` + cursor + `", orderBy: [{name: AscNullsFirst}]) { edges { node { owner: OWNER { email } id } }
			pageInfo { hasNextPage hasPreviousPage } } }`,
		`{ BLOG(first: 5, after: "` + cursor + `", orderBy: [{name: AscNullsLast}]) { edges { node { id owner: OWNER { id } } } } }`,
		`{ ACCOUNT(orderBy: [{id: DescNullsLast}]) { edges { node { id BLOG(first: 3) { edges { node { id owner: OWNER { email } } } } } } } }`,
		`{ BLOG(filter: {id: {lt: 16}}) { edges { node { a: OWNER { email } id b: OWNER { id } } } } }`,
		`{ BLOG(first: 12) { edges { node { id owner: OWNER { id referrer: OWNER { email referrer: OWNER { id } } } } } } }`,
		`{ BLOG(first: 9) { edges { node { a: OWNER { id } b: OWNER { email } c: OWNER { id referrer: OWNER { id } } d: OWNER { id } } } } }`,
	} {
		tables := strings.NewReplacer("BLOG", "c: blogCollection", "ACCOUNT", "c: accountCollection", "OWNER", "account").Replace(q)
		views := strings.NewReplacer("BLOG", "c: blog_vCollection", "ACCOUNT", "c: account_vCollection", "OWNER", "account_v").Replace(q)
		if sql := compiledSQL(t, schema, tables); strings.Count(sql, "left join lateral") != min(strings.Count(q, "OWNER"), 3) {
			t.Errorf("%s: not every record the foreign keys lead to is joined, or more than three:\n%s", tables, sql)
		}
		if sql := compiledSQL(t, schema, views); strings.Contains(sql, "left join lateral") {
			t.Errorf("%s: the directive's owner, not known to be unique, is joined to the page:\n%s", views, sql)
		}
		joined, perRow := d.query(tables), d.query(views)
		if joined != perRow {
			t.Errorf("%s\n joined: %s\nper row: %s", q, joined, perRow)
		}
		answers += joined
	}
	if !strings.Contains(answers, `"owner": null`) || !strings.Contains(answers, `"owner": {"id": 1`) {
		t.Errorf("the answers lack a blog without an owner or one with: %s", answers)
	}
}

// Row level security decides what a joined to-one record shows, as it does for a subquery: an owner the
// policy hides is null.
func TestToOneJoinedToThePageUnderRLS(t *testing.T) {
	d := newTestDB(t, toOneFixture)
	got := d.as("anon", nil, `{ blogCollection(filter: {id: {in: [2, 3, 7]}}) { edges { node { id owner: account { id } } } } }`, "")
	want := `{"data": {"blogCollection": {"edges": [{"node": {"id": 2, "owner": null}}, {"node": {"id": 3, "owner": {"id": 4}}}, ` +
		`{"node": {"id": 7, "owner": null}}]}}}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// A to-one record is joined only where a key Postgres enforces says it is one: a primary key or a unique key
// that is neither deferrable nor invalid, on either side of the foreign key; and not beside a computed field, which takes the
// table's row where a joined page has a row of its own.
func TestToOneJoinedOnlyAtAnEnforcedKey(t *testing.T) {
	d := newTestDB(t, toOneFixture)
	if _, err := d.conn.Exec(context.Background(), "create unique index concurrently badge_account_key on badge(account_id)"); err == nil {
		t.Fatal("the unique index on duplicates was built")
	}
	d.engine.Invalidate()
	schema := d.schemaOf("service_role", gqlschema.Options{})
	for _, c := range []struct {
		query, want string
		joined      bool
	}{
		{`{ accountCollection(first: 2) { edges { node { id profile { bio } } } } }`,
			`{"data": {"accountCollection": {"edges": [{"node": {"id": 1, "profile": {"bio": "one"}}}, {"node": {"id": 2, "profile": {"bio": "two"}}}]}}}`,
			true},
		{`{ accountCollection(first: 2) { edges { node { id address { city } } } } }`,
			`{"data": {"accountCollection": {"edges": [{"node": {"id": 1, "address": null}}, {"node": {"id": 2, "address": {"city": "Oslo"}}}]}}}`,
			false},
		{`{ accountCollection(first: 2) { edges { node { id badge { id } } } } }`,
			`{"data": null, "errors": [{"message": "more than one row returned by a subquery used as an expression"}]}`,
			false},
		{`{ blogCollection(first: 2) { edges { node { id label account { id } } } } }`,
			`{"data": {"blogCollection": {"edges": [{"node": {"id": 1, "label": "blog 1!", "account": {"id": 2}}}, {"node": {"id": 2, "label": "blog 2!", "account": {"id": 3}}}]}}}`,
			false},
	} {
		if got := strings.Contains(compiledSQL(t, schema, c.query), "left join lateral"); got != c.joined {
			t.Errorf("%s: joined %v, want %v", c.query, got, c.joined)
		}
		d.expect(c.query, c.want)
	}
}

// Records are joined only where statements are prepared and their plans reused: in the unnamed mode (behind a
// transaction pooler) every execution is planned, and a join costs more to plan than a subquery per row.
func TestToOneJoinedOnlyWherePrepared(t *testing.T) {
	d := newTestDB(t, toOneFixture)
	session := Session{Role: "service_role", Claims: map[string]any{"role": "service_role"}, SearchPath: []string{"public"}}
	query := `{ blogCollection(first: 3) { edges { node { id account { id } } } } }`
	want := `{"data": {"blogCollection": {"edges": [{"node": {"id": 1, "account": {"id": 2}}}, {"node": {"id": 2, "account": {"id": 3}}}, ` +
		`{"node": {"id": 3, "account": {"id": 4}}}]}}}`
	for _, mode := range []StatementMode{StatementsPrepared, StatementsUnnamed} {
		conn, counter := countedConn(t, d)
		if got := string(NewEngine(Options{StatementMode: mode}).ExecuteAs(context.Background(), conn, session, Request{Query: query})); got != want {
			t.Errorf("%s mode: got %s, want %s", mode, got, want)
		}
		if joined := strings.Contains(counter.sentText(), "left join lateral"); joined != (mode == StatementsPrepared) {
			t.Errorf("%s mode: a record joined: %v", mode, joined)
		}
	}
}
