package resolve

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/reflect"
)

// Roles share one catalog read per schema generation, and each sees it through its own privileges: a role
// whose schema is built after another's uses the same read (a table created since, with no change announced,
// is not in it), a grant to one role is seen by that role only, column grants and revoked EXECUTE and USAGE
// apply per role, and after a change every role reads the new catalog.
func TestRolesShareOneCatalogRead(t *testing.T) {
	d := newTestDB(t, blogFixture+`
		create schema private;
		grant usage on schema private to service_role;
		create table private.secret (id int primary key);
		grant select on private.secret to anon, authenticated, service_role;
		create function blog_rank(b blog) returns int stable language sql as 'select 1';
		revoke execute on function blog_rank(blog) from public, anon;
		grant execute on function blog_rank(blog) to authenticated;`)
	ask := func(role, query string) string {
		t.Helper()
		return d.as(role, nil, query, "")
	}
	const blogs = `{ blogCollection(first: 1) { edges { node { id } } } }`
	if got := ask("anon", blogs); !strings.Contains(got, `"id": 1`) {
		t.Fatalf("anon: %s", got)
	}
	// created without the announcement a watcher would invalidate on: a role loading now uses anon's read
	d.conn.Exec(t.Context(), `create table late (id int primary key); grant select on late to anon, authenticated`)
	const late = `{ lateCollection { edges { node { id } } } }`
	if got := ask("authenticated", late); !strings.Contains(got, `Unknown field`) {
		t.Errorf("authenticated's schema was not built from the catalog read anon's was: %s", got)
	}
	d.exec(`grant select on late to anon`) // now announced (d.exec invalidates)
	for _, role := range []string{"anon", "authenticated"} {
		if got := ask(role, late); got != `{"data": {"lateCollection": {"edges": []}}}` {
			t.Errorf("%s after the change: %s", role, got)
		}
	}

	// a grant to one role, seen by that role only
	d.exec(`create table news (id int primary key, title text, body text); insert into news values (1, 'hi', 'there');
		revoke all on news from anon, authenticated, service_role; grant select on news to authenticated; grant select (id, title) on news to anon`)
	const news = `{ newsCollection { edges { node { id title body } } } }`
	if got := ask("authenticated", news); got != `{"data": {"newsCollection": {"edges": [{"node": {"id": 1, "body": "there", "title": "hi"}}]}}}` {
		t.Errorf("authenticated, granted the table: %s", got)
	}
	if got := ask("anon", news); !strings.Contains(got, `Unknown field`) || !strings.Contains(got, `body`) {
		t.Errorf("anon, granted two columns, asked for a third: %s", got)
	}
	if got := ask("anon", `{ newsCollection { edges { node { id title } } } }`); got != `{"data": {"newsCollection": {"edges": [{"node": {"id": 1, "title": "hi"}}]}}}` {
		t.Errorf("anon, granted two columns: %s", got)
	}
	if got := ask("service_role", news); !strings.Contains(got, `Unknown field`) {
		t.Errorf("service_role, granted nothing on news: %s", got)
	}

	// EXECUTE revoked from anon, granted to authenticated
	const rank = `{ blogCollection(first: 1) { edges { node { blogRank } } } }`
	if got := ask("authenticated", rank); got != `{"data": {"blogCollection": {"edges": [{"node": {"blogRank": 1}}]}}}` {
		t.Errorf("authenticated, who may execute blog_rank: %s", got)
	}
	if got := ask("anon", rank); !strings.Contains(got, `Unknown field`) {
		t.Errorf("anon, who may not execute blog_rank: %s", got)
	}

	// a schema on the search path that only service_role may use, read first by anon (for whom PostgreSQL's
	// current_schemas leaves it out)
	for _, c := range []struct {
		role string
		sees bool
	}{{"anon", false}, {"service_role", true}} {
		s := Session{Role: c.role, Claims: map[string]any{"role": c.role}, SearchPath: []string{"public", "private"}}
		got := string(d.engine.ExecuteAs(t.Context(), d.conn, s, Request{Query: `{ secretCollection { edges { node { id } } } }`}))
		if sees := got == `{"data": {"secretCollection": {"edges": []}}}`; sees != c.sees {
			t.Errorf("%s, USAGE on private %v: %s", c.role, c.sees, got)
		}
	}
}

