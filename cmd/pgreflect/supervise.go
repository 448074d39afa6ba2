package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgreflect/pgreflect/internal/dbsetup"
	"github.com/pgreflect/pgreflect/internal/pgcluster"
)

// clusterCheckInterval is how often `start` checks that its local PostgreSQL still runs.
const clusterCheckInterval = 2 * time.Second

// apiLogin is how the API's requests log in to the project's own cluster, and how to fix that login.
type apiLogin struct {
	adminURL   string // the cluster's superuser
	requestURL string // the login role and the password kept in DIR/project.env
}

// superviseCluster restarts the project's own PostgreSQL when it stops while `start` serves (killed, crashed
// beyond its own recovery, stopped with pg_ctl): without it the API answers 503 until someone restarts the
// whole project. It also keeps the API's login role able to log in (restoreLogin). It returns, with the
// reason, only when the server cannot be restarted, so that `start` exits saying why instead of serving
// errors; it returns nil when ctx is done.
func superviseCluster(ctx context.Context, cluster *pgcluster.Cluster, login apiLogin, interval time.Duration, stderr io.Writer) error {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
		if cluster.Running(ctx) {
			restoreLogin(ctx, login, stderr)
			continue
		}
		if ctx.Err() != nil {
			continue // a Ctrl-C reaches PostgreSQL too, which may stop before ctx is done
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

// restoreLogin gives the API's login role back the project's password when it no longer opens a connection
// (issue 22: `alter role authenticator password ...`, as setup used to suggest, cut a running start off).
// The cluster is the project's own and the role its API's, so the password in DIR/project.env is the one
// that counts.
func restoreLogin(ctx context.Context, login apiLogin, stderr io.Writer) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, login.requestURL)
	if err == nil {
		conn.Close(ctx)
		return
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "28P01" { // invalid_password; anything else is not ours to fix
		return
	}
	cfg, err := pgx.ParseConfig(login.requestURL)
	if err != nil {
		return
	}
	admin, err := pgx.Connect(ctx, login.adminURL)
	if err != nil {
		fmt.Fprintln(stderr, "pgreflect start: the API's login role lost its password and it could not be restored:", err)
		return
	}
	defer admin.Close(ctx)
	if err := dbsetup.SetPassword(ctx, admin, cfg.User, cfg.Password); err != nil {
		fmt.Fprintln(stderr, "pgreflect start: the API's login role lost its password and it could not be restored:", err)
		return
	}
	fmt.Fprintf(stderr, "The password of %s on this project's PostgreSQL was changed; the API logs in with the one in project.env, which is set again. Give the role another password only on a server you run yourself (docs/local-stack.md).\n", cfg.User)
}
