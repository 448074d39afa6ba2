package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/internal/dbsetup"
	"github.com/pgreflect/pgreflect/internal/pgcluster"
	"github.com/pgreflect/pgreflect/internal/stack"
)

// localPassword is the superuser password of the local cluster, as in Supabase's local stack. The cluster
// listens on 127.0.0.1 only.
const localPassword = "postgres"

// setupTimeout bounds everything `start` does before it serves (initdb, server start, setup).
const setupTimeout = 3 * time.Minute

type startOptions struct {
	dir     string
	port    int
	dbPort  int
	dbURL   string
	workdir string
	schemas string
	demo    bool
	// grantExisting grants the API roles the objects that already exist in schema public (setup's flag).
	grantExisting bool
}

func runStart(args []string, stdout, stderr io.Writer) error {
	var o startOptions
	flags := newFlagSet("start", stderr)
	dir, workdir := addDirFlags(flags)
	flags.IntVar(&o.port, "port", 54321, "HTTP port on 127.0.0.1; when not given, [api] port of supabase/config.toml if set")
	flags.IntVar(&o.dbPort, "db-port", 54322, "PostgreSQL port on 127.0.0.1 of the local cluster")
	flags.StringVar(&o.dbURL, "db-url", "", "use this database (a superuser URL) instead of a local cluster")
	flags.StringVar(&o.schemas, "schemas", "", "comma-separated API search path (overrides [api] schemas and extra_search_path)")
	flags.BoolVar(&o.demo, "demo", false, "load the demo schema into schema public (a new local cluster gets it anyway; a --db-url database only with this flag)")
	flags.BoolVar(&o.grantExisting, "grant-existing", false, "grant anon, authenticated and service_role every privilege on the objects that already exist in schema public of a --db-url database, printing what it grants (a new local cluster needs nothing)")
	sf := addServerFlags(flags)
	flags.Usage = func() {
		fmt.Fprintln(flags.Output(), "usage: pgreflect start [flags]")
		fmt.Fprintln(flags.Output(), "Starts a local project: PostgreSQL under --dir (WORKDIR/.pgreflect unless given; none with --db-url), setup, demo schema in a new local cluster (or with --demo), keys, and the HTTP server until Ctrl-C.")
		flags.PrintDefaults()
	}
	if err := parseFlags(flags, args); err != nil {
		return err
	}
	if err := sf.check(); err != nil {
		return err
	}
	o.workdir = *workdir
	cfg, searchPath, err := loadConfig(o.workdir, o.schemas, stderr)
	if err != nil {
		return err
	}
	sf.configure(&cfg)
	if !flagSet(flags, "port") && cfg.API.Port != 0 {
		o.port = cfg.API.Port
	}
	if o.dir, err = resolveProjectDir(*dir, o.workdir); err != nil {
		return err
	}

	ctx, stop := shutdownContext()
	defer stop()

	if err := prepareDir(o.dir, o.dbURL == ""); err != nil {
		return err
	}
	pidFile, err := lockProject(o.dir)
	if err != nil {
		return err
	}
	defer unlockProject(pidFile)
	// Take the HTTP port first: failing on a busy port should not cost a database start.
	listener, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(o.port)))
	if err != nil {
		return fmt.Errorf("cannot listen on 127.0.0.1:%d (--port): %w; is another pgreflect or Supabase stack running? pick another port with --port", o.port, err)
	}
	defer listener.Close()

	env, err := readProjectEnv(o.dir)
	firstRun := errors.Is(err, fs.ErrNotExist)
	if err != nil && !firstRun {
		return err
	}
	secrets, err := secretsFrom(env)
	if err != nil {
		return err
	}

	setupCtx, cancelSetup := context.WithTimeout(ctx, setupTimeout)
	defer cancelSetup()
	adminURL := o.dbURL
	// The demo goes into a new project's cluster, or a new cluster of an old one (its data directory was
	// deleted); never into a database of the user's own (--db-url) unless asked.
	loadDemo := o.demo || (firstRun && o.dbURL == "")
	var cluster *pgcluster.Cluster // the project's own, nil with --db-url
	if o.dbURL == "" {
		var created bool
		cluster, created, err = startLocalCluster(setupCtx, o.dir, o.dbPort, stderr)
		if err != nil {
			return err
		}
		loadDemo = loadDemo || created
		defer func() {
			stopCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			// Ctrl-C in a terminal also reaches the postmaster, which then shuts down by itself.
			if cluster.Running(stopCtx) {
				if err := cluster.Stop(stopCtx); err != nil {
					fmt.Fprintln(stderr, "pgreflect start:", err)
				}
			}
		}()
		adminURL = cluster.URL("postgres")
	}
	requestURL, err := prepareDatabase(setupCtx, adminURL, secrets, databasePlan{loadDemo: loadDemo, grantExisting: o.grantExisting, searchPath: searchPath}, stdout, stderr)
	if err != nil {
		return err
	}

	apiURL := "http://" + listener.Addr().String()
	env = map[string]string{
		"API_URL":                apiURL,
		"GRAPHQL_URL":            apiURL + "/graphql/v1",
		"STUDIO_URL":             apiURL + "/console/",
		"DB_URL":                 adminURL,
		"PROJECT_REF":            secrets.ProjectRef,
		"ANON_KEY":               secrets.AnonKey,
		"SERVICE_ROLE_KEY":       secrets.ServiceRoleKey,
		"JWT_SECRET":             secrets.JWTSecret,
		"MANAGEMENT_URL":         apiURL,
		"MANAGEMENT_TOKEN":       secrets.ManagementToken,
		authenticatorPasswordKey: secrets.AuthenticatorPassword,
	}
	if err := writeProjectEnv(o.dir, env); err != nil {
		return err
	}
	keys, err := auth.NewKeys(secrets.JWTSecret)
	if err != nil {
		return err
	}
	// The project's superuser reads the pinned pg_graphql version and may switch to every API role.
	srv, closeStack, err := sf.newStack(setupCtx, stderr, servedProject{
		workdir: o.workdir, requestURL: requestURL, adminURL: adminURL, schemaURL: adminURL,
		secrets: secrets, keys: keys, searchPath: searchPath, cfg: cfg, apiURL: apiURL,
	})
	if err != nil {
		return err
	}
	defer closeStack()
	cancelSetup()

	printProject(stdout, env)
	fmt.Fprintf(stdout, "\nServing on %s (search path: %s). Stop with Ctrl-C or: pgreflect stop --dir %s\n", apiURL, joinComma(searchPath), o.dir)
	if cluster == nil {
		return serveStack(ctx, srv, listener, sf)
	}
	return serveSupervised(ctx, srv, listener, sf, cluster, apiLogin{adminURL: adminURL, requestURL: requestURL}, stderr)
}

