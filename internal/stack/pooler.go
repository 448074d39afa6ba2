package stack

import (
	"context"
	"errors"
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

// probeTimeout bounds each statement of the pooler probe; a statement that waits longer for a server session
// while the probe's other connection holds one open is itself the sign of a pooler.
const probeTimeout = 2 * time.Second

// sharesSessions reports whether cfg's connections share server sessions, as they do through a pooler in
// transaction mode (PgBouncer, Supavisor), whatever port the URL names: two client connections, both open, see
// the same backend pid, or one waits for the session the other holds in a transaction. Each direct connection
// (or one through a pooler in session mode) has a backend of its own for its whole life. The probe prepares
// nothing; what it found is returned as a sentence for the log or the error.
func sharesSessions(ctx context.Context, cfg *pgx.ConnConfig) (bool, string, error) {
	cfg = cfg.Copy()
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	var conns [2]*pgx.Conn
	for i := range conns {
		c, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			return false, "", fmt.Errorf("connect to the database as %s: %w", cfg.User, err)
		}
		defer c.Close(context.WithoutCancel(ctx))
		conns[i] = c
	}
	owner := map[uint32]int{}
	// pid runs one statement on connection i; shared is set when its backend served the other connection.
	var shared string
	pid := func(ctx context.Context, i int, q interface {
		QueryRow(context.Context, string, ...any) pgx.Row
	}) error {
		ctx, cancel := context.WithTimeout(ctx, probeTimeout)
		defer cancel()
		var p uint32
		if err := q.QueryRow(ctx, "select pg_backend_pid()").Scan(&p); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				shared = "one connection waited for the server session another held in a transaction"
				return nil
			}
			return fmt.Errorf("probe for a transaction pooler: %w", err)
		}
		if o, seen := owner[p]; seen && o != i {
			shared = fmt.Sprintf("two connections were served by one server session (backend pid %d)", p)
		}
		owner[p] = i
		return nil
	}
	// In turns: a pooler that reuses the session released last (PgBouncer's default) shows itself at once.
	for range 3 {
		for i, c := range conns {
			if err := pid(ctx, i, c); err != nil || shared != "" {
				return shared != "", shared, err
			}
		}
	}
	// With the first connection's session held in a transaction, the second gets another; once it is released,
	// the next statement of either may run on the other's.
	tx, err := conns[0].Begin(ctx)
	if err != nil {
		return false, "", fmt.Errorf("probe for a transaction pooler: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	for _, step := range []func() error{
		func() error { return pid(ctx, 0, tx) },
		func() error { return pid(ctx, 1, conns[1]) },
		func() error { return tx.Commit(ctx) },
		func() error { return pid(ctx, 1, conns[1]) },
		func() error { return pid(ctx, 0, conns[0]) },
	} {
		if err := step(); err != nil || shared != "" {
			return shared != "", shared, err
		}
	}
	return false, "", nil
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
	for i, u := range append([]string{o.RequestURL}, o.ReadURLs...) {
		cfg, err := pgxpool.ParseConfig(u)
		if err != nil {
			return nil, nil, false, fmt.Errorf("parse database URL: %w", err)
		}
		p, err := transactionPooled(cfg.ConnConfig, o.StatementMode)
		if err != nil {
			return nil, nil, false, err
		}
		if !p && o.StatementMode != StatementModeUnnamed {
			// The URL does not say; the connections do. Named statements (pgreflect's and pgx's own cache) would
			// clash with another client's on a shared session, or be missing on the next one.
			shared, found, err := sharesSessions(ctx, cfg.ConnConfig)
			if err != nil {
				return nil, nil, false, err
			}
			switch {
			case shared && o.StatementMode == StatementModePrepared:
				return nil, nil, false, fmt.Errorf("%s goes through a pooler in transaction mode (%s), where --statement-mode prepared cannot work: use --statement-mode unnamed or auto (docs/deploy.md)", urlName(i), found)
			case shared:
				s.log.Warn("the database URL goes through a pooler in transaction mode: sending unnamed statements and polling the schema version (add pgbouncer=true to the URL to say so)",
					"url", urlName(i), "found", found)
				p = true
			}
		}
		pooled = pooled || p
		cfgs = append(cfgs, cfg)
	}
	for i, cfg := range cfgs {
		// Whatever the mode: pgreflect's own queries through pgx (the roles, the login role, the schema version,
		// replay positions) are few, and pgx's statement cache names them by a hash of their SQL, which clashes
		// with another client's on a server session that a pooler the probe missed shares.
		prepareNothing(cfg.ConnConfig)
		pool, err := s.openPool(ctx, cfg, size)
		if err != nil {
			if i > 0 {
				err = fmt.Errorf("%s: %w", urlName(i), err)
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

// urlName names the i-th URL of requestPools in messages: the database URL, then the read replicas'.
func urlName(i int) string {
	if i == 0 {
		return "the database URL"
	}
	return fmt.Sprintf("read replica %d", i)
}
