package stack_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/internal/config"
	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/internal/httpapi"
	"github.com/pgreflect/pgreflect/internal/stack"
)

const (
	jwtSecret  = "stack-version-test-secret-of-32-characters-or-more"
	projectRef = "abcdefghijklmnopqrst"
	mgmtToken  = "sbp_1111111111111111111111111111111111111111"
)

// server is one run of the whole server on a database, stopped by stop.
type server struct {
	url, anon string
	stop      func()
}

func startServer(t *testing.T, dbURL, version string) *server {
	t.Helper()
	return startServerWith(t, dbURL, version, []string{"public"}, slog.New(slog.DiscardHandler))
}

// startServerWith is startServer with a search path (nil: config.toml's, as `start` without --schemas) and the
// server's log.
func startServerWith(t *testing.T, dbURL, version string, searchPath []string, log *slog.Logger) *server {
	t.Helper()
	ctx := context.Background()
	keys, err := auth.NewKeys(jwtSecret)
	if err != nil {
		t.Fatal(err)
	}
	anon, _ := keys.SignAPIKey("anon", projectRef)
	service, _ := keys.SignAPIKey("service_role", projectRef)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User("authenticator")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.GraphQL.Version = version
	apiURL := "http://" + l.Addr().String()
	st, err := stack.New(ctx, stack.Options{RequestURL: u.String(), AdminURL: dbURL, JWTSecret: jwtSecret, AnonKey: anon,
		ServiceRoleKey: service, ProjectRef: projectRef, ManagementToken: mgmtToken, SearchPath: searchPath,
		Config: cfg, APIURL: apiURL, BuildVersion: "v9.9.9-test", Logger: log})
	if err != nil {
		l.Close()
		t.Fatal(err)
	}
	serveCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- st.Serve(serveCtx, l) }()
	s := &server{url: apiURL, anon: anon}
	s.stop = func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		st.Close()
	}
	return s
}

// graphql posts a query and returns the response body and the version header.
func (s *server) graphql(t *testing.T, query string) (string, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"query": query})
	req, _ := http.NewRequest(http.MethodPost, s.url+"/graphql/v1", strings.NewReader(string(body)))
	req.Header.Set("apikey", s.anon)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b), resp.Header.Get(httpapi.VersionHeader)
}

func (s *server) management(t *testing.T, method, body string) (int, map[string]any) {
	t.Helper()
	return s.managementAt(t, method, "/config/graphql", body, mgmtToken)
}

// managementAt calls the management API's path under the project with a token.
func (s *server) managementAt(t *testing.T, method, path, body, token string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, s.url+"/v1/projects/"+projectRef+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// pg_graphql 1.5 shows introspection to everyone and has no <x>ByPk fields; 1.6 has them and keeps
// introspection off unless a schema opts in.
const (
	byPk       = `{ itemByPk(id: 1) { name } }`
	introspect = `{ __schema { queryType { name } } }`
)

func wantVersion(t *testing.T, s *server, version string) {
	t.Helper()
	pk, header := s.graphql(t, byPk)
	intro, _ := s.graphql(t, introspect)
	if header != "v9.9.9-test" {
		t.Errorf("%s header %q", httpapi.VersionHeader, header)
	}
	switch version {
	case "1.5":
		if !strings.Contains(pk, `Unknown field \"itemByPk\" on type Query`) || !strings.Contains(intro, `"queryType": {"name": "Query"}`) {
			t.Errorf("want 1.5 behaviour:\n%s\n%s", pk, intro)
		}
	case "1.6":
		if !strings.Contains(pk, `"itemByPk": {"name": "one"}`) || !strings.Contains(intro, `Unknown field \"__schema\" on type Query`) {
			t.Errorf("want 1.6 behaviour:\n%s\n%s", pk, intro)
		}
	}
}

// The project's pg_graphql version is what config.toml says, is kept in the database across restarts, changes
// only when asked (management API), and a restart does not move it.
func TestGraphQLVersionPinned(t *testing.T) {
	dbURL, _ := testenv.SetupDB(t, `create table item (id int primary key, name text);
		insert into item values (1, 'one'); grant select on item to anon`)

	s := startServer(t, dbURL, "1.5")
	wantVersion(t, s, "1.5")
	s.stop()

	// No version configured: the pinned one stays, although 1.6 is newer.
	s = startServer(t, dbURL, "")
	wantVersion(t, s, "1.5")
	if status, out := s.management(t, http.MethodGet, ""); status != 200 || out["installed_version"] != "1.5" || out["default_version"] != "1.6" {
		t.Errorf("GET config/graphql: %d %v", status, out)
	}
	if status, out := s.management(t, http.MethodPatch, `{"version": "2.0"}`); status != 400 || !strings.Contains(out["message"].(string), "unsupported") {
		t.Errorf("PATCH an unknown version: %d %v", status, out)
	}
	if status, out := s.management(t, http.MethodPatch, `{"version": "1.6"} and more`); status != 400 || out["message"] != "Request body must be a JSON object" {
		t.Errorf("PATCH a version with text after the object: %d %v", status, out)
	}
	wantVersion(t, s, "1.5") // not applied
	if status, out := s.management(t, http.MethodPatch, `{"version": "1.6"}`); status != 200 || out["installed_version"] != "1.6" {
		t.Errorf("PATCH 1.6: %d %v", status, out)
	}
	wantVersion(t, s, "1.6") // applied at once
	s.stop()

	s = startServer(t, dbURL, "")
	defer s.stop()
	wantVersion(t, s, "1.6")
}

// A version the build does not know stops the start with a clear error.
func TestGraphQLVersionUnknown(t *testing.T) {
	ctx := context.Background()
	dbURL, _ := testenv.SetupDB(t, "")
	cfg := config.Default()
	cfg.GraphQL.Version = "1.4"
	_, err := stack.New(ctx, stack.Options{RequestURL: dbURL, AdminURL: dbURL, JWTSecret: jwtSecret, ProjectRef: projectRef,
		Config: cfg, APIURL: "http://127.0.0.1:1", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil || !strings.Contains(err.Error(), `unsupported pg_graphql version "1.4"`) {
		t.Errorf("start with version 1.4: %v", err)
	}
}
