// Package stacktest runs a whole pgreflect server for tests of the packages above it (clients, the console):
// a fresh database from pgtest with the setup applied, /graphql/v1 served as the login role authenticator,
// and, on request, the sign-in routes with the test identity provider configured as "google".
//
// Packages that stacktest itself imports (httpapi, authapi) test themselves with their own fixtures, since
// importing stacktest from their tests would be an import cycle.
package stacktest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/authapi"
	"github.com/pgreflect/pgreflect/config"
	"github.com/pgreflect/pgreflect/dbsetup"
	"github.com/pgreflect/pgreflect/httpapi"
	"github.com/pgreflect/pgreflect/pgtest"
	"github.com/pgreflect/pgreflect/testidp"
)

// Fixed test credentials.
const (
	JWTSecret  = "stack-test-secret-with-at-least-32-characters"
	ProjectRef = "abcdefghijklmnopqrst"
	ClientID   = "web.apps.example.com"
	IDPSecret  = "idp-secret"
)

// Options say what the stack holds.
type Options struct {
	// Demo loads the demo schema of `pgreflect start`.
	Demo bool
	// Schema is SQL run as the superuser after the setup (and the demo).
	Schema string
	// SignIn serves /auth/v1 with the test identity provider as "google"; Configure may adjust its config.
	SignIn    bool
	Configure func(*config.Auth)
	// Console, when set, makes the handler mounted at /console/ from the stack's anon key.
	Console func(anonKey string) http.Handler
}

// Stack is a running server.
type Stack struct {
	URL     string
	Admin   *pgx.Conn // superuser connection to the stack's database
	Keys    *auth.Keys
	Anon    string
	Service string
	// IDP is the test identity provider (SignIn only).
	IDP *testidp.Server
}

// New starts a stack; everything stops when the test ends.
func New(t testing.TB, o Options) *Stack {
	t.Helper()
	ctx := context.Background()
	dbURL := pgtest.NewDB(t)
	admin, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(context.Background()) })
	if err := dbsetup.Apply(ctx, admin); err != nil {
		t.Fatal(err)
	}
	if o.Demo {
		if err := dbsetup.LoadDemo(ctx, admin); err != nil {
			t.Fatal(err)
		}
	}
	if o.Schema != "" {
		if _, err := admin.Exec(ctx, o.Schema); err != nil {
			t.Fatalf("schema: %v", err)
		}
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User("authenticator")
	requests := pool(t, u.String())
	keys, err := auth.NewKeys(JWTSecret)
	if err != nil {
		t.Fatal(err)
	}
	s := &Stack{Admin: admin, Keys: keys}
	s.Anon, _ = keys.SignAPIKey("anon", ProjectRef)
	s.Service, _ = keys.SignAPIKey("service_role", ProjectRef)
	srv := httptest.NewUnstartedServer(nil)
	s.URL = "http://" + srv.Listener.Addr().String()
	opts := httpapi.Options{Pool: requests, Keys: keys, AnonKey: s.Anon, ServiceRoleKey: s.Service}
	if o.Console != nil {
		opts.Console = o.Console(s.Anon)
	}
	if o.SignIn {
		opts.Auth = s.signIn(t, pool(t, dbURL), o.Configure)
	}
	api, err := httpapi.New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(api.Close)
	srv.Config.Handler = api
	srv.Start()
	t.Cleanup(srv.Close)
	return s
}

func pool(t testing.TB, url string) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// signIn starts the test provider and the auth service, which writes schema auth as the superuser.
func (s *Stack) signIn(t testing.TB, admin *pgxpool.Pool, configure func(*config.Auth)) http.Handler {
	t.Helper()
	idp, err := testidp.New(testidp.Options{ClientID: ClientID, ClientSecret: IDPSecret, RedirectURIs: []string{s.URL + "/auth/v1/callback"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(idp.Close)
	s.IDP = idp
	cfg := config.Default().Auth
	cfg.External = map[string]config.Provider{"google": {Enabled: true, ClientID: ClientID, Secret: IDPSecret, URL: idp.URL()}}
	if configure != nil {
		configure(&cfg)
	}
	svc, err := authapi.New(context.Background(), authapi.Options{Pool: admin, Keys: s.Keys, Config: cfg, APIURL: s.URL,
		ProjectRef: ProjectRef, ManagementToken: "sbp_0000000000000000000000000000000000000000", AnonKey: s.Anon,
		ServiceRoleKey: s.Service})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	return svc.AuthHandler()
}
