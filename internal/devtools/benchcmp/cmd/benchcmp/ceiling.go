package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/net/netutil"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/internal/connwatch"
	"github.com/pgreflect/pgreflect/internal/devtools/benchcmp"
	"github.com/pgreflect/pgreflect/internal/obs"
	"github.com/pgreflect/pgreflect/internal/stack"
)

// serveCeiling serves the ceiling on port until ctx is done; with duties, WithDuties (its request lines on
// stderr, gathered as pgreflect's binary gathers them) behind the HTTP limits pgreflect's server has by default
// (read, write and idle timeouts, which set a connection's deadlines for every request, kept by a
// connwatch.Watchdog as pgreflect's, and the connection cap).
func serveCeiling(ctx context.Context, port, accounts, poolSize int, duties bool, dbURL, secret string, apiKeys auth.APIKeys) error {
	if dbURL == "" || secret == "" || apiKeys.Anon == "" {
		return errors.New("the ceiling needs BENCH_DATABASE_URL, BENCH_JWT_SECRET and BENCH_ANON_KEY")
	}
	keys, err := auth.NewKeys(secret)
	if err != nil {
		return err
	}
	// As many database connections as pgreflect is given (--pool-size on both).
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	cfg.MaxConns = int32(poolSize)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer pool.Close()
	if err := pool.Ping(ctx); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return err
	}
	ceiling := benchcmp.NewCeiling(pool, keys, apiKeys, accounts)
	srv := &http.Server{Handler: ceiling, ReadHeaderTimeout: 10 * time.Second}
	if duties {
		logs := obs.NewLineWriter(os.Stderr)
		defer logs.Close()
		limits := stack.DefaultLimits()
		srv = &http.Server{Handler: ceiling.WithDuties(slog.New(obs.NewTextHandler(logs, slog.LevelInfo))),
			ReadHeaderTimeout: limits.ReadHeaderTimeout, ReadTimeout: limits.ReadTimeout,
			WriteTimeout: limits.WriteTimeout, IdleTimeout: limits.IdleTimeout}
		watch := connwatch.New(connwatch.DefaultTick, connwatch.DefaultHorizon)
		defer watch.Close()
		l = netutil.LimitListener(watch.Listener(l), limits.MaxConnections)
	}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
