package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/pgreflect/pgreflect/internal/pgcluster"
)

// stopTimeout bounds the wait for a `pgreflect start` to shut down (it stops its PostgreSQL first).
const stopTimeout = 90 * time.Second

func runStop(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("stop", stderr)
	dir, workdir := addDirFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: pgreflect stop [--workdir DIR | --dir DIR]")
		fmt.Fprintln(fs.Output(), "Stops a running `pgreflect start` and its PostgreSQL.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	abs, err := resolveProjectDir(*dir, *workdir)
	if err != nil {
		return err
	}
	stopped := false
	if pid, alive := readPID(abs); alive {
		if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
			return fmt.Errorf("signal pgreflect (pid %d): %w", pid, err)
		}
		deadline := time.Now().Add(stopTimeout)
		for processAlive(pid) {
			if time.Now().After(deadline) {
				return fmt.Errorf("pgreflect (pid %d) did not stop within %s", pid, stopTimeout)
			}
			time.Sleep(50 * time.Millisecond)
		}
		fmt.Fprintf(stdout, "Stopped pgreflect (pid %d).\n", pid)
		stopped = true
	}
	// A PostgreSQL may be left running without its pgreflect (killed with SIGKILL, say).
	if _, err := os.Stat(filepath.Join(abs, dataDirName)); err == nil {
		// Stopping does not use the port, which New requires.
		cluster, err := pgcluster.New(pgcluster.Options{DataDir: filepath.Join(abs, dataDirName), Port: 1})
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if cluster.Running(ctx) {
			if err := cluster.Stop(ctx); err != nil {
				return err
			}
			fmt.Fprintln(stdout, "Stopped PostgreSQL.")
			stopped = true
		}
	}
	if !stopped {
		fmt.Fprintf(stdout, "pgreflect is not running on %s.\n", abs)
	}
	return nil
}
