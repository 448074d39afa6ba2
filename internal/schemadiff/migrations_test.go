package schemadiff_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/internal/schemadiff"
	"github.com/pgreflect/pgreflect/internal/sdl"
	"github.com/pgreflect/pgreflect/pgtest"
	"github.com/pgreflect/pgreflect/resolve"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

const baseSchema = `
create type public.status as enum ('draft', 'published', 'archived');
create table public.account (id serial primary key, email text, name text not null, bio text);
comment on column public.account.name is e'@graphql({"description": "Shown on posts"})';
create table public.blog (id serial primary key, owner_id int references public.account (id), title text,
	status public.status);
grant all on all tables in schema public to anon, authenticated, service_role;
grant all on all sequences in schema public to anon, authenticated, service_role;`

// newDB is a database set up for pgreflect with the base schema; conn is a superuser connection to it.
func newDB(t *testing.T) *pgx.Conn {
	t.Helper()
	_, conn := testenv.SetupDB(t, baseSchema)
	return conn
}

func load(t *testing.T, conn *pgx.Conn, role string) schemadiff.Side {
	t.Helper()
	side, err := schemadiff.LoadDatabase(context.Background(), conn, role, []string{"public"}, gqlschema.NewestVersion)
	if err != nil {
		t.Fatal(err)
	}
	return side
}

// Each migration of the issue, run on a real database between two loads of its schema: the change it makes
// to the role's API, its level, the exit status of a CI check, and the database object the reason names.
func TestMigrationsClassified(t *testing.T) {
	cases := []struct {
		name, migration string
		role            string
		level           schemadiff.Level
		path, reason    string
		exit            int
	}{
		{"drop column", `alter table account drop column email`, "authenticated",
			schemadiff.Breaking, "account.email", "column public.account.email dropped", 1},
		{"rename column", `alter table account rename column bio to about`, "authenticated",
			schemadiff.Breaking, "account.bio", "column public.account.bio renamed to about", 1},
		// Issue 22: the new field of a renamed column was reported as "column ... added".
		{"rename column: the new field", `alter table account rename column bio to about`, "authenticated",
			schemadiff.Safe, "account.about", "column public.account.about renamed from bio", 1},
		{"rename column: the new input field", `alter table account rename column bio to about`, "authenticated",
			schemadiff.Safe, "accountInsertInput.about", "column public.account.about renamed from bio", 1},
		{"change type", `alter table account alter column bio type integer using length(bio)`, "authenticated",
			schemadiff.Breaking, "account.bio", "column public.account.bio changed type from text to integer", 1},
		{"add not null", `alter table blog alter column title set not null`, "authenticated",
			schemadiff.Safe, "blog.title", "NOT NULL added to column public.blog.title", 0},
		{"add not null: inserts", `alter table blog alter column title set not null`, "authenticated",
			schemadiff.Dangerous, "blogInsertInput.title", "NOT NULL added to column public.blog.title without a default", 0},
		{"remove enum value", `alter type status rename to status_old;
			create type status as enum ('draft', 'published');
			alter table blog alter column status type status using status::text::status;
			drop type status_old`, "authenticated",
			schemadiff.Breaking, "status.archived", "label 'archived' removed from enum public.status", 1},
		{"revoke update from one role", `revoke update on blog from authenticated`, "authenticated",
			schemadiff.Breaking, "Mutation.updateblogCollection", "UPDATE revoked from authenticated on public.blog", 1},
		{"drop foreign key", `alter table blog drop constraint blog_owner_id_fkey`, "authenticated",
			schemadiff.Breaking, "blog.account", "foreign key blog_owner_id_fkey on public.blog dropped", 1},
		{"new table", `create table tag (id serial primary key, label text);
			grant all on tag to anon, authenticated, service_role`, "authenticated",
			schemadiff.Safe, "tag", "table public.tag created", 0},
		{"new nullable column", `alter table account add column website text`, "authenticated",
			schemadiff.Safe, "account.website", "column public.account.website added", 0},
		{"comment directive renames a type", `comment on table blog is e'@graphql({"name": "Post"})'`, "authenticated",
			schemadiff.Breaking, "blog", "comment directive on table public.blog renames type blog to Post", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conn := newDB(t)
			before := load(t, conn, tc.role)
			if _, err := conn.Exec(context.Background(), tc.migration); err != nil {
				t.Fatal(err)
			}
			changes := schemadiff.Compare(before, load(t, conn, tc.role))
			var report bytes.Buffer
			if err := schemadiff.Write(&report, "text", changes); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s", report.Bytes())
			var found *schemadiff.Change
			for i, c := range changes {
				if c.Path == tc.path {
					found = &changes[i]
					break
				}
			}
			if found == nil {
				t.Fatalf("no change at %s among %+v", tc.path, changes)
			}
			if found.Level != tc.level || found.Reason != tc.reason {
				t.Errorf("%s: got %s %q, want %s %q", tc.path, found.Level, found.Reason, tc.level, tc.reason)
			}
			if got := schemadiff.ExitStatus(changes); got != tc.exit {
				t.Errorf("exit status %d, want %d; changes %+v", got, tc.exit, changes)
			}
		})
	}
}

