// Package pgcluster creates, starts and stops a local PostgreSQL cluster with the server binaries installed on
// the machine. It serves both `pgreflect start` (a persistent cluster under the project directory) and the test
// support package (a throwaway cluster per test binary).
//
// PostgreSQL refuses to run as root, so when the current process is root the cluster's files are owned by, and
// its processes run as, an unprivileged OS user (postgres, or nobody when that does not exist).
package pgcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// Options describe a cluster.
type Options struct {
	// DataDir is the cluster's data directory.
	DataDir string
	// Port is the TCP port on 127.0.0.1.
	Port int
	// Password, when set, is the superuser's password and TCP connections must present it (scram-sha-256).
	// Without it TCP connections from 127.0.0.1 are trusted, which suits throwaway test clusters only.
	Password string
	// Fast trades durability for speed (fsync off and friends): for tests.
	Fast bool
	// Log receives the server's log file path; default DataDir/../postgres.log.
	LogFile string
	// Settings are extra server settings (name=value), e.g. shared_preload_libraries=pg_stat_statements.
	Settings []string
}

// Superuser is the name of the cluster's bootstrap superuser.
const Superuser = "postgres"

// Cluster is a running cluster.
type Cluster struct {
	opts   Options
	binDir string
	runAs  *syscall.Credential
}

