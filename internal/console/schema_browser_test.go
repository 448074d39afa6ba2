package console_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/internal/console"
	"github.com/pgreflect/pgreflect/internal/devtools/browsertest"
	"github.com/pgreflect/pgreflect/internal/schemaview"
	"github.com/pgreflect/pgreflect/internal/stacktest"
	"github.com/pgreflect/pgreflect/pgtest"
)

// schemaPagesSchema has what each Schema page shows: a table under RLS with policies and a column hidden from
// authenticated that a policy reads, a table open to anon without RLS, a SECURITY DEFINER function in anon's
// API, an enum lint flags, and a grant that makes anon's schema differ from authenticated's.
const schemaPagesSchema = `
create table public.notes (id serial primary key, owner uuid not null default auth.uid(), body text, secret text);
alter table public.notes enable row level security;
create policy "own notes" on public.notes for select to authenticated using (owner = (select auth.uid()));
create policy "write own" on public.notes for insert to authenticated with check (secret is null);
revoke select on public.notes from authenticated;
grant select (id, owner, body) on public.notes to authenticated;
create table public.guestbook (id serial primary key, message text);
create function public.reset_guestbook() returns int language sql volatile security definer
  as 'delete from public.guestbook returning 1';
create type public.rating as enum ('PG-13', 'R');
create table public.film (id serial primary key, rating public.rating);
revoke all on public.film from anon;
`

