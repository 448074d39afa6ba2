package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/internal/dbsetup"
	"github.com/pgreflect/pgreflect/internal/stack"
)

func runServe(args []string, stdout, stderr io.Writer) error {
	var (
		dbURL, authDBURL, jwtSecret, anonKey, serviceRoleKey string
		projectRef, managementToken, schemas, workdir, host  string
		port                                                 int
		readDBURLs                                           []string
	)
	fs := newFlagSet("serve", stderr)
	fs.StringVar(&dbURL, "db-url", os.Getenv("PGREFLECT_DATABASE_URL"), "database URL of the login role of API requests, e.g. authenticator (env PGREFLECT_DATABASE_URL)")
	fs.StringVar(&authDBURL, "auth-db-url", os.Getenv("PGREFLECT_AUTH_DATABASE_URL"), "database URL of a role that may create and write schema auth, for sign-in and the management API (env PGREFLECT_AUTH_DATABASE_URL; default: --db-url when its role is a superuser, else no sign-in)")
	fs.Func("read-db-url", "database URL of a read replica, logged in as --db-url's role; repeat for several: queries go to the replicas in turn, mutations to --db-url (env PGREFLECT_READ_DATABASE_URLS, space-separated)", func(v string) error {
		readDBURLs = append(readDBURLs, v)
		return nil
	})
	fs.StringVar(&jwtSecret, "jwt-secret", "", "the project's JWT secret, at least 32 characters (env PGREFLECT_JWT_SECRET)")
	fs.StringVar(&anonKey, "anon-key", "", "the anon API key (env PGREFLECT_ANON_KEY; default: a new key signed with the JWT secret)")
	fs.StringVar(&serviceRoleKey, "service-role-key", "", "the service_role API key (env PGREFLECT_SERVICE_ROLE_KEY; default: a new key signed with the JWT secret)")
	fs.StringVar(&projectRef, "project-ref", "", "the 20-character project ref (env PGREFLECT_PROJECT_REF; default: a new one)")
	fs.StringVar(&managementToken, "management-token", "", "bearer token of the management API (env PGREFLECT_MANAGEMENT_TOKEN; default: management API refuses every request)")
	fs.IntVar(&port, "port", 54321, "HTTP port; when not given, [api] port of supabase/config.toml if set")
	fs.StringVar(&host, "host", "127.0.0.1", "address to listen on")
	fs.StringVar(&workdir, "workdir", ".", "project root holding supabase/config.toml")
	fs.StringVar(&schemas, "schemas", "", "comma-separated API search path (overrides [api] schemas and extra_search_path)")
	sf := addServerFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: pgreflect serve --db-url URL [flags]")
		fmt.Fprintln(fs.Output(), "Serves the API for an existing database that `pgreflect setup` has prepared.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := sf.check(); err != nil {
		return err
	}
	envDefault := func(v *string, name string) {
		if *v == "" {
			*v = os.Getenv(name)
		}
	}
	envDefault(&jwtSecret, "PGREFLECT_JWT_SECRET")
	envDefault(&anonKey, "PGREFLECT_ANON_KEY")
	envDefault(&serviceRoleKey, "PGREFLECT_SERVICE_ROLE_KEY")
	envDefault(&projectRef, "PGREFLECT_PROJECT_REF")
	envDefault(&managementToken, "PGREFLECT_MANAGEMENT_TOKEN")
	if len(readDBURLs) == 0 {
		readDBURLs = strings.Fields(os.Getenv("PGREFLECT_READ_DATABASE_URLS"))
	}
	if dbURL == "" {
		return errors.New("--db-url is required (or PGREFLECT_DATABASE_URL)")
	}
	if jwtSecret == "" {
		return errors.New("--jwt-secret is required (or PGREFLECT_JWT_SECRET)")
	}
	cfg, searchPath, err := loadConfig(workdir, schemas, stderr)
	if err != nil {
		return err
	}
	sf.configure(&cfg)
	if !flagSet(fs, "port") && cfg.API.Port != 0 {
		port = cfg.API.Port
	}
	keys, err := auth.NewKeys(jwtSecret)
	if err != nil {
		return err
	}
	if projectRef == "" {
		if projectRef, err = auth.NewProjectRef(); err != nil {
			return err
		}
	}
	var generated []string
	for _, k := range []struct {
		dst  *string
		role string
	}{{&anonKey, "anon"}, {&serviceRoleKey, "service_role"}} {
		if *k.dst == "" {
			if *k.dst, err = keys.SignAPIKey(k.role, projectRef); err != nil {
				return err
			}
			generated = append(generated, k.role)
		}
	}

	ctx, stop := shutdownContext()
	defer stop()
	setupCtx, cancelSetup := context.WithTimeout(ctx, time.Minute)
	defer cancelSetup()
	super, err := ensureSetup(setupCtx, dbURL, searchPath, stderr)
	if err != nil {
		return err
	}
	if authDBURL == "" {
		if super {
			authDBURL = dbURL
		} else {
			fmt.Fprintln(stderr, "note: sign-in (/auth/v1) and the management API (/v1) are off: give --auth-db-url, a role that may create and write schema auth")
		}
	}
	listener, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("cannot listen on %s:%d (--host, --port): %w", host, port, err)
	}
	defer listener.Close()
	apiURL := "http://" + listener.Addr().String()
	srv, closeStack, err := sf.newStack(setupCtx, stderr, servedProject{
		workdir: workdir, requestURL: dbURL, adminURL: authDBURL, schemaURL: dbURL, readURLs: readDBURLs,
		secrets: projectSecrets{JWTSecret: jwtSecret, ProjectRef: projectRef, AnonKey: anonKey,
			ServiceRoleKey: serviceRoleKey, ManagementToken: managementToken},
		keys: keys, searchPath: searchPath, cfg: cfg, apiURL: apiURL,
	})
	if err != nil {
		return err
	}
	defer closeStack()
	cancelSetup()

	// The banner in one write: whoever waits for its first line (a supervisor, a test) has the keys with it.
	var banner strings.Builder
	fmt.Fprintf(&banner, "GraphQL URL: %s/graphql/v1\n", apiURL)
	fmt.Fprintf(&banner, "Search path: %s\n", joinComma(searchPath))
	for _, role := range generated {
		key := anonKey
		if role == "service_role" {
			key = serviceRoleKey
		}
		fmt.Fprintf(&banner, "%s key (generated, project ref %s): %s\n", role, projectRef, key)
	}
	io.WriteString(stdout, banner.String()) // as before, a closed stdout does not stop the server
	return serveStack(ctx, srv, listener, sf)
}

