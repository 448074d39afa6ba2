package pgtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pgreflect/pgreflect/internal/pgcluster"
	"github.com/pgreflect/pgreflect/internal/procstat"
)

// StartCluster starts a cluster of the calling test's own, for a test that stops, crashes or freezes its
// server, which the binary's shared server must never be; it is stopped when the test ends.
func StartCluster(t testing.TB) *pgcluster.Cluster {
	t.Helper()
	return startCluster(t, func(ctx context.Context, c *pgcluster.Cluster) error { return c.Init(ctx) })
}

// StartReplica starts a streaming replica of primary (pg_basebackup -R), stopped when the test ends.
func StartReplica(t testing.TB, primary *pgcluster.Cluster) *pgcluster.Cluster {
	t.Helper()
	// The npm packages of the other PostgreSQL versions (.ci/pg-versions) ship no pg_basebackup: replicas are
	// tested on the default server, whose packages have it.
	if dir, err := pgcluster.BinDir(); err == nil && os.Getenv("PGREFLECT_PG_BINDIR") != "" {
		if _, err := os.Stat(filepath.Join(dir, "pg_basebackup")); err != nil {
			t.Skipf("a replica needs pg_basebackup, which %s lacks (the npm packages of other versions ship none)", dir)
		}
	}
	return startCluster(t, func(ctx context.Context, c *pgcluster.Cluster) error { return c.InitReplica(ctx, primary.Port()) })
}

// startCluster makes a cluster's data directory with init and starts it.
func startCluster(t testing.TB, init func(context.Context, *pgcluster.Cluster) error) *pgcluster.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := clusterDir(t)
	// Fast, but with synchronous commit: these clusters are crashed (an immediate shutdown), which loses the
	// commits an asynchronous commit had not written yet; fsync stays off, since the machine does not crash.
	settings := append(slices.Clip(liveSettings), "synchronous_commit=on")
	c, err := startOnFreePort(ctx, pgcluster.Options{DataDir: filepath.Join(dir, "data"), Fast: true, Settings: settings},
		init, pgcluster.FreePort)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if c.Running(ctx) {
			if err := c.Stop(ctx); err != nil {
				t.Errorf("pgtest: stop the cluster: %v", err)
			}
		}
	})
	return c
}

// Freeze stops the postmaster of c and every process it started with SIGSTOP, and returns once each is
// stopped: the server keeps its sockets open and the kernel keeps accepting and acknowledging, but nothing
// answers, as with a stuck host or a network partition. The returned thaw (SIGCONT) is also registered to run
// when the test ends, so that no server stays stopped (and a watchdog process thaws it after maxFrozen should
// the test binary die); calling it more than once is harmless.
func Freeze(t testing.TB, c *pgcluster.Cluster) (thaw func()) {
	t.Helper()
	postmaster, err := c.PostmasterPID()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	// The postmaster first, so that it starts no process while its children are stopped.
	pids := []int{postmaster}
	if err := syscall.Kill(postmaster, syscall.SIGSTOP); err != nil {
		t.Fatalf("pgtest: stop the postmaster: %v", err)
	}
	var once sync.Once
	var watchdog *exec.Cmd
	thaw = func() {
		once.Do(func() {
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGCONT)
			}
			if watchdog != nil {
				_ = syscall.Kill(-watchdog.Process.Pid, syscall.SIGKILL) // its group: the shell and its sleep
				_ = watchdog.Wait()
			}
		})
	}
	t.Cleanup(thaw)
	// kill returns before the signal has stopped the postmaster: one in the middle of a fork (a pool opening a
	// connection) makes its child after the listing below, and that backend then answers queries while the rest is
	// frozen (CI saw a frozen replica answer two queries). Once the postmaster is stopped, every child it made is
	// listed; each is awaited too, so that the caller's next request meets a frozen server.
	waitStopped(t, postmaster)
	children, err := procstat.Children(postmaster)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	for pid := range children {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err == nil {
			pids = append(pids, pid)
		}
	}
	for _, pid := range pids[1:] {
		waitStopped(t, pid)
	}
	// A test binary that dies (a panic, go test's -timeout) runs no cleanup: a process of its own, which
	// outlives it, thaws the server after maxFrozen whatever happens.
	list := make([]string, len(pids))
	for i, pid := range pids {
		list[i] = strconv.Itoa(pid)
	}
	watchdog = exec.Command("sh", "-c", fmt.Sprintf("sleep %d; kill -CONT %s", int(maxFrozen.Seconds()), strings.Join(list, " ")))
	watchdog.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := watchdog.Start(); err != nil {
		watchdog = nil
		thaw()
		t.Fatalf("pgtest: start the thaw watchdog: %v", err)
	}
	return thaw
}

// maxFrozen bounds how long Freeze leaves a server stopped when the test cannot thaw it.
const maxFrozen = 2 * time.Minute

// waitStopped waits until process pid is stopped by a signal, or has exited.
func waitStopped(t testing.TB, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := procstat.Read(pid)
		if err != nil || s.Stopped() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgtest: process %d is not stopped after 10s (state %c)", pid, s.State)
		}
		time.Sleep(time.Millisecond)
	}
}

// clusterDir is a directory for a cluster of the test, removed when it ends. Not t.TempDir: its parent is
// private, and PostgreSQL may run as another OS user (when tests run as root).
func clusterDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pgreflect-cluster-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := markOwner(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startOnFreePort makes a cluster of opts on a port that ports gives, prepares its data directory with init and
// starts it. A port the kernel reported free can be taken before the server binds it (another test's outgoing
// connection gets it as its local port, or another package's server binds it first): the start is then tried on
// another port, up to five times.
func startOnFreePort(ctx context.Context, opts pgcluster.Options, init func(context.Context, *pgcluster.Cluster) error,
	ports func() (int, error)) (*pgcluster.Cluster, error) {
	for attempt := 1; ; attempt++ {
		port, err := ports()
		if err != nil {
			return nil, err
		}
		opts.Port = port
		c, err := pgcluster.New(opts)
		if err != nil {
			return nil, err
		}
		if attempt == 1 {
			if err := init(ctx, c); err != nil {
				return nil, err
			}
		}
		err = c.Start(ctx)
		if err == nil {
			return c, nil
		}
		if attempt == 5 || !strings.Contains(err.Error(), "Address already in use") {
			return nil, fmt.Errorf("start PostgreSQL on port %d (attempt %d): %w", port, attempt, err)
		}
	}
}
