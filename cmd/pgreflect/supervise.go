package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/pgreflect/pgreflect/pgcluster"
)

// clusterCheckInterval is how often `start` checks that its local PostgreSQL still runs.
const clusterCheckInterval = 2 * time.Second

// superviseCluster restarts the project's own PostgreSQL when it stops while `start` serves (killed, crashed
// beyond its own recovery, stopped with pg_ctl): without it the API answers 503 until someone restarts the
// whole project. It returns, with the reason, only when the server cannot be restarted, so that `start` exits
// saying why instead of serving errors; it returns nil when ctx is done.
func superviseCluster(ctx context.Context, cluster *pgcluster.Cluster, interval time.Duration, stderr io.Writer) error {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
		if cluster.Running(ctx) || ctx.Err() != nil {
			continue // a Ctrl-C reaches PostgreSQL too, which may stop before ctx is done: checked again
		}
		fmt.Fprintf(stderr, "PostgreSQL of this project (%s) stopped; restarting it on 127.0.0.1:%d...\n", cluster.DataDir(), cluster.Port())
		if err := cluster.Start(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("the project's PostgreSQL stopped and could not be restarted (its log: %s): %w", cluster.LogFile(), err)
		}
		fmt.Fprintln(stderr, "PostgreSQL restarted.")
	}
}
