package fixturetest

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/internal/sdl"
	"github.com/pgreflect/pgreflect/internal/stacktest"
	"github.com/pgreflect/pgreflect/pgtest"
	"github.com/pgreflect/pgreflect/resolve"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// goldens are each fixture's answers and schemas.
var goldens = testenv.NewGoldens(fixtureDir, "*.golden")

func TestMain(m *testing.M) { os.Exit(goldens.AfterRun(pgtest.Main(m))) }

const fixtureDir = "../../../testdata/fixtures"

// A caller is "anon", "service_role", or the auth.users id of a signed-in (authenticated) user.
type request struct {
	caller    string
	query     string
	variables string
}

type fixture struct {
	name       string
	searchPath []string
	authTables bool
	// schemaCallers are the callers whose view of the schema is goldened.
	schemaCallers []string
	requests      []request
}

// run serves the fixture, sends its requests in order (mutations change what later requests see) and compares
// the answers and each caller's schema (SDL) with the golden files.
func run(t *testing.T, f fixture) {
	sql, err := os.ReadFile(filepath.Join(fixtureDir, f.name+".sql"))
	if err != nil {
		t.Fatal(err)
	}
	s := stacktest.New(t, stacktest.Options{Schema: string(sql), AuthTables: f.authTables, SearchPath: f.searchPath})
	var schema, answers bytes.Buffer
	for _, caller := range f.schemaCallers {
		fmt.Fprintf(&schema, "== %s\n%s\n", caller, schemaSDL(t, s, caller))
	}
	for _, r := range f.requests {
		status, body := post(t, s, r.caller, r.query, r.variables)
		fmt.Fprintf(&answers, "### as %s\n%s\n", r.caller, r.query)
		if r.variables != "" {
			fmt.Fprintf(&answers, "variables: %s\n", r.variables)
		}
		fmt.Fprintf(&answers, "=> %d %s\n\n", status, body)
	}
	golden(t, f.name+".schema.golden", schema.Bytes())
	golden(t, f.name+".answers.golden", answers.Bytes())
}

// token is the bearer token of a caller: an API key, or a user's access token as Supabase Auth issues it.
func token(t *testing.T, s *stacktest.Stack, caller string) string {
	switch caller {
	case "anon":
		return s.Anon
	case "service_role":
		return s.Service
	}
	tok, err := s.Keys.Sign(jwt.MapClaims{
		"sub": caller, "role": "authenticated", "aud": "authenticated", "aal": "aal1",
		"email": caller[:8] + "@example.com", "iat": 1700000000, "exp": 4102444800,
	})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func post(t *testing.T, s *stacktest.Stack, caller, query, variables string) (int, string) {
	t.Helper()
	payload := map[string]any{"query": query}
	if variables != "" {
		payload["variables"] = json.RawMessage(variables)
	}
	body, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, s.URL+"/graphql/v1", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("apikey", s.Anon)
	req.Header.Set("Authorization", "Bearer "+token(t, s, caller))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, strings.TrimSpace(string(got))
}

// schemaSDL is the schema a caller sees, as SDL printed from the standard introspection query's answer
// (what graphql-codegen or graphql-inspector would read from the endpoint).
func schemaSDL(t *testing.T, s *stacktest.Stack, caller string) string {
	t.Helper()
	status, body := post(t, s, caller, resolve.IntrospectionQuery, "")
	if status != http.StatusOK {
		t.Fatalf("introspection as %s: %d %s", caller, status, body)
	}
	schema, err := sdl.FromIntrospection([]byte(body))
	if err != nil {
		t.Fatalf("introspection as %s: %v: %.300s", caller, err, body)
	}
	return string(sdl.Print(schema))
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldens.Check(t, name, string(got), *update)
}