// A foreign key added NOT VALID gives a nullable to-one field; validating it makes the field non-null, and the
// reason names the key rather than its columns, which did not change.
func TestValidatingAForeignKeyExplained(t *testing.T) {
	ctx := context.Background()
	conn := newDB(t)
	if _, err := conn.Exec(ctx, `alter table blog alter column owner_id set not null;
		alter table blog drop constraint blog_owner_id_fkey;
		alter table blog add constraint blog_owner_id_fkey foreign key (owner_id) references account (id) not valid`); err != nil {
		t.Fatal(err)
	}
	before := load(t, conn, "authenticated")
	if _, err := conn.Exec(ctx, `alter table blog validate constraint blog_owner_id_fkey`); err != nil {
		t.Fatal(err)
	}
	after := load(t, conn, "authenticated")
	for _, tc := range []struct {
		from, to schemadiff.Side
		level    schemadiff.Level
		reason   string
	}{
		{before, after, schemadiff.Safe, "foreign key blog_owner_id_fkey on public.blog validated"},
		{after, before, schemadiff.Breaking,
			"foreign key blog_owner_id_fkey on public.blog no longer checks existing rows (NOT VALID or NOT ENFORCED)"},
	} {
		changes := schemadiff.Compare(tc.from, tc.to)
		if len(changes) != 1 || changes[0].Path != "blog.account" || changes[0].Level != tc.level || changes[0].Reason != tc.reason {
			t.Errorf("changes %+v, want one at blog.account: %s %q", changes, tc.level, tc.reason)
		}
	}
}

// A privilege revoked from one role changes that role's API only.
func TestRevokeChangesOneRoleOnly(t *testing.T) {
	conn := newDB(t)
	anon, service := load(t, conn, "anon"), load(t, conn, "service_role")
	if _, err := conn.Exec(context.Background(), `revoke update on blog from authenticated`); err != nil {
		t.Fatal(err)
	}
	if changes := schemadiff.Compare(anon, load(t, conn, "anon")); len(changes) != 0 {
		t.Errorf("anon: %+v", changes)
	}
	if changes := schemadiff.Compare(service, load(t, conn, "service_role")); len(changes) != 0 {
		t.Errorf("service_role: %+v", changes)
	}
}

// The SDL is a snapshot: the same bytes on every run and after the catalog is reloaded, and the database
// compared with its own snapshot (SDL or introspection JSON) shows no change.
func TestSnapshotStable(t *testing.T) {
	ctx := context.Background()
	conn := newDB(t)
	first := load(t, conn, "authenticated")
	a, err := sdl.Generate(ctx, first.Generated)
	if err != nil {
		t.Fatal(err)
	}
	b, err := sdl.Generate(ctx, first.Generated)
	if err != nil {
		t.Fatal(err)
	}
	// A DDL that changes nothing the API shows makes the server reload its catalog.
	if _, err := conn.Exec(ctx, `comment on table blog is 'reloaded'`); err != nil {
		t.Fatal(err)
	}
	reloaded := load(t, conn, "authenticated")
	c, err := sdl.Generate(ctx, reloaded.Generated)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) || !bytes.Equal(a, c) {
		t.Fatalf("SDL differs between runs or after a reload:\n%s\n---\n%s\n---\n%s", a, b, c)
	}
	for _, want := range []string{"type account implements Node {", `"""` + "\n  Shown on posts\n  " + `"""`, "enum status {", "updateblogCollection("} {
		if !strings.Contains(string(a), want) {
			t.Errorf("SDL lacks %q:\n%s", want, a)
		}
	}
	snapshot, err := sdl.Parse("authenticated.graphql", a)
	if err != nil {
		t.Fatal(err)
	}
	if changes := schemadiff.Compare(schemadiff.Side{Schema: snapshot}, reloaded); len(changes) != 0 {
		t.Errorf("database against its own SDL snapshot: %+v", changes)
	}
	body, err := resolve.Introspect(ctx, reloaded.Generated)
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := sdl.Load("authenticated.json", body)
	if err != nil {
		t.Fatal(err)
	}
	if changes := schemadiff.Compare(schemadiff.Side{Schema: fromJSON}, reloaded); len(changes) != 0 {
		t.Errorf("database against its own introspection JSON: %+v", changes)
	}
	if !bytes.Equal(sdl.Print(fromJSON), a) {
		t.Errorf("SDL printed from the introspection JSON differs")
	}
}

// Issue 22: a snapshot checked against the database (check) named the database object of the object type's
// field only, leaving the input fields of the same column, and every addition, without one.
func TestCheckNamesTheColumnOfEveryField(t *testing.T) {
	conn := newDB(t)
	before := load(t, conn, "authenticated")
	snapshot, err := sdl.Parse("authenticated.graphql", sdl.Print(before.Schema))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(context.Background(), `alter table account drop column email;
		alter table account rename column bio to about`); err != nil {
		t.Fatal(err)
	}
	changes := schemadiff.Compare(schemadiff.Side{Schema: snapshot}, load(t, conn, "authenticated"))
	reasons := map[string]string{}
	for _, c := range changes {
		reasons[c.Path] = c.Reason
	}
	for _, typeName := range []string{"account", "accountFilter", "accountInsertInput", "accountOrderBy", "accountUpdateInput"} {
		for path, want := range map[string]string{
			typeName + ".email": "no column public.account.email in the database (dropped or renamed)",
			typeName + ".bio":   "no column public.account.bio in the database (dropped or renamed)",
			typeName + ".about": "column public.account.about",
		} {
			got, ok := reasons[path]
			if !ok {
				t.Errorf("no change at %s among %v", path, reasons)
			} else if got != want {
				t.Errorf("%s: reason %q, want %q", path, got, want)
			}
		}
	}
	var markdown bytes.Buffer
	if err := schemadiff.Write(&markdown, "markdown", changes); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(markdown.String(), "\n") {
		if strings.HasPrefix(line, "| BREAKING") || strings.HasPrefix(line, "| SAFE") {
			if strings.HasSuffix(line, "|  |") {
				t.Errorf("markdown row without its database object: %s", line)
			}
		}
	}
}