// A GRANT or REVOKE, announced by dbsetup's event trigger as a change of privileges only, makes every role
// re-read its privileges and keeps the catalog read: the granted role sees the table within a second, a table
// created unannounced meanwhile stays unseen, and the next DDL that is not of relations only brings it.
func TestGrantReloadsPrivilegesOnly(t *testing.T) {
	d := newTestDB(t, `create table t1 (id int primary key);
		revoke all on t1 from anon, authenticated;
		grant select on t1 to anon;`)
	d.watch(d.engine)
	const t1 = `{ t1Collection { edges { node { id } } } }`
	const empty = `{"data": {"t1Collection": {"edges": []}}}`
	eventually := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within a second", what)
			}
		}
	}
	eventually("anon reads t1", func() bool { return d.as("anon", nil, t1, "") == empty })
	if got := d.as("authenticated", nil, t1, ""); !strings.Contains(got, "Unknown field") {
		t.Fatalf("authenticated, granted nothing: %s", got)
	}
	// event triggers do not fire for a session in replica mode: this change is not announced
	if _, err := d.conn.Exec(t.Context(), `set session_replication_role = replica;
		create table late (id int primary key); grant select on late to anon, authenticated;
		reset session_replication_role`); err != nil {
		t.Fatal(err)
	}
	if _, err := d.conn.Exec(t.Context(), `grant select on t1 to authenticated`); err != nil {
		t.Fatal(err)
	}
	eventually("authenticated reads t1 after the GRANT", func() bool { return d.as("authenticated", nil, t1, "") == empty })
	const late = `{ lateCollection { edges { node { id } } } }`
	for _, role := range []string{"anon", "authenticated"} {
		if got := d.as(role, nil, late, ""); !strings.Contains(got, "Unknown field") {
			t.Errorf("%s: a GRANT re-read the catalog: %s", role, got)
		}
	}
	if _, err := d.conn.Exec(t.Context(), `create collation noop from "C"`); err != nil { // not of relations only
		t.Fatal(err)
	}
	eventually("anon reads late after a DDL", func() bool { return d.as("anon", nil, late, "") == `{"data": {"lateCollection": {"edges": []}}}` })
}

