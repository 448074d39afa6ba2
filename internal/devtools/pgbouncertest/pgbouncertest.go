// Package pgbouncertest runs a real PgBouncer in transaction mode in front of a test server, for the tests of
// what must work behind a transaction pooler (what a Supabase project's pooled connection string points at).
// It uses Debian's pgbouncer; without it the test is skipped, or failed under CI (internal/devtools/testenv).
package pgbouncertest

import (
	"bytes"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/internal/pgcluster"
)

// Options describe the pooler.
type Options struct {
	// PoolSize is the number of server connections per database and user (default 2): fewer than the
	// clients', so that a client's transactions run on different server sessions.
	PoolSize int
	// Users may log in, without a password; the pooler logs in to the server with the password given here
	// ("" for a server that trusts loopback connections, as pgtest's does).
	Users map[string]string
}

// Bouncer is a running PgBouncer.
type Bouncer struct {
	addr string
}

// Start starts PgBouncer in transaction mode on a free loopback port, in front of the server that serverURL
// names, and stops it when the test ends.
func Start(t testing.TB, serverURL string, o Options) *Bouncer {
	t.Helper()
	return start(t, serverURL, o, pgcluster.FreePort)
}

// portAttempts bounds the ports start tries: a port is free when chosen, and another process (a cluster or a
// connection of another package's tests) may take it before PgBouncer binds it.
const portAttempts = 5

// start is Start with the ports it tries taken from freePort.
func start(t testing.TB, serverURL string, o Options, freePort func() (int, error)) *Bouncer {
	t.Helper()
	bin := testenv.LookPath(t, "the pooler tests run behind a real PgBouncer in transaction mode (apt-get install pgbouncer)",
		"pgbouncer", "/usr/sbin/pgbouncer")
	if o.PoolSize == 0 {
		o.PoolSize = 2
	}
	server, err := url.Parse(serverURL)
	if err != nil {
		t.Fatalf("pgbouncertest: server URL: %v", err)
	}
	var taken []int
	for range portAttempts {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		if b := launch(t, bin, server, o, port); b != nil {
			return b
		}
		taken = append(taken, port)
	}
	t.Fatalf("pgbouncertest: every port tried was taken before PgBouncer could bind it: %v", taken)
	return nil
}

// launch runs PgBouncer on port and returns it once it accepts connections there, or nil when another process
// holds the port. A connection that port accepts is PgBouncer's only once PgBouncer says it listens: before
// that, it may be the other process's.
func launch(t testing.TB, bin string, server *url.URL, o Options, port int) *Bouncer {
	t.Helper()
	dir, err := os.MkdirTemp("", "pgbouncertest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var users strings.Builder
	for name, password := range o.Users {
		fmt.Fprintf(&users, "%q %q\n", name, password)
	}
	logFile := filepath.Join(dir, "pgbouncer.log")
	ini := fmt.Sprintf(`[databases]
* = host=%s port=%s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
default_pool_size = %d
max_client_conn = 500
ignore_startup_parameters = extra_float_digits
logfile = %s
server_login_retry = 1
`, server.Hostname(), server.Port(), port, filepath.Join(dir, "users.txt"), o.PoolSize, logFile)
	for name, content := range map[string]string{"users.txt": users.String(), "pgbouncer.ini": ini} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, filepath.Join(dir, "pgbouncer.ini"))
	if os.Geteuid() == 0 {
		// PgBouncer refuses to run as root, as PostgreSQL does.
		cred, err := pgcluster.UnprivilegedUser()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	out := &testenv.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("pgbouncertest: start pgbouncer: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	b := &Bouncer{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
	listening := []byte("listening on " + b.addr)
	deadline := time.Now().Add(10 * time.Second)
	for {
		log, _ := os.ReadFile(logFile)
		if bytes.Contains(log, listening) {
			c, err := net.DialTimeout("tcp", b.addr, time.Second)
			if err == nil {
				c.Close()
				return b
			}
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(logFile)
			if bytes.Contains(log, []byte("Address already in use")) {
				return nil
			}
			t.Fatalf("pgbouncertest: pgbouncer exited: %s\n%s", out.String(), log)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgbouncertest: pgbouncer does not accept connections on %s: %s\n%s", b.addr, out.String(), log)
		}
	}
}

// URL is dbURL (a database of the server behind the pooler) through the pooler, as user.
func (b *Bouncer) URL(t testing.TB, dbURL, user string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatalf("pgbouncertest: database URL: %v", err)
	}
	u.Host = b.addr
	u.User = url.User(user)
	return u.String()
}