// serveSupervised serves until ctx is done while superviseCluster keeps the project's PostgreSQL running; when
// PostgreSQL cannot be restarted it stops serving and returns why. The supervisor has ended when it returns,
// so that it cannot restart PostgreSQL behind start's own shutdown of it.
func serveSupervised(ctx context.Context, srv *stack.Stack, listener net.Listener, sf *serverFlags, cluster *pgcluster.Cluster, login apiLogin, stderr io.Writer) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	supervisor := make(chan struct{})
	go func() {
		defer close(supervisor)
		if err := superviseCluster(ctx, cluster, login, clusterCheckInterval, stderr); err != nil {
			cancel(err)
		}
	}()
	err := serveStack(ctx, srv, listener, sf)
	cause := context.Cause(ctx)
	cancel(nil)
	<-supervisor
	if cause != nil && !errors.Is(cause, context.Canceled) {
		return errors.Join(cause, err)
	}
	return err
}

// projectName is what the console calls the project: the name of the directory it lives in, as the Supabase
// CLI names a project after its directory.
func projectName(workdir string) string {
	if abs, err := filepath.Abs(workdir); err == nil {
		return filepath.Base(abs)
	}
	return filepath.Base(workdir)
}

// prepareDir creates the project directory. With a local cluster and pgreflect running as root, PostgreSQL runs
// as an unprivileged OS user, which must be able to reach the directory.
func prepareDir(dir string, localCluster bool) error {
	_, statErr := os.Stat(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create project directory: %w", err)
	}
	if !localCluster || os.Geteuid() != 0 {
		return nil
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		if err := os.Chmod(dir, 0o755); err != nil { // the umask may have removed o+x
			return err
		}
	}
	for p := dir; ; p = filepath.Dir(p) {
		info, err := os.Stat(p)
		if err != nil {
			return err
		}
		if info.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("running as root, PostgreSQL runs as an unprivileged OS user, which cannot reach %s because %s is not searchable by other users: use a --dir it can reach (for example under /var/lib or /tmp) or run: chmod o+x %s", dir, p, p)
		}
		if parent := filepath.Dir(p); parent == p {
			return nil
		}
	}
}

// startLocalCluster initdbs DIR/data on first use (created) and starts it on port.
func startLocalCluster(ctx context.Context, dir string, port int, stderr io.Writer) (_ *pgcluster.Cluster, created bool, err error) {
	cluster, err := pgcluster.New(pgcluster.Options{
		DataDir:  filepath.Join(dir, dataDirName),
		Port:     port,
		Password: localPassword,
		// Live queries follow changes by logical decoding (docs/subscriptions.md).
		Settings: []string{"wal_level=logical"},
	})
	if err != nil {
		return nil, false, err
	}
	if !cluster.Initialized() {
		fmt.Fprintf(stderr, "Creating a PostgreSQL cluster in %s...\n", cluster.DataDir())
		if err := cluster.Init(ctx); err != nil {
			return nil, false, err
		}
		created = true
	}
	if cluster.Running(ctx) {
		// Left over from a start that did not shut down (no live pid file was found): restart it on the
		// requested port.
		fmt.Fprintln(stderr, "Stopping a PostgreSQL left running on this directory...")
		if err := cluster.Stop(ctx); err != nil {
			return nil, false, err
		}
	}
	if err := portFree(port); err != nil {
		return nil, false, fmt.Errorf("cannot start PostgreSQL on 127.0.0.1:%d (--db-port): %w; pick another port with --db-port", port, err)
	}
	fmt.Fprintf(stderr, "Starting PostgreSQL on 127.0.0.1:%d...\n", port)
	if err := cluster.Start(ctx); err != nil {
		return nil, false, err
	}
	return cluster, created, nil
}

