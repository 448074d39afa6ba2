package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/internal/devtools/pgbouncertest"
	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
)

// TestTwoServeProcessesPooledAndReplicated runs two `pgreflect serve` processes on one project's database: one
// through a real PgBouncer in transaction mode (chosen by pgbouncer=true in its URL), the other with a read
// replica URL (and --trusted-documents, --legacy-claim-settings). A management API change through one and a DDL
// are in effect on both within a second.
func TestTwoServeProcessesPooledAndReplicated(t *testing.T) {
	bin, env := startedProject(t)
	password := env[authenticatorPasswordKey]
	bouncer := pgbouncertest.Start(t, env["DB_URL"], pgbouncertest.Options{Users: map[string]string{"authenticator": password}})
	direct := withUser(env["DB_URL"], "authenticator", password)
	keyEnv := projectServeEnv(env)
	pooledPort, replicatedPort := freePort(t), freePort(t)
	serveProcess(t, bin, keyEnv, "--db-url", bouncer.URL(t, env["DB_URL"], "authenticator")+"&pgbouncer=true",
		"--port", strconv.Itoa(pooledPort), "--workdir", t.TempDir())
	// The primary stands in for a replica here (internal/stack's tests use a real one): what is checked is that
	// the flag reaches the server. So for --trusted-documents: the anon key may run no document here (none is
	// trusted), service_role any.
	serveProcess(t, bin, keyEnv, "--db-url", direct, "--read-db-url", direct, "--trusted-documents", "only",
		"--legacy-claim-settings", "--port", strconv.Itoa(replicatedPort), "--workdir", t.TempDir())
	pooled, replicated := "http://127.0.0.1:"+strconv.Itoa(pooledPort), "http://127.0.0.1:"+strconv.Itoa(replicatedPort)
	for api, want := range map[string]int{pooled: http.StatusOK, replicated: http.StatusForbidden} {
		if status, body := postGraphQL(t, api, env["ANON_KEY"], `{"query":"{ __typename }"}`); status != want {
			t.Errorf("%s, an anonymous document: %d %s, want %d", api, status, body, want)
		}
	}

	// A management API change through one process is in effect on the other.
	config := pooled + "/v1/projects/" + env["PROJECT_REF"] + "/config/auth"
	if status, body := request(t, http.MethodPatch, config, env["MANAGEMENT_TOKEN"], `{"jwt_exp": 1234}`); status != http.StatusOK {
		t.Fatalf("PATCH: %d %s", status, body)
	}
	testenv.Eventually(t, 10*time.Second, func() string {
		_, body := request(t, http.MethodGet, strings.Replace(config, pooled, replicated, 1), env["MANAGEMENT_TOKEN"], "")
		if !strings.Contains(body, `"jwt_exp":1234`) {
			return "the other process's config: " + body
		}
		return ""
	})

	// A schema change reaches both: the pooled one by polling, the other by LISTEN. The bounds are what a loaded
	// machine needs (the polls are 500 ms apart, and a schema load under -race on 2 busy cores took longer
	// than 1.5 s once), not a speed target: Eventually returns as soon as the change is there.
	admin, err := pgx.Connect(context.Background(), env["DB_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(context.Background(), "alter table account add column nickname text"); err != nil {
		t.Fatal(err)
	}
	query := `{"query":"{ accountCollection(first: 1) { edges { node { nickname } } } }"}`
	for _, api := range []string{pooled, replicated} {
		testenv.Eventually(t, 10*time.Second, func() string {
			if status, body := postGraphQL(t, api, env["SERVICE_ROLE_KEY"], query); status != http.StatusOK || strings.Contains(body, "errors") {
				return api + ": " + body
			}
			return ""
		})
	}
	// The legacy per-claim settings are set where --legacy-claim-settings says so only.
	if _, err := admin.Exec(context.Background(), `create function legacy_role() returns text stable language sql
		as $$ select coalesce(current_setting('request.jwt.claim.role', true), '') $$`); err != nil {
		t.Fatal(err)
	}
	for api, want := range map[string]string{pooled: "", replicated: "service_role"} {
		testenv.Eventually(t, 10*time.Second, func() string {
			status, body := postGraphQL(t, api, env["SERVICE_ROLE_KEY"], `{"query":"{ legacy_role }"}`)
			if status != http.StatusOK || !sameJSON(body, map[string]any{"data": map[string]any{"legacy_role": want}}) {
				return api + ": " + body + ", want legacy_role " + strconv.Quote(want)
			}
			return ""
		})
	}
	mutation := `{"query":"mutation { insertIntoaccountCollection(objects: [{email: \"p@example.com\", encrypted_password: \"x\"}]) { affectedCount } }"}`
	for range 5 {
		if _, body := postGraphQL(t, pooled, env["SERVICE_ROLE_KEY"], mutation); !sameJSON(body, map[string]any{
			"data": map[string]any{"insertIntoaccountCollection": map[string]any{"affectedCount": float64(1)}}}) {
			t.Fatalf("mutation through PgBouncer: %s", body)
		}
	}
}

// projectServeEnv is the environment of a `pgreflect serve` of the project whose project.env is env: its keys,
// and its database as the auth schema's and the management API's.
func projectServeEnv(env map[string]string) []string {
	return []string{"PGREFLECT_JWT_SECRET=" + env["JWT_SECRET"], "PGREFLECT_ANON_KEY=" + env["ANON_KEY"],
		"PGREFLECT_SERVICE_ROLE_KEY=" + env["SERVICE_ROLE_KEY"], "PGREFLECT_PROJECT_REF=" + env["PROJECT_REF"],
		"PGREFLECT_MANAGEMENT_TOKEN=" + env["MANAGEMENT_TOKEN"], "PGREFLECT_AUTH_DATABASE_URL=" + env["DB_URL"]}
}

// The console's Schema pages show the pg_graphql version the API follows: config.toml's, until the management
// API sets another (they showed config.toml's for as long as the server ran).
func TestConsoleSchemaFollowsTheVersionTheAPIFollows(t *testing.T) {
	bin, env := startedProject(t)
	workdir := t.TempDir()
	if err := os.Mkdir(filepath.Join(workdir, "supabase"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(workdir, "supabase"), "config.toml", "[graphql]\nversion = \"1.5\"\n")
	port := freePort(t)
	serveProcess(t, bin, projectServeEnv(env), "--db-url", withUser(env["DB_URL"], "authenticator", env[authenticatorPasswordKey]),
		"--port", strconv.Itoa(port), "--workdir", workdir)
	api := "http://127.0.0.1:" + strconv.Itoa(port)
	// pg_graphql 1.6 has <x>ByPk root fields, 1.5 none.
	byPk := func() bool {
		t.Helper()
		return strings.Contains(schemaPage(t, api+"/console/", "graphql?role=service_role"), "ByPk(")
	}
	if byPk() {
		t.Fatal("the Schema page of a project pinned to 1.5 has ByPk fields")
	}
	config := api + "/v1/projects/" + env["PROJECT_REF"] + "/config/graphql"
	if status, body := request(t, http.MethodPatch, config, env["MANAGEMENT_TOKEN"], `{"version": "1.6"}`); status != http.StatusOK {
		t.Fatalf("PATCH the version: %d %s", status, body)
	}
	if status, body := postGraphQL(t, api, env["SERVICE_ROLE_KEY"], `{"query":"{ __type(name: \"Query\") { fields { name } } }"}`); status != http.StatusOK || !strings.Contains(body, "ByPk") {
		t.Fatalf("the API after the PATCH: %d %.300s", status, body)
	}
	if !byPk() {
		t.Error("the Schema page after the version was set to 1.6 has no ByPk fields")
	}
}

// request sends body (JSON) with a bearer token and returns the status and the answer.
func request(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var compact map[string]any
	if json.Unmarshal(b, &compact) == nil {
		b, _ = json.Marshal(compact)
	}
	return resp.StatusCode, string(b)
}