// ensureSetup checks that `pgreflect setup` has run on the database; a superuser login role runs it itself.
// It names the tables of searchPath that the anon key can write without row level security, and reports
// whether the login role is a superuser.
func ensureSetup(ctx context.Context, dbURL string, searchPath []string, stderr io.Writer) (super bool, err error) {
	// Unnamed statements whatever the mode: this one connection gains nothing from pgx's statement cache, whose
	// named statements clash with another instance's behind a transaction pooler that no URL parameter names.
	cfg, _, err := stack.ParseConnConfig(dbURL, stack.StatementModeUnnamed)
	if err != nil {
		return false, err
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return false, fmt.Errorf("connect to the database: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var user string
	if err := conn.QueryRow(ctx, `select current_user, rolsuper from pg_roles where rolname = current_user`).Scan(&user, &super); err != nil {
		return false, fmt.Errorf("read the login role: %w", err)
	}
	if super {
		fmt.Fprintf(stderr, "warning: the login role %s is a superuser, so a JWT may select any role of the cluster that is not a superuser; use a login role such as authenticator that is granted only anon, authenticated and service_role\n", user)
	}
	ok, err := dbsetup.Installed(ctx, conn)
	if err != nil {
		return super, err
	}
	if !ok {
		if !super {
			return super, fmt.Errorf("the database is not set up for pgreflect (roles, event triggers, auth helpers) and the login role %s may not do it: run `pgreflect setup --db-url <superuser URL>` first", user)
		}
		fmt.Fprintln(stderr, "Setting up the database for pgreflect...")
		if err := dbsetup.Apply(ctx, conn); err != nil {
			return super, err
		}
		warnForeignHelpers(ctx, conn, stderr)
		if err := existingGrants(ctx, conn, false, io.Discard, stderr); err != nil {
			return super, err
		}
	}
	warnAnonWritable(ctx, conn, searchPath, stderr)
	return super, nil
}