func portFree(port int) error {
	return portFreeAt(net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
}

// portFreeAt reports an error when addr cannot be listened on.
func portFreeAt(addr string) error {
	l, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return errors.New("the port is already in use")
	}
	if err != nil {
		return err
	}
	return l.Close()
}

// databasePlan is what prepareDatabase does besides dbsetup.Apply.
type databasePlan struct {
	loadDemo      bool
	grantExisting bool
	// searchPath is the API's: the tables on it that anon may write without row level security are named.
	searchPath []string
}

// prepareDatabase runs dbsetup as the superuser of adminURL, grants the existing objects of schema public when
// asked (naming them otherwise, on the first setup of the database), loads the demo when asked, warns of the
// tables the anon key can write without row level security, and returns the URL the
// API's requests connect with: adminURL with a login role that may only become the API roles, so that a JWT
// can only select those. That role is authenticator, created with the project's password when the cluster has
// none; an authenticator of the cluster that the password does not open (another project's, or the cluster
// owner's) is left alone, and the project gets a login role of its own, authenticator_<project ref>.
func prepareDatabase(ctx context.Context, adminURL string, secrets projectSecrets, plan databasePlan, stdout, stderr io.Writer) (string, error) {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return "", fmt.Errorf("connect to the database: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	password := secrets.AuthenticatorPassword
	installed, err := dbsetup.Installed(ctx, conn)
	if err != nil {
		return "", err
	}
	created, err := dbsetup.CreateLoginRole(ctx, conn, "authenticator", password)
	if err != nil {
		return "", fmt.Errorf("set up the database: %w", err)
	}
	if err := dbsetup.Apply(ctx, conn); err != nil {
		return "", fmt.Errorf("set up the database: %w", err)
	}
	warnForeignHelpers(ctx, conn, stderr)
	// Named on the first setup only: a REVOKE made since is the user's choice, not news.
	if plan.grantExisting || !installed {
		if err := existingGrants(ctx, conn, plan.grantExisting, stdout, stderr); err != nil {
			return "", err
		}
	}
	if plan.loadDemo {
		if err := dbsetup.LoadDemo(ctx, conn); err != nil {
			return "", err
		}
	}
	warnAnonWritable(ctx, conn, plan.searchPath, stderr)
	requestURL := withUser(adminURL, "authenticator", password)
	if created || canLogIn(ctx, requestURL) {
		return requestURL, nil
	}
	own := "authenticator_" + secrets.ProjectRef
	fmt.Fprintf(stderr, "note: the role authenticator of this PostgreSQL server has a password this project does not know (another project's?); it is left as it is and this project's API logs in as %s\n", own)
	if created, err = dbsetup.CreateLoginRole(ctx, conn, own, password); err != nil {
		return "", err
	}
	if !created {
		// Named after this project, so an earlier start of it created the role: its password is ours to set.
		if err := dbsetup.SetPassword(ctx, conn, own, password); err != nil {
			return "", err
		}
	}
	return withUser(adminURL, own, password), nil
}

// canLogIn reports whether connString opens a connection.
func canLogIn(ctx context.Context, connString string) bool {
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		return false
	}
	conn.Close(ctx)
	return true
}

// warnForeignHelpers names the auth helpers that setup kept although their result differs from Supabase's.
func warnForeignHelpers(ctx context.Context, conn *pgx.Conn, stderr io.Writer) {
	foreign, err := dbsetup.ForeignHelpers(ctx, conn)
	if err != nil {
		fmt.Fprintln(stderr, "warning:", err)
		return
	}
	if len(foreign) > 0 {
		fmt.Fprintf(stderr, "warning: kept the database's own %s, not Supabase's: RLS policies written for Supabase that call them may not work\n", strings.Join(foreign, ", "))
	}
}

// withUser returns the connection string with another user and password; it accepts URLs and keyword=value
// strings.
func withUser(connString, user, password string) string {
	if u, err := url.Parse(connString); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.User = url.UserPassword(user, password)
		return u.String()
	}
	quote := func(v string) string {
		return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
	}
	// Later keywords win.
	return connString + " user=" + quote(user) + " password=" + quote(password)
}
