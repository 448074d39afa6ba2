package lint_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/internal/lint"
	"github.com/pgreflect/pgreflect/internal/schemadiff"
	"github.com/pgreflect/pgreflect/pgtest"
	"github.com/pgreflect/pgreflect/resolve"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// goldens are the reports of the linted schemas.
var goldens = testenv.NewGoldens("testdata", "*.golden")

func TestMain(m *testing.M) { os.Exit(goldens.AfterRun(pgtest.Main(m))) }

var apiRoles = []string{"anon", "authenticated", "service_role"}

// lintDB runs schema on a new database set up for pgreflect (with Supabase's auth tables when authTables) and
// lints what each API role sees through searchPath.
func lintDB(t *testing.T, schema string, authTables bool, searchPath ...string) []lint.Finding {
	t.Helper()
	ctx := context.Background()
	url, conn := testenv.SetupDB(t, "")
	if authTables {
		pool, err := pgxpool.New(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		if err := auth.Migrate(ctx, pool); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Exec(ctx, schema); err != nil {
		t.Fatal(err)
	}
	if len(searchPath) == 0 {
		searchPath = []string{"public"}
	}
	var perRole [][]lint.Finding
	for _, role := range apiRoles {
		side, err := schemadiff.LoadDatabase(ctx, conn, role, searchPath, gqlschema.NewestVersion)
		if err != nil {
			t.Fatal(err)
		}
		perRole = append(perRole, lint.Schema(side.Generated))
	}
	return lint.Merge(perRole...)
}

func report(t *testing.T, findings []lint.Finding) string {
	t.Helper()
	var b bytes.Buffer
	if err := lint.WriteText(&b, findings); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func golden(t *testing.T, name string, got string) {
	t.Helper()
	goldens.Check(t, name, got, *update)
}

// The realistic schemas of testdata/fixtures, and pagila's and Supabase's slack clone's as published (in
// testdata), linted as CI would: their reports are golden files.
func TestFixtures(t *testing.T) {
	for _, f := range []struct {
		name       string
		authTables bool
		searchPath []string
	}{
		{"dvdrental", false, nil},
		{"supabase-app", true, nil},
		{"saas", false, []string{"app", "billing"}},
		// as their projects publish them, before the directives lint asks for
		{"pagila", false, nil},
		{"slack-clone", true, nil},
	} {
		t.Run(f.name, func(t *testing.T) {
			path := filepath.Join("../../testdata/fixtures", f.name+".sql")
			if _, err := os.Stat(path); err != nil {
				path = filepath.Join("testdata", f.name+".sql")
			}
			sql, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, f.name+".lint.golden", report(t, lintDB(t, string(sql), f.authTables, f.searchPath...)))
		})
	}
}

func mustFind(t *testing.T, findings []lint.Finding, rule, object string) lint.Finding {
	t.Helper()
	for _, f := range findings {
		if f.Rule == rule && f.Object == object {
			return f
		}
	}
	t.Fatalf("no %s finding on %s in:\n%s", rule, object, report(t, findings))
	return lint.Finding{}
}

func contains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

// ruleCase is a small schema of testdata/NAME.sql made to trip rules: its report is a golden file, and the
// fixes the report gives, run on the database, leave only the findings no statement fixes (left).
type ruleCase struct {
	name       string
	searchPath []string
	left       []string // rule + " " + object of the findings that stay after the fixes
}

var ruleCases = []ruleCase{
	{name: "enum"},
	{name: "duplicate-fk"},
	{name: "shadowed", searchPath: []string{"public", "app"}},
	{name: "reserved"},
	{name: "no-primary-key"},
	{name: "functions", left: []string{
		"function-left-out function public.newest(int4)",
		"function-left-out function public.pair()",
		"function-left-out function public.search(text)",
		"function-left-out function public.search(text, int4)",
		"function-left-out function public.sum_all(_int4)",
		"function-left-out function public.twice(int4)",
	}},
	{name: "invalid-name"},
}

func TestRules(t *testing.T) {
	for _, c := range ruleCases {
		t.Run(c.name, func(t *testing.T) {
			sql, err := os.ReadFile(filepath.Join("testdata", c.name+".sql"))
			if err != nil {
				t.Fatal(err)
			}
			findings := lintDB(t, string(sql), false, c.searchPath...)
			golden(t, c.name+".lint.golden", report(t, findings))
			var fixes []string
			for _, f := range findings {
				if f.Fix != "" {
					fixes = append(fixes, f.Fix)
				}
			}
			after := lintDB(t, string(sql)+";\n"+strings.Join(fixes, "\n"), false, c.searchPath...)
			var left []string
			for _, f := range after {
				left = append(left, f.Rule+" "+f.Object)
			}
			if strings.Join(left, "\n") != strings.Join(c.left, "\n") {
				t.Errorf("after the fixes:\n%s\nwant left: %q", report(t, after), c.left)
			}
		})
	}
}

// pagila's film.language follows original_language_id: the finding says so, and its fix gives each foreign key
// a field of its own, language following language_id.
func TestDuplicateForeignKeyFixFollowsTheRightKey(t *testing.T) {
	sql, err := os.ReadFile(filepath.Join("testdata", "duplicate-fk.sql"))
	if err != nil {
		t.Fatal(err)
	}
	f := mustFind(t, lintDB(t, string(sql), false), lint.RuleDuplicateField, "table public.film")
	contains(t, "reason", f.Reason, `type film has 2 fields named "language"`,
		"The API answers the last, foreign key film_original_language_id_fkey (original_language_id)")
	if f.Level != lint.Error {
		t.Errorf("level %s", f.Level)
	}
	// What the finding says the API does, the API does: language follows original_language_id (null here).
	rows := `;
		insert into public.language (name) values ('English');
		insert into public.film (title, language_id) values ('ACADEMY DINOSAUR', 1);`
	const query = `{ filmCollection { edges { node { title language { name } } } } }`
	_, before := testenv.SetupDB(t, string(sql)+rows)
	if got := ask(t, before, query); got != `{"data":{"filmCollection":{"edges":[{"node":{"title":"ACADEMY DINOSAUR","language":null}}]}}}` {
		t.Errorf("before the fix: %s", got)
	}
	_, conn := testenv.SetupDB(t, string(sql)+rows+"\n"+f.Fix)
	if got := ask(t, conn, query); got != `{"data":{"filmCollection":{"edges":[{"node":{"title":"ACADEMY DINOSAUR","language":{"name":"English"}}}]}}}` {
		t.Errorf("after the fix: %s", got)
	}
	side, err := schemadiff.LoadDatabase(context.Background(), conn, "anon", []string{"public"}, gqlschema.NewestVersion)
	if err != nil {
		t.Fatal(err)
	}
	follows := map[string]string{}
	for _, field := range side.Generated.Types["film"].Fields {
		if field.Relationship != nil {
			follows[field.Name] += strings.Join(field.Relationship.FK.LocalColumns, ",")
		}
	}
	if follows["language"] != "language_id" || follows["originalLanguage"] != "original_language_id" || len(follows) != 2 {
		t.Errorf("film's relationship fields after the fix: %v", follows)
	}
	var reverse []string
	for _, field := range side.Generated.Types["language"].Fields {
		if field.Relationship != nil {
			reverse = append(reverse, field.Name+"="+strings.Join(field.Relationship.FK.LocalColumns, ","))
		}
	}
	if strings.Join(reverse, " ") != "filmCollection=language_id filmCollectionByOriginalLanguageId=original_language_id" {
		t.Errorf("language's relationship fields after the fix: %v", reverse)
	}
}

// What lint calls an error for client tooling is one: graphql-js (GraphiQL's, Apollo's and graphql-codegen's
// schema builder) rejects the role's introspection answer before the fix, and accepts it after.
func TestGraphQLJSRejectsWhatLintCallsAnError(t *testing.T) {
	for _, name := range []string{"enum", "reserved"} {
		t.Run(name, func(t *testing.T) {
			sql, err := os.ReadFile(filepath.Join("testdata", name+".sql"))
			if err != nil {
				t.Fatal(err)
			}
			findings := lintDB(t, string(sql), false)
			var fixes []string
			for _, f := range findings {
				if f.Level == lint.Error {
					fixes = append(fixes, f.Fix)
				}
			}
			if len(fixes) == 0 {
				t.Fatalf("no errors:\n%s", report(t, findings))
			}
			for _, c := range []struct {
				sql    string
				accept bool
			}{{string(sql), false}, {string(sql) + ";\n" + strings.Join(fixes, "\n"), true}} {
				_, conn := testenv.SetupDB(t, c.sql)
				side, err := schemadiff.LoadDatabase(context.Background(), conn, "anon", []string{"public"}, gqlschema.NewestVersion)
				if err != nil {
					t.Fatal(err)
				}
				body, err := resolve.Introspect(context.Background(), side.Generated)
				if err != nil {
					t.Fatal(err)
				}
				var result struct {
					Built   bool     `json:"built"`
					Error   string   `json:"error"`
					Invalid []string `json:"invalid"`
				}
				testenv.RunNodeScript(t, filepath.Join("..", "..", "testdata", "graphql-js"), "introspect.mjs", []string{"check"},
					json.RawMessage(body), &result)
				if accepted := result.Built && len(result.Invalid) == 0; accepted != c.accept {
					t.Errorf("fixed %v: graphql-js accepted %v (built %v, error %q, invalid %q)", c.accept, accepted, result.Built, result.Error, result.Invalid)
				}
			}
		})
	}
}

// ask answers a GraphQL query as service_role on conn, as the API would.
func ask(t *testing.T, conn *pgx.Conn, query string) string {
	t.Helper()
	engine := resolve.NewEngine(resolve.Options{})
	session := resolve.Session{Role: "service_role", Claims: map[string]any{"role": "service_role"}, SearchPath: []string{"public"}}
	body := engine.ExecuteAs(context.Background(), conn, session, resolve.Request{Query: query})
	var compact bytes.Buffer
	if err := json.Compact(&compact, body); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return compact.String()
}
