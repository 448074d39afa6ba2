package pgtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/pgreflect/pgreflect/internal/pgcluster"
)

// TestSweepStopsTheClustersOfDeadTestBinaries leaves a running cluster whose maker has exited, as a killed test
// binary does: the sweep stops its server and removes its directory, and leaves alone the cluster of a running
// maker and a directory that names no maker.
func TestSweepStopsTheClustersOfDeadTestBinaries(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root, err := os.MkdirTemp("", "pgtest-sweep-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	orphan, live, unowned := filepath.Join(root, "pgreflect-test-orphan"), filepath.Join(root, "pgreflect-cluster-live"), filepath.Join(root, "pgreflect-test-unowned")
	for _, d := range []string{orphan, live, unowned} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(orphan, ownerFile), []byte(strconv.Itoa(dead.ProcessState.Pid())), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := markOwner(live); err != nil {
		t.Fatal(err)
	}
	port, err := pgcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	c, err := pgcluster.New(pgcluster.Options{DataDir: filepath.Join(orphan, "data"), Port: port, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c.Running(context.Background()) {
			_ = c.Stop(context.Background())
		}
	})
	postmaster, err := readPID(filepath.Join(orphan, "data", "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}

	if removed := sweepOrphans(root); !slices.Equal(removed, []string{orphan}) {
		t.Fatalf("removed %v, want only %s", removed, orphan)
	}
	deadline := time.Now().Add(30 * time.Second)
	for running(postmaster) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if running(postmaster) {
		t.Fatalf("the orphan's postmaster (pid %d) still runs", postmaster)
	}
	for _, d := range []string{live, unowned} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s: %v", d, err)
		}
	}
}
