// Package pgtest gives tests a real PostgreSQL: one throwaway cluster per test binary (initdb into a temporary
// directory, fast settings, a free port) and one fresh database per test. When PGREFLECT_TEST_DATABASE_URL is
// set, that server is used instead and only the per-test databases are created and dropped on it.
//
// It is a test kit for your own tests as well as pgreflect's: a program that embeds resolve, or talks to a
// pgreflect server, can test against a real PostgreSQL the same way (see the example). Main, NewDB, ServerURL,
// ServerMajor and SkipBelow are its stable API; StartCluster, StartReplica and Freeze hand out the
// repository's internal cluster type and serve pgreflect's own replica and outage tests.
//
// Use it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
// and in a test:
//
//	url := pgtest.NewDB(t)
//
// The server's binaries are pgcluster's (PGREFLECT_PG_BINDIR picks a PostgreSQL version: `make test PG=17`).
// Main prints the version that runs as "pgtest: PostgreSQL <version>", which `make test` collects.
package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/internal/pgcluster"
)

// liveSettings let live queries follow changes by logical decoding, on a temporary slot per server under test.
var liveSettings = []string{"wal_level=logical", "max_replication_slots=40", "max_wal_senders=40"}

// EnvURL names the environment variable that points the tests at an existing server.
const EnvURL = "PGREFLECT_TEST_DATABASE_URL"

// server is the admin URL of the server every test of this binary uses, and serverVersionNum its
// server_version_num (170004 for 17.4); both set once by Main.
var (
	server           string
	serverVersionNum int
)

var dbSeq atomic.Int64

// Main starts the cluster (unless EnvURL is set), runs the tests and stops the cluster.
func Main(m *testing.M) int {
	if u := os.Getenv(EnvURL); u != "" {
		server = u
		return run(m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sweepOrphans(os.TempDir())
	dir, err := os.MkdirTemp("", "pgreflect-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgtest:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := markOwner(dir); err != nil {
		fmt.Fprintln(os.Stderr, "pgtest:", err)
		return 1
	}
	// The server may run as an unprivileged OS user, which must reach the data directory.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "pgtest:", err)
		return 1
	}
	c, err := startOnFreePort(ctx, pgcluster.Options{DataDir: filepath.Join(dir, "data"), Fast: true,
		// Tests count plans per call (pg_stat_statements: Debian's postgresql-contrib, or .ci/pg-versions).
		Settings: append([]string{"shared_preload_libraries=pg_stat_statements", "pg_stat_statements.track_planning=on"},
			liveSettings...)},
		func(ctx context.Context, c *pgcluster.Cluster) error { return c.Init(ctx) }, pgcluster.FreePort)
	if err == nil {
		defer func() {
			stopCtx, stopCancel := context.WithTimeout(context.Background(), time.Minute)
			defer stopCancel()
			if err := c.Stop(stopCtx); err != nil {
				fmt.Fprintln(os.Stderr, "pgtest:", err)
			}
		}()
		server = c.URL("postgres")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgtest: start PostgreSQL:", err)
		return 1
	}
	return run(m)
}

// run reads and reports the server's version, then runs the tests.
func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	version, err := readVersion(ctx, server)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgtest:", err)
		return 1
	}
	// On stderr, which `go test -json` reports as the package's output (internal/devtools/testsummary lists it), and
	// not stdout, where a test's helper process (a test binary run again) speaks to its test.
	fmt.Fprintf(os.Stderr, "%s%s (server_version_num %d)\n", VersionLinePrefix, version, serverVersionNum)
	return m.Run()
}

// VersionLinePrefix starts the line in which Main reports the server's version.
const VersionLinePrefix = "pgtest: PostgreSQL "

func readVersion(ctx context.Context, url string) (string, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return "", fmt.Errorf("connect to read the server version: %w", err)
	}
	defer conn.Close(ctx)
	var version string
	if err := conn.QueryRow(ctx, "select current_setting('server_version'), current_setting('server_version_num')::int").
		Scan(&version, &serverVersionNum); err != nil {
		return "", fmt.Errorf("read the server version: %w", err)
	}
	return version, nil
}

// ServerMajor is the major version of the test server (14 for 14.12). It needs Main to have run.
func ServerMajor(t testing.TB) int {
	t.Helper()
	if serverVersionNum == 0 {
		t.Fatal("pgtest: no server; call pgtest.Main from TestMain")
	}
	return serverVersionNum / 10000
}

// SkipBelow skips t on a server older than major, saying which version it needs and why, for a test of what
// only newer versions have (PostgreSQL 18's virtual generated columns, say).
func SkipBelow(t testing.TB, major int, why string) {
	t.Helper()
	if got := ServerMajor(t); got < major {
		t.Skipf("needs PostgreSQL %d or later (%s); the test server is PostgreSQL %d", major, why, got)
	}
}

// ServerURL is the admin URL of the test server (its maintenance database). It needs Main to have run.
func ServerURL(t testing.TB) string {
	t.Helper()
	if server == "" {
		t.Fatal("pgtest: no server; call pgtest.Main from TestMain")
	}
	return server
}

// NewDB creates an empty database for the calling test, drops it when the test ends, and returns a
// superuser URL to it.
func NewDB(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, ServerURL(t))
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer admin.Close(ctx)
	name := fmt.Sprintf("t_%d_%d_%s", os.Getpid(), dbSeq.Add(1), sanitize(t.Name()))
	if len(name) > 63 {
		name = name[:63]
	}
	if _, err := admin.Exec(ctx, "create database "+pgx.Identifier{name}.Sanitize()+" template template0"); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		admin, err := pgx.Connect(ctx, server)
		if err != nil {
			t.Errorf("pgtest: connect for cleanup: %v", err)
			return
		}
		defer admin.Close(ctx)
		if _, err := admin.Exec(ctx, "drop database if exists "+pgx.Identifier{name}.Sanitize()+" with (force)"); err != nil {
			t.Errorf("pgtest: drop database: %v", err)
		}
	})
	return withDatabase(t, server, name)
}

func withDatabase(t testing.TB, serverURL, db string) string {
	u, err := url.Parse(serverURL)
	if err != nil {
		t.Fatalf("pgtest: bad server URL: %v", err)
	}
	u.Path = "/" + db
	return u.String()
}

func sanitize(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}
