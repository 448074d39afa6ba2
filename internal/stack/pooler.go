package stack

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/resolve"
)

// Statement modes of Options.StatementMode and the --statement-mode flag.
const (
	// StatementModeAuto reads the mode from the connection strings (see ParseConnConfig).
	StatementModeAuto = "auto"
	// StatementModePrepared and StatementModeUnnamed name resolve's modes.
	StatementModePrepared = "prepared"
	StatementModeUnnamed  = "unnamed"
)

// transactionPoolerPort is the port of Supabase's pooler in transaction mode, the one a project's pooled
// connection string names (the session pooler and direct connections use 5432).
const transactionPoolerPort = 6543

// SchemaPollInterval is how often a server behind a transaction pooler reads the schema version, where LISTEN
// does not work: a schema change is in effect within about this long.
const SchemaPollInterval = 500 * time.Millisecond

// ParseConnConfig parses a connection string for a connection of the server, with mode as the
// --statement-mode flag says (see transactionPooled), and reports whether it goes through a transaction pooler.
func ParseConnConfig(connString, mode string) (*pgx.ConnConfig, bool, error) {
	cfg, err := pgx.ParseConfig(connString)
	if err != nil {
		return nil, false, fmt.Errorf("parse database URL: %w", err)
	}
	pooled, err := transactionPooled(cfg, mode)
	if err != nil {
		return nil, false, err
	}
	if pooled {
		prepareNothing(cfg)
	}
	return cfg, pooled, nil
}

// transactionPooled reports whether cfg goes through a pooler in transaction mode: when mode (the
// --statement-mode flag: "" or auto, prepared, unnamed) says unnamed, or, in auto, when the connection string
// says so the way other clients are told: pgbouncer=true as Prisma reads it, Supabase's pooler port 6543, or
// pgx's default_query_exec_mode set to a mode that prepares nothing (exec, simple_protocol, describe_exec). It
// removes the pgbouncer parameter, which no server knows.
func transactionPooled(cfg *pgx.ConnConfig, mode string) (bool, error) {
	pgbouncer := cfg.RuntimeParams["pgbouncer"]
	delete(cfg.RuntimeParams, "pgbouncer")
	switch mode {
	case "", StatementModeAuto:
		switch cfg.DefaultQueryExecMode {
		case pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeDescribeExec:
			return true, nil
		}
		return pgbouncer == "true" || cfg.Port == transactionPoolerPort, nil
	case StatementModePrepared:
		return false, nil
	case StatementModeUnnamed:
		return true, nil
	}
	return false, fmt.Errorf("unknown statement mode %q (use auto, prepared or unnamed)", mode)
}

// prepareNothing makes pgx send its own queries (the login role, the roles, the schema version) as unnamed
// statements, unless the connection string chose another mode that prepares nothing.
func prepareNothing(cfg *pgx.ConnConfig) {
	switch cfg.DefaultQueryExecMode {
	case pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe:
		cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	}
}

// statementMode is the engine's mode for pools of which some go through a transaction pooler.
func statementMode(pooled bool) resolve.StatementMode {
	if pooled {
		return resolve.StatementsUnnamed
	}
	return resolve.StatementsPrepared
}

// requestPools opens the pools of API requests: RequestURL's and one per read replica, each of at most size
// connections. It reports whether any of them goes through a pooler in transaction mode, in which case all
// of them send unnamed statements.
func (s *Stack) requestPools(ctx context.Context, o Options, size int) (primary *pgxpool.Pool, replicas []*pgxpool.Pool, pooled bool, err error) {
	cfgs := make([]*pgxpool.Config, 0, 1+len(o.ReadURLs))
	for _, u := range append([]string{o.RequestURL}, o.ReadURLs...) {
		cfg, err := pgxpool.ParseConfig(u)
		if err != nil {
			return nil, nil, false, fmt.Errorf("parse database URL: %w", err)
		}
		p, err := transactionPooled(cfg.ConnConfig, o.StatementMode)
		if err != nil {
			return nil, nil, false, err
		}
		pooled = pooled || p
		cfgs = append(cfgs, cfg)
	}
	for i, cfg := range cfgs {
		if pooled {
			prepareNothing(cfg.ConnConfig)
		}
		pool, err := openPool(ctx, cfg, size)
		if err != nil {
			if i > 0 {
				err = fmt.Errorf("read replica %d: %w", i, err)
			}
			return nil, nil, false, err
		}
		s.closers = append(s.closers, pool.Close)
		name := "api"
		if i > 0 {
			name = fmt.Sprintf("api_replica_%d", i)
		}
		if err := s.metrics.RegisterPool(name, pool); err != nil {
			return nil, nil, false, err
		}
		if i == 0 {
			primary = pool
		} else {
			replicas = append(replicas, pool)
		}
	}
	return primary, replicas, pooled, nil
}