// DDL and COMMENT on tables, announced by dbsetup's event trigger with the relations they changed, make the
// next request re-read those relations only, merged into the catalog read before: every role sees the change
// within a second (a new column, a new table and its foreign key from both ends, a comment, a function, a
// dropped table),
// while a change made unannounced to another table meanwhile stays unseen until a change of any kind.
func TestRelationChangesReloadThoseRelationsOnly(t *testing.T) {
	d := newTestDB(t, `create table author (id int primary key, name text);
		create table other (id int primary key);
		insert into author values (1, 'ann');
		comment on schema public is '@graphql({"inflect_names": true})';`)
	d.watch(d.engine)
	roles := []string{"anon", "authenticated"}
	eventually := func(what, query, want string) {
		t.Helper()
		for _, role := range roles {
			deadline := time.Now().Add(time.Second)
			for got := d.as(role, nil, query, ""); got != want; got = d.as(role, nil, query, "") {
				if time.Now().After(deadline) {
					t.Fatalf("%s: %s answered %s, want %s (within a second)", what, role, got, want)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	run := func(sql string) {
		t.Helper()
		if _, err := d.conn.Exec(t.Context(), sql); err != nil {
			t.Fatal(err)
		}
	}
	const others = `{ otherCollection { edges { node { id } } } }`
	eventually("start", others, `{"data": {"otherCollection": {"edges": []}}}`)
	// unannounced (event triggers do not fire in replica mode): only a full re-read would show it
	run(`set session_replication_role = replica; alter table other add column hidden int; reset session_replication_role`)
	const hidden = `{ otherCollection { edges { node { hidden } } } }`

	run(`alter table author add column email text; update author set email = 'ann@x'`)
	eventually("a new column", `{ authorCollection { edges { node { email } } } }`,
		`{"data": {"authorCollection": {"edges": [{"node": {"email": "ann@x"}}]}}}`)
	run(`create table book (id int primary key, author_id int references author (id), title text);
		insert into book values (1, 1, 'one')`)
	eventually("a new table and its foreign key, from both ends",
		`{ authorCollection { edges { node { bookCollection { edges { node { title author { name } } } } } } } }`,
		`{"data": {"authorCollection": {"edges": [{"node": {"bookCollection": {"edges": [{"node": {"title": "one", "author": {"name": "ann"}}}]}}}]}}}`)
	run(`comment on column book.title is '@graphql({"name": "heading"})'`)
	eventually("a column comment", `{ bookCollection { edges { node { heading } } } }`,
		`{"data": {"bookCollection": {"edges": [{"node": {"heading": "one"}}]}}}`)
	for _, role := range roles {
		if got := d.as(role, nil, hidden, ""); !strings.Contains(got, "Unknown field") {
			t.Fatalf("%s: a change of other relations re-read the whole catalog: %s", role, got)
		}
	}
	run(`create function author_initial(a author) returns text stable language sql as 'select left(a.name, 1)'`)
	eventually("a new computed field", `{ authorCollection { edges { node { initial: authorInitial } } } }`,
		`{"data": {"authorCollection": {"edges": [{"node": {"initial": "a"}}]}}}`)
	// a unique index makes a one-to-one relationship; dropped, it is announced by its own oid, and the table it
	// was on is read again (alone)
	run(`create table profile (id int primary key, author_id int references author (id));
		create unique index profile_author on profile (author_id); insert into profile values (7, 1)`)
	eventually("a one-to-one relationship", `{ authorCollection { edges { node { profile { id } } } } }`,
		`{"data": {"authorCollection": {"edges": [{"node": {"profile": {"id": 7}}}]}}}`)
	run(`drop index profile_author`)
	eventually("a dropped unique index", `{ authorCollection { edges { node { profileCollection { edges { node { id } } } } } } }`,
		`{"data": {"authorCollection": {"edges": [{"node": {"profileCollection": {"edges": [{"node": {"id": 7}}]}}}]}}}`)
	for _, role := range roles {
		if got := d.as(role, nil, hidden, ""); !strings.Contains(got, "Unknown field") {
			t.Fatalf("%s: a dropped index re-read the whole catalog: %s", role, got)
		}
	}
	run(`drop table book`)
	// The dropped table's field goes (an answer that stays the same, such as authors', could not tell whether
	// the reload happened yet).
	eventually("a dropped table", `{ bookCollection { edges { node { id } } } }`,
		`{"data": null, "errors": [{"message": "Unknown field \"bookCollection\" on type Query"}]}`)
	eventually("the table that stays", `{ authorCollection { edges { node { id } } } }`,
		`{"data": {"authorCollection": {"edges": [{"node": {"id": 1}}]}}}`)
	run(`create collation noop from "C"`) // not of relations, types, functions: everything is read again
	eventually("a full re-read", hidden, `{"data": {"otherCollection": {"edges": []}}}`)
}

// A request whose schema load took the catalog read before a change and builds after the change is announced
// must not leave that build to the requests that read the new catalog. Roles with equal privileges share one
// build, and a build was found by the privileges alone: in a server, a service_role request that straddled an
// ALTER TABLE left service_role on the old schema until the next change (its query of the new column failed
// for as long as CI waited). The straddling request is played here step by step, for both kinds of change.
func TestABuildFromTheReadBeforeAChangeIsNotReused(t *testing.T) {
	for _, c := range []struct {
		name     string
		announce func(e *Engine, account uint32)
	}{
		{"relations", func(e *Engine, account uint32) { e.InvalidateRelations([]uint32{account}) }},
		{"everything", func(e *Engine, _ uint32) { e.Invalidate() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := newTestDB(t, `create table account (id int primary key)`)
			ctx := t.Context()
			publicOnly := []string{"public"}
			if got := d.query(`{ accountCollection { edges { node { id } } } }`); got != `{"data": {"accountCollection": {"edges": []}}}` {
				t.Fatalf("before the change: %s", got)
			}
			// What the straddling request takes before the change: the catalog read and service_role's privileges.
			before, err := d.engine.catalogs.get(ctx, publicOnly, func(context.Context, []uint32, []uint32) (*reflect.Answer, error) {
				t.Fatal("the catalog was read again: the read before the change should be cached")
				return nil, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			privileges := privilegesAnswer(t, d, "service_role")
			rs, err := d.engine.schemas.Get(ctx, "service_role", publicOnly, func(context.Context) (*roleSchema, error) {
				t.Fatal("service_role's schema is not cached")
				return nil, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if built, err := d.engine.buildFor(ctx, before, "service_role", publicOnly, privileges); err != nil || built != rs.schema {
				t.Fatalf("the privileges answer read here is not the engine's: a build of its own (%v)", err)
			}

			if _, err := d.conn.Exec(ctx, `alter table account add column nickname text`); err != nil {
				t.Fatal(err)
			}
			account, err := strconv.ParseUint(d.scalar(`'account'::regclass::oid`), 10, 32)
			if err != nil {
				t.Fatal(err)
			}
			c.announce(d.engine, uint32(account)) // and the straddling request is not done yet
			var stale *gqlschema.Schema
			if stale, err = d.engine.buildFor(ctx, before, "service_role", publicOnly, privileges); err != nil {
				t.Fatal(err)
			}
			if got := d.query(`{ accountCollection { edges { node { nickname } } } }`); got != `{"data": {"accountCollection": {"edges": []}}}` {
				t.Errorf("the next request after the change: %s", got)
			}
			if rs, err := d.engine.schemas.Get(ctx, "service_role", publicOnly, nil); err != nil || rs.schema == stale {
				t.Errorf("service_role's schema is the one built from the read before the change (%v)", err)
			}
		})
	}
}

// privilegesAnswer is role's answer to the privileges query, as a schema load reads it.
func privilegesAnswer(t *testing.T, d *testDB, role string) []byte {
	t.Helper()
	tx, err := d.conn.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	var answer string
	if _, err := tx.Exec(t.Context(), "select set_config('role', $1, true), set_config('search_path', 'public', true)", role); err != nil {
		t.Fatal(err)
	}
	if err := tx.QueryRow(t.Context(), reflect.PrivilegesQuery).Scan(&answer); err != nil {
		t.Fatal(err)
	}
	return []byte(answer)
}

// A change that the API does not show (DDL, COMMENT and GRANT in a schema off the search path, a partition
// there, a new schema, a collation) is announced and read, but every role keeps its schema: the same build, with
// its compiled requests and introspection answer, as on a Supabase database whose auth, storage and realtime
// schemas change under migrations and daily partitions. A change the API shows builds anew, and the compiled requests of the
// schema it replaced go.
func TestChangesTheAPIDoesNotShowKeepTheSchemas(t *testing.T) {
	d := newTestDB(t, `create table note (id int primary key, body text);
		create schema elsewhere;
		create table elsewhere.log (id int primary key);
		create table elsewhere.messages (id int, at date) partition by range (at);`)
	announced := make(chan struct{}, 16)
	d.watch(signalling{d.engine, announced})
	ctx := t.Context()
	roles := []string{"anon", "authenticated"}
	const notes = `{ noteCollection { edges { node { id body } } } }`
	schemaOf := func(role string) *gqlschema.Schema { t.Helper(); return loadedSchema(t, d.engine, role) }
	// change runs sql and waits until the watcher has passed its announcement on, and the one request each
	// role then sends has loaded its schema again
	change := func(sql string) {
		t.Helper()
		if _, err := d.conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
		select {
		case <-announced:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: not announced", sql)
		}
		for _, role := range roles {
			if got := d.as(role, nil, notes, ""); got != `{"data": {"noteCollection": {"edges": []}}}` {
				t.Fatalf("%s after %s: %s", role, sql, got)
			}
		}
	}
	for len(announced) > 0 {
		<-announced // the invalidation of the watcher's start
	}
	for _, role := range roles {
		d.as(role, nil, notes, "")
		d.as(role, nil, `{ __schema { types { name } } }`, "")
	}
	before := map[string]*gqlschema.Schema{}
	for _, role := range roles {
		before[role] = schemaOf(role)
		if n := keptCompiled(d.engine, before[role]); n < 2 {
			t.Fatalf("%s: %d compiled requests before the changes, want 2 or more", role, n)
		}
	}
	for _, sql := range []string{
		`create table elsewhere.audit (id int primary key)`, // a relation's read
		`alter table elsewhere.log add column line text`,
		`comment on table elsewhere.log is 'lines'`,
		`grant select on elsewhere.log to anon`, // a read of privileges
		`create table elsewhere.messages_2026 partition of elsewhere.messages for values from ('2026-01-01') to ('2027-01-01')`, // its tree's read
		`create schema more`,
		`create collation elsewhere.tidy from "C"`, // a whole read
		`drop table elsewhere.audit`,
	} {
		change(sql)
		for _, role := range roles {
			if got := schemaOf(role); got != before[role] {
				t.Errorf("%s: %s built a new schema", role, sql)
				before[role] = got
			}
			if n := keptCompiled(d.engine, before[role]); n < 2 {
				t.Errorf("%s: %d compiled requests kept after %s, want 2 or more", role, n, sql)
			}
		}
	}

	// one statement each: the announcements of one transaction's statements may come one by one, between the
	// requests that follow
	for _, sql := range []string{
		`alter table note add column title text`,                                              // a relation's read
		`create table parted (id int, at date, primary key (id, at)) partition by range (at)`, // whole reads
		`create table parted_a partition of parted for values from ('2026-01-01') to ('2027-01-01')`,
	} {
		change(sql)
		for _, role := range roles {
			after := schemaOf(role)
			if after == before[role] {
				t.Fatalf("%s: %s built no new schema", role, sql)
			}
			if n := keptCompiled(d.engine, before[role]); n != 0 {
				t.Errorf("%s: %d requests compiled for the schema before %s kept", role, n, sql)
			}
			before[role] = after
		}
	}
	if got := d.as("anon", nil, `{ parted_aCollection { edges { node { id } } } note: noteCollection { edges { node { title } } } }`, ""); got != `{"data": {"note": {"edges": []}, "parted_aCollection": {"edges": []}}}` {
		t.Errorf("after the changes the API shows: %s", got)
	}
}

// After a GRANT or REVOKE, a role whose privileges are as they were takes up the schema built before, and a
// role whose privileges changed gets another; the schema before is kept as long as a role that had it may
// still come back for it, and dropped, with its compiled requests, once no role can.
func TestAGrantKeepsTheSchemasOfTheRolesItLeavesAsTheyWere(t *testing.T) {
	d := newTestDB(t, `create table note (id int primary key); create table other (id int primary key);
		create table more (id int primary key)`)
	ctx := t.Context()
	const notes = `{ noteCollection { edges { node { id } } } }`
	schemaOf := func(role string) *gqlschema.Schema {
		t.Helper()
		d.as(role, nil, notes, "")
		return loadedSchema(t, d.engine, role)
	}
	grant := func(sql string) {
		t.Helper()
		if _, err := d.conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
		d.engine.InvalidatePrivileges()
	}
	shared := schemaOf("anon")
	if schemaOf("authenticated") != shared {
		t.Fatal("anon and authenticated, with equal privileges, do not share a schema")
	}
	// A REVOKE and GRANT of the same leave the privileges as they were, and the table's row of pg_class
	// elsewhere in its heap: the privileges answer is in oid order, not the order of a scan.
	grant(`revoke insert on note from anon; grant insert on note to anon`)
	if schemaOf("anon") != shared {
		t.Fatal("anon's privileges are as they were, and it did not take up its schema")
	}
	grant(`revoke select on note from anon`)
	anon := schemaOf("anon")
	if anon == shared {
		t.Fatal("anon's schema after its REVOKE is the one before")
	}
	if got := schemaOf("authenticated"); got != shared {
		t.Error("authenticated, whose privileges are as they were, did not take up its schema")
	}
	grant(`revoke select on note from authenticated`)
	if schemaOf("anon") != anon {
		t.Error("anon, whose privileges are as they were, did not take up its schema")
	}
	if n := keptCompiled(d.engine, shared); n == 0 {
		t.Fatal("the schema authenticated had lost its compiled requests before authenticated came back")
	}
	if got := schemaOf("authenticated"); got != anon {
		t.Error("authenticated, whose privileges are now anon's, does not share anon's schema")
	}
	// dropped from what Renew carried, with its compiled requests (which Renew keeps for what it carries)
	if n := keptCompiled(d.engine, shared); n != 0 {
		t.Errorf("%d requests compiled for the schema no role has any more are kept", n)
	}
}

// keptCompiled counts the requests e keeps compiled for schema.
func keptCompiled(e *Engine, schema *gqlschema.Schema) (n int) {
	for _, c := range []*compiledCache{e.compiled, e.compiled.large} {
		c.mu.Lock()
		for key := range c.entries {
			if key.schema == schema {
				n++
			}
		}
		c.mu.Unlock()
	}
	return n
}

// loadedSchema is the schema e has loaded for role on the search path public.
func loadedSchema(t *testing.T, e *Engine, role string) *gqlschema.Schema {
	t.Helper()
	rs, err := e.schemas.Get(t.Context(), role, []string{"public"}, func(context.Context) (*roleSchema, error) {
		return nil, errors.New("not loaded")
	})
	if err != nil {
		t.Fatalf("%s: %v", role, err)
	}
	return rs.schema
}