// The console's Schema pages in a real browser: Access with its flags, GraphQL per role with links back to
// Access, Lint with the fix, Drift between two roles; a screenshot of each.
func TestBrowserSchemaPages(t *testing.T) {
	chromium := browsertest.Find(t)
	dbURL := pgtest.NewDB(t)
	pool, err := pgxpool.New(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	view := schemaview.New(schemaview.Options{Pool: pool, SearchPath: []string{"public"}})
	s := stacktest.New(t, stacktest.Options{DatabaseURL: dbURL, Schema: schemaPagesSchema,
		Console: func(anon string) http.Handler {
			return console.Handler(console.Options{AnonKey: anon, ProjectRef: stacktest.ProjectRef,
				ManagementToken: stacktest.ManagementToken, Schema: view})
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := browsertest.Start(t, chromium)
	shots := browsertest.ScreenshotDir(t)
	text := func(tb *browsertest.Tab, selector string) string {
		return tb.EvalString(fmt.Sprintf(`(document.querySelector(%q) || {innerText: ''}).innerText`, selector))
	}

	t.Run("access shows policies, grants, GraphQL per role and the flags", func(t *testing.T) {
		tb := b.NewTab(ctx, t)
		tb.Navigate(s.URL + "/console/#schema/access")
		tb.WaitFor(`document.getElementById('page-schema-access').dataset.loaded === 'true'`, 20*time.Second)
		notes := text(tb, `[data-relation="public.notes"]`)
		for _, want := range []string{"table public.notes", "RLS on", "own notes", "SELECT", "(owner = ( SELECT auth.uid() AS uid))",
			`policy "write own" reads column secret, which authenticated may not select`, "notesCollection", "insertIntonotesCollection",
			"service_role (bypasses RLS)"} {
			if !strings.Contains(notes, want) {
				t.Errorf("notes' card lacks %q:\n%s", want, notes)
			}
		}
		// authenticated may write secret (the table's INSERT and UPDATE) but not read it
		if row := text(tb, `[data-relation="public.notes"] .columns tbody tr:nth-child(4)`); row !=
			"secret\ttext\tselect insert update → secret\tinsert update\tselect insert update → secret" {
			t.Errorf("secret's row: %q", row)
		}
		if g := text(tb, `[data-relation="public.guestbook"]`); !strings.Contains(g, "RLS off") ||
			!strings.Contains(g, "error: anon (anyone with the anon key) may read, insert, update, delete every row") {
			t.Errorf("guestbook's card: %s", g)
		}
		if f := text(tb, `[data-relation="public.film"] tr[data-role="anon"]`); !strings.Contains(f, "none: no column the role may select") {
			t.Errorf("film for anon: %q", f)
		}
		if fn := text(tb, `tr[data-function="public.reset_guestbook"]`); !strings.Contains(fn, "SECURITY DEFINER") ||
			!strings.Contains(fn, "anon: Mutation.reset_guestbook") || !strings.Contains(fn, "warning: SECURITY DEFINER and in anon's API") {
			t.Errorf("reset_guestbook's row: %q", fn)
		}
		tb.Screenshot(filepath.Join(shots, "console-schema-access.png"))
		tb.Eval(`document.getElementById('schema-access-flagged').click()`, nil)
		if got := tb.EvalString(`Array.from(document.querySelectorAll('.relation')).map(e => e.dataset.relation).join(',')`); got != "public.guestbook,public.notes" {
			t.Errorf("only flagged: %q", got)
		}
	})

	t.Run("graphql shows each role's SDL, searchable, linked to its table", func(t *testing.T) {
		tb := b.NewTab(ctx, t)
		tb.Navigate(s.URL + "/console/#schema/graphql")
		tb.WaitFor(`document.getElementById('page-schema-graphql').dataset.loaded === 'anon'`, 20*time.Second)
		if text(tb, `[data-type="film"]`) != "" {
			t.Error("anon's schema has film")
		}
		tb.Eval(`(s => { s.value = 'authenticated'; s.dispatchEvent(new Event('change')); })(document.getElementById('schema-graphql-role'))`, nil)
		tb.WaitFor(`document.getElementById('page-schema-graphql').dataset.loaded === 'authenticated'`, 20*time.Second)
		tb.Eval(`(s => { s.value = 'notes'; s.dispatchEvent(new Event('input')); })(document.getElementById('schema-graphql-search'))`, nil)
		notes := text(tb, `[data-type="notes"]`)
		if !strings.Contains(notes, "from table public.notes") || !strings.Contains(notes, "type notes implements Node") || strings.Contains(notes, "secret") {
			t.Errorf("authenticated's notes: %s", notes)
		}
		if text(tb, `[data-type="film"]`) != "" {
			t.Error("the search for notes shows film")
		}
		tb.Screenshot(filepath.Join(shots, "console-schema-graphql.png"))
		clickInView(tb, `[data-type="notes"] .sdl-source a`)
		tb.WaitFor(`!document.getElementById('page-schema-access').hidden && !!document.querySelector('.relation.target[data-relation="public.notes"]')`, 20*time.Second)
		// a root field's function links to its row
		tb.Eval(`history.back()`, nil)
		tb.WaitFor(`!document.getElementById('page-schema-graphql').hidden`, 20*time.Second)
		if m := text(tb, `[data-type="Mutation"] .sdl-source`); !strings.Contains(m, "reset_guestbook: function public.reset_guestbook") {
			t.Errorf("Mutation's sources: %q", m)
		}
		clickInView(tb, `[data-type="Mutation"] .sdl-source a`)
		tb.WaitFor(`!!document.querySelector('tr.target[data-function="public.reset_guestbook"]')`, 20*time.Second)
	})

	t.Run("lint lists the findings with their fix", func(t *testing.T) {
		tb := b.NewTab(ctx, t)
		tb.Navigate(s.URL + "/console/#schema/lint")
		tb.WaitFor(`document.getElementById('page-schema-lint').dataset.loaded === 'true'`, 20*time.Second)
		f := text(tb, `.finding[data-rule="enum-label"]`)
		if !strings.Contains(f, "type public.rating") || !strings.Contains(f, `'@graphql({"mappings":{"PG-13":"PG_13"}})'`) {
			t.Errorf("enum finding: %s", f)
		}
		if got := text(tb, `#schema-lint-status`); got != "1 errors, 0 warnings." {
			t.Errorf("status %q", got)
		}
		tb.Screenshot(filepath.Join(shots, "console-schema-lint.png"))
	})

	t.Run("drift compares two roles with the database reasons", func(t *testing.T) {
		tb := b.NewTab(ctx, t)
		tb.Navigate(s.URL + "/console/#schema/drift")
		tb.WaitFor(`!!document.getElementById('page-schema-drift').dataset.loaded && !document.getElementById('schema-drift-table').hidden`, 20*time.Second)
		rows := text(tb, `#schema-drift-body`)
		for _, want := range []string{"Type 'film' was added", "table public.film now exposed", "Field 'secret' was removed from object type 'notes'",
			"SELECT on column public.notes.secret revoked from authenticated"} {
			if !strings.Contains(rows, want) {
				t.Errorf("drift anon -> authenticated lacks %q", want)
			}
		}
		tb.Screenshot(filepath.Join(shots, "console-schema-drift.png"))
		tb.Click(`#schema-drift-snapshots`)
		tb.WaitFor(`document.getElementById('schema-drift-status').textContent.includes('no snapshot directory')`, 20*time.Second)
	})
	b.CheckNoPageErrors(t, "status of 404")
}
