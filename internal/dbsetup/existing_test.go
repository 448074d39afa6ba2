package dbsetup

import (
	"context"
	"slices"
	"testing"

	"github.com/pgreflect/pgreflect/pgtest"
)

// Issue 11: a PostgREST database whose auth.uid() returns an integer made Apply fail with "cannot change return
// type of existing function", and serve then refused to start. Apply keeps the database's own helpers, and the
// policies that call them, as they are.
func TestExistingHelpersAreKept(t *testing.T) {
	ctx := context.Background()
	conn := connect(t, pgtest.NewDB(t))
	if _, err := conn.Exec(ctx, `
create schema auth;
create function auth.uid() returns int language sql stable
  as $$ select nullif(current_setting('request.jwt.claim.user_id', true), '')::int $$;
comment on function auth.uid() is 'ours';
create function auth.role() returns text language sql stable as $$ select 'always-this' $$;
create table note(id int primary key, owner int not null, body text);
insert into note values (1, 7, 'seven'), (2, 8, 'eight');
alter table note enable row level security;
do $$ begin
  if not exists (select from pg_roles where rolname = 'authenticated') then create role authenticated nologin; end if;
end $$;
grant usage on schema auth to authenticated;
grant select on note to authenticated;
create policy own_notes on note using (owner = auth.uid());`); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second Apply finds everything in place
		if err := Apply(ctx, conn); err != nil {
			t.Fatalf("Apply on a database with its own auth.uid(): %v", err)
		}
	}
	foreign, err := ForeignHelpers(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"auth.uid() returns integer"}; !slices.Equal(foreign, want) {
		t.Errorf("ForeignHelpers = %q, want %q", foreign, want)
	}
	var uidResult, uidComment, role, email string
	if err := conn.QueryRow(ctx, `
select format_type(p.prorettype, null), obj_description(p.oid, 'pg_proc'), auth.role(),
       (select pg_get_function_result(e.oid) from pg_proc e where e.oid = 'auth.email()'::regprocedure)
  from pg_proc p where p.oid = 'auth.uid()'::regprocedure`).Scan(&uidResult, &uidComment, &role, &email); err != nil {
		t.Fatal(err)
	}
	if uidResult != "integer" || uidComment != "ours" || role != "always-this" {
		t.Errorf("auth.uid() returns %s with comment %q, auth.role() = %q: the database's own helpers were replaced", uidResult, uidComment, role)
	}
	if email != "text" {
		t.Errorf("auth.email() returns %q: the missing helper was not installed", email)
	}
	ok, err := Installed(ctx, conn)
	if err != nil || !ok {
		t.Errorf("Installed = %v, %v; want true (serve starts on this database)", ok, err)
	}

	// The policy still calls the integer auth.uid().
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	var bodies []string
	if _, err := tx.Exec(ctx, `select set_config('request.jwt.claim.user_id', '8', true)`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `set local role authenticated`); err != nil {
		t.Fatal(err)
	}
	rows, err := tx.Query(ctx, `select body from note order by id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var b string
		if err := rows.Scan(&b); err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, b)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(bodies, []string{"eight"}) {
		t.Errorf("notes under the policy: %q, want [eight]", bodies)
	}
}

// Roles belong to the whole cluster: a login role that exists is another project's, and its password is not
// reset (issue 11: a second project on one cluster reset authenticator's password and cut the first one off).
func TestCreateLoginRoleNeverResetsAPassword(t *testing.T) {
	ctx := context.Background()
	conn := applied(t)
	password := func(name string) string {
		t.Helper()
		var p string
		if err := conn.QueryRow(ctx, `select coalesce(rolpassword, '') from pg_authid where rolname = $1`, name).Scan(&p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if _, err := conn.Exec(ctx, `create role theirs_login login password 'theirs'`); err != nil {
		t.Fatal(err)
	}
	before := password("theirs_login")
	created, err := CreateLoginRole(ctx, conn, "theirs_login", "mine")
	if err != nil || created {
		t.Fatalf("CreateLoginRole of an existing role = %v, %v; want false, nil", created, err)
	}
	if password("theirs_login") != before {
		t.Error("the existing role's password changed")
	}

	created, err = CreateLoginRole(ctx, conn, "project_login", "it's mine")
	if err != nil || !created {
		t.Fatalf("CreateLoginRole of a new role = %v, %v; want true, nil", created, err)
	}
	for role, want := range map[string]bool{"project_login": true, "theirs_login": true, "anon": false, "no_such_role": false} {
		if has, err := HasPassword(ctx, conn, role); err != nil || has != want {
			t.Errorf("HasPassword(%s) = %v, %v; want %v", role, has, err, want)
		}
	}
	first := password("project_login")
	if first == "" {
		t.Fatal("the new login role has no password")
	}
	var login, inherit bool
	var granted int
	if err := conn.QueryRow(ctx, `
select rolcanlogin, rolinherit,
       (select count(*) from pg_auth_members m join pg_roles g on g.oid = m.roleid
         where m.member = r.oid and g.rolname in ('anon', 'authenticated', 'service_role'))
  from pg_roles r where rolname = 'project_login'`).Scan(&login, &inherit, &granted); err != nil {
		t.Fatal(err)
	}
	if !login || inherit || granted != 3 {
		t.Errorf("project_login: login %v, inherit %v, granted %d API roles; want true, false, 3", login, inherit, granted)
	}
	if created, err := CreateLoginRole(ctx, conn, "project_login", "another"); err != nil || created {
		t.Fatalf("second CreateLoginRole = %v, %v; want false, nil", created, err)
	}
	if password("project_login") != first {
		t.Error("a second CreateLoginRole reset the password")
	}
	if err := SetPassword(ctx, conn, "project_login", "another"); err != nil {
		t.Fatal(err)
	}
	if password("project_login") == first {
		t.Error("SetPassword did not change the password")
	}
}
