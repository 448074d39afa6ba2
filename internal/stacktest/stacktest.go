// Package stacktest runs a whole pgreflect server for tests of the packages above it (clients, the console):
// a fresh database from pgtest with the setup applied, /graphql/v1 served as the login role authenticator,
// and, on request, the sign-in routes with the test identity provider configured as "google".
//
// The server is assembled by internal/stack, as `pgreflect serve` assembles it, and served by a real
// http.Server with the production limits. Packages that stacktest itself imports (httpapi, authapi) test
// themselves with their own fixtures, since importing stacktest from their tests would be an import cycle.
package stacktest

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/internal/config"
	"github.com/pgreflect/pgreflect/internal/dbsetup"
	"github.com/pgreflect/pgreflect/internal/stack"
	"github.com/pgreflect/pgreflect/pgtest"
	"github.com/pgreflect/pgreflect/testidp"
)

// Fixed test credentials.
const (
	JWTSecret  = "stack-test-secret-with-at-least-32-characters"
	ProjectRef = "abcdefghijklmnopqrst"
	ClientID   = "web.apps.example.com"
	IDPSecret  = "idp-secret"
	// ManagementToken opens the management API (/v1) and the console to clients that are not on loopback.
	ManagementToken = "sbp_0000000000000000000000000000000000000000"
)

// Options say what the stack holds.
type Options struct {
	// Demo loads the demo schema of `pgreflect start`.
	Demo bool
	// Schema is SQL run as the superuser after the setup (and the demo).
	Schema string
	// AuthTables creates the auth service's tables (auth.users, ...) before Schema runs, for schemas that
	// reference them as a Supabase project's do.
	AuthTables bool
	// SearchPath is the API's search path; empty means public.
	SearchPath []string
	// SignIn serves /auth/v1 with the test identity provider as "google"; Configure may adjust its config.
	SignIn    bool
	Configure func(*config.Auth)
	// Console, when set, makes the handler mounted at /console/ from the stack's anon key.
	Console func(anonKey string) http.Handler
	// DatabaseURL is the superuser URL of the database to serve; empty: a fresh database from pgtest. Stacks
	// on one database are instances of one project.
	DatabaseURL string
	// LoginURL, when set, rewrites the URL the server connects with as the login role (authenticator on
	// DatabaseURL's server): to go through a pooler, for instance.
	LoginURL func(string) string
	// ReadURLs, StatementMode, StatementTimeout, PoolSize, PoolTimeout and PoolShare are passed to
	// stack.Options.
	ReadURLs         []string
	StatementMode    string
	StatementTimeout time.Duration
	PoolSize         int
	PoolTimeout      time.Duration
	PoolShare        float64
	// Limits are the HTTP server's (stack.Options.Limits).
	Limits stack.Limits
}

// Stack is a running server.
type Stack struct {
	URL string
	// DatabaseURL is the superuser URL of the stack's database.
	DatabaseURL string
	Admin       *pgx.Conn // superuser connection to the stack's database
	Keys        *auth.Keys
	Anon        string
	Service     string
	// IDP is the test identity provider (SignIn only).
	IDP *testidp.Server
}

// New starts a stack; everything stops when the test ends.
func New(t testing.TB, o Options) *Stack {
	t.Helper()
	ctx := context.Background()
	dbURL := o.DatabaseURL
	if dbURL == "" {
		dbURL = pgtest.NewDB(t)
	}
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
	if o.AuthTables {
		if err := migrateAuth(ctx, dbURL); err != nil {
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
	keys, err := auth.NewKeys(JWTSecret)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.SearchPath) == 0 {
		o.SearchPath = []string{"public"}
	}
	s := &Stack{DatabaseURL: dbURL, Admin: admin, Keys: keys}
	s.Anon, _ = keys.SignAPIKey("anon", ProjectRef)
	s.Service, _ = keys.SignAPIKey("service_role", ProjectRef)
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.URL = "http://" + listener.Addr().String()
	loginURL := u.String()
	if o.LoginURL != nil {
		loginURL = o.LoginURL(loginURL)
	}
	opts := stack.Options{
		RequestURL: loginURL, ReadURLs: o.ReadURLs, StatementMode: o.StatementMode, JWTSecret: JWTSecret, AnonKey: s.Anon, ServiceRoleKey: s.Service,
		StatementTimeout: o.StatementTimeout, PoolSize: o.PoolSize, PoolTimeout: o.PoolTimeout, PoolShare: o.PoolShare, Limits: o.Limits,
		ProjectRef: ProjectRef, ManagementToken: ManagementToken,
		SearchPath: o.SearchPath, Config: config.Default(), APIURL: s.URL,
		Logger: slog.New(slog.NewTextHandler(testLog{t}, nil)),
	}
	if o.Console != nil {
		opts.Console = o.Console(s.Anon)
	}
	if o.SignIn {
		// The auth service writes schema auth as the superuser.
		opts.AdminURL = dbURL
		opts.Config.Auth = s.signInConfig(t, o.Configure)
	}
	st, err := stack.New(ctx, opts)
	if err != nil {
		listener.Close()
		t.Fatal(err)
	}
	serveCtx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- st.Serve(serveCtx, listener) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("stacktest: %v", err)
		}
		st.Close()
	})
	return s
}

// migrateAuth runs the auth service's migrations on the database at dbURL.
func migrateAuth(ctx context.Context, dbURL string) error {
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	return auth.Migrate(ctx, pool)
}

// testLog shows the server's log lines with the test's output, and drops them once the test has ended (a
// late line from a server goroutine must not fail the run).
type testLog struct{ t testing.TB }

func (w testLog) Write(p []byte) (int, error) {
	defer func() { _ = recover() }()
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// signInConfig starts the test provider and returns the auth configuration that names it "google".
func (s *Stack) signInConfig(t testing.TB, configure func(*config.Auth)) config.Auth {
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
	return cfg
}