// BinDir finds the directory of the PostgreSQL server binaries: $PGREFLECT_PG_BINDIR, `pg_config --bindir`,
// the newest /usr/lib/postgresql/*/bin, or the directory of initdb on PATH.
func BinDir() (string, error) {
	if d := os.Getenv("PGREFLECT_PG_BINDIR"); d != "" {
		return d, nil
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		d := strings.TrimSpace(string(out))
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("PostgreSQL server binaries not found: install postgresql or set PGREFLECT_PG_BINDIR")
}

func versionOf(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// New prepares a handle on the cluster described by opts; nothing is started.
func New(opts Options) (*Cluster, error) {
	if opts.DataDir == "" || opts.Port == 0 {
		return nil, errors.New("pgcluster: DataDir and Port are required")
	}
	abs, err := filepath.Abs(opts.DataDir)
	if err != nil {
		return nil, err
	}
	opts.DataDir = abs
	if opts.LogFile == "" {
		opts.LogFile = filepath.Join(filepath.Dir(abs), "postgres.log")
	}
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	c := &Cluster{opts: opts, binDir: bin}
	if os.Geteuid() == 0 {
		if c.runAs, err = UnprivilegedUser(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// UnprivilegedUser is the OS user a root process runs database servers as (PostgreSQL and PgBouncer refuse to
// run as root): postgres, or nobody when that does not exist.
func UnprivilegedUser() (*syscall.Credential, error) {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.New("running as root needs an unprivileged OS user (postgres or nobody) to run PostgreSQL")
}

// Initialized reports whether the data directory already holds a cluster.
func (c *Cluster) Initialized() bool {
	_, err := os.Stat(filepath.Join(c.opts.DataDir, "PG_VERSION"))
	return err == nil
}

// Init runs initdb into an empty data directory.
func (c *Cluster) Init(ctx context.Context) error {
	if err := os.MkdirAll(c.opts.DataDir, 0o700); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	if err := c.own(c.opts.DataDir); err != nil {
		return err
	}
	args := []string{"-D", c.opts.DataDir, "-U", Superuser, "-E", "UTF8", "--locale=C", "--auth-local=trust"}
	if c.opts.Password != "" {
		pwfile := filepath.Join(filepath.Dir(c.opts.DataDir), ".pwfile")
		if err := os.WriteFile(pwfile, []byte(c.opts.Password+"\n"), 0o600); err != nil {
			return err
		}
		defer os.Remove(pwfile)
		if err := c.own(pwfile); err != nil {
			return err
		}
		args = append(args, "--auth-host=scram-sha-256", "--pwfile="+pwfile)
	} else {
		args = append(args, "--auth-host=trust")
	}
	if c.opts.Fast {
		args = append(args, "--no-sync")
	}
	if out, err := c.run(ctx, "initdb", args...); err != nil {
		return fmt.Errorf("initdb: %w\n%s", err, out)
	}
	return nil
}

// InitReplica fills the empty data directory with a base backup of the cluster at primaryPort on 127.0.0.1
// (pg_basebackup -R, as the superuser, whose replication connections the primary must accept), so that the
// cluster starts as a streaming replica of it.
func (c *Cluster) InitReplica(ctx context.Context, primaryPort int) error {
	if err := os.MkdirAll(c.opts.DataDir, 0o700); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	if err := c.own(c.opts.DataDir); err != nil {
		return err
	}
	conn := fmt.Sprintf("host=127.0.0.1 port=%d user=%s", primaryPort, Superuser)
	if out, err := c.run(ctx, "pg_basebackup", "-D", c.opts.DataDir, "-d", conn, "-R", "-X", "stream", "-c", "fast"); err != nil {
		return fmt.Errorf("pg_basebackup: %w\n%s", err, out)
	}
	return nil
}

// Start starts the server and waits until it accepts connections.
func (c *Cluster) Start(ctx context.Context) error {
	sock := c.socketDir()
	if err := os.MkdirAll(sock, 0o755); err != nil {
		return err
	}
	if err := c.own(sock); err != nil {
		return err
	}
	if err := touch(c.opts.LogFile); err != nil {
		return err
	}
	if err := c.own(c.opts.LogFile); err != nil {
		return err
	}
	settings := []string{
		"-p", strconv.Itoa(c.opts.Port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories=" + sock,
		"-c", "max_connections=200",
	}
	if c.opts.Fast {
		settings = append(settings, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
			"-c", "shared_buffers=32MB")
	}
	for _, kv := range c.opts.Settings {
		settings = append(settings, "-c", kv)
	}
	out, err := c.run(ctx, "pg_ctl", "start", "-w", "-t", "60", "-D", c.opts.DataDir, "-l", c.opts.LogFile,
		"-o", strings.Join(settings, " "))
	if err != nil {
		log, _ := os.ReadFile(c.opts.LogFile)
		return fmt.Errorf("pg_ctl start: %w\n%s\n%s", err, out, tail(log, 2000))
	}
	return nil
}

// Stop stops the server (fast shutdown: open sessions are ended).
func (c *Cluster) Stop(ctx context.Context) error {
	out, err := c.run(ctx, "pg_ctl", "stop", "-w", "-m", "fast", "-D", c.opts.DataDir)
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %w\n%s", err, out)
	}
	return nil
}

// Crash stops the server the way a crash does (immediate shutdown: every process exits at once, sessions are
// cut without a goodbye, and the next start recovers from the WAL).
func (c *Cluster) Crash(ctx context.Context) error {
	out, err := c.run(ctx, "pg_ctl", "stop", "-w", "-m", "immediate", "-D", c.opts.DataDir)
	if err != nil {
		return fmt.Errorf("pg_ctl stop -m immediate: %w\n%s", err, out)
	}
	return nil
}

// PostmasterPID reads the running server's postmaster pid from its data directory.
func (c *Cluster) PostmasterPID() (int, error) {
	b, err := os.ReadFile(filepath.Join(c.opts.DataDir, "postmaster.pid"))
	if err != nil {
		return 0, fmt.Errorf("read the postmaster's pid: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strconv.Atoi(strings.TrimSpace(line))
}

// Running reports whether a server is running on the data directory.
func (c *Cluster) Running(ctx context.Context) bool {
	_, err := c.run(ctx, "pg_ctl", "status", "-D", c.opts.DataDir)
	return err == nil
}

// URL is the connection URL of database db as the superuser over TCP.
func (c *Cluster) URL(db string) string {
	u := url.URL{Scheme: "postgresql", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(c.opts.Port)), Path: "/" + db}
	if c.opts.Password != "" {
		u.User = url.UserPassword(Superuser, c.opts.Password)
	} else {
		u.User = url.User(Superuser)
	}
	u.RawQuery = "sslmode=disable"
	return u.String()
}

// Port is the server's TCP port.
func (c *Cluster) Port() int { return c.opts.Port }

// DataDir is the absolute data directory.
func (c *Cluster) DataDir() string { return c.opts.DataDir }

// LogFile is the server's log file.
func (c *Cluster) LogFile() string { return c.opts.LogFile }

func (c *Cluster) socketDir() string { return filepath.Join(filepath.Dir(c.opts.DataDir), "sock") }

func (c *Cluster) run(ctx context.Context, prog string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(c.binDir, prog), args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	cmd.Dir = "/"
	if c.runAs != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.runAs}
	}
	err := cmd.Run()
	return buf.Bytes(), err
}

// own hands a path to the unprivileged user when running as root.
func (c *Cluster) own(path string) error {
	if c.runAs == nil {
		return nil
	}
	if err := os.Chown(path, int(c.runAs.Uid), int(c.runAs.Gid)); err != nil {
		return fmt.Errorf("hand %s to the postgres OS user: %w", path, err)
	}
	return nil
}

func touch(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// FreePort asks the kernel for a free TCP port on 127.0.0.1.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
