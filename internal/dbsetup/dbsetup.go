// Package dbsetup installs what pgreflect needs inside a database: the API roles (anon, authenticated,
// service_role) and the login role authenticator, the default grants of schema public, the schema-version
// counter with its event triggers, and Supabase's SQL helpers (auth.uid(), auth.role(), auth.email(),
// auth.jwt()). It also holds the demo schema that `pgreflect start` loads into a new project.
//
// The SQL is embedded; Apply is idempotent and safe to run concurrently on one database (an advisory lock
// serialises it) and on several databases of one cluster (role creation tolerates a concurrent twin). It adds
// and never replaces or resets: roles that exist keep their attributes and passwords, grants are only added,
// and auth helpers the database already has are kept (ForeignHelpers names those that differ from Supabase's).
// The GraphQL engine itself needs none of it.
package dbsetup

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// NotifyChannel is the LISTEN/NOTIFY channel on which the schema version is announced.
const NotifyChannel = "pgreflect_schema_version"

// SchemaVersionQuery reads the schema version, for servers that poll it instead of listening on NotifyChannel
// (0 before the first change). Any role may run it.
const SchemaVersionQuery = "select coalesce(pg_sequence_last_value('pgreflect.schema_version'), 0)"

// lockKey is the advisory lock every Apply and LoadDemo holds for its transaction (a fixed, arbitrary key:
// "pgrefle" in ASCII).
const lockKey int64 = 0x70677265666c65

var (
	//go:embed sql/roles.sql
	rolesSQL string
	//go:embed sql/setup.sql
	setupSQL string
	//go:embed sql/existing_grants.sql
	existingGrantsSQL string
	//go:embed sql/demo.sql
	demoSQL string
)

// Apply installs everything into the database conn is connected to. It needs a superuser (event triggers and
// roles) and runs in one transaction. It grants the API roles usage on schema public and default privileges
// on the objects created there from now on, as Supabase does, but nothing on the objects that already exist:
// on a database without row level security that would let the anon key write every table (issue 22).
// GrantExisting does that on request.
func Apply(ctx context.Context, conn *pgx.Conn) error {
	return inLockedTx(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, rolesSQL); err != nil {
			return fmt.Errorf("create roles: %w", err)
		}
		if _, err := tx.Exec(ctx, setupSQL); err != nil {
			return fmt.Errorf("install grants, schema version and auth helpers: %w", err)
		}
		return nil
	})
}

// ungrantedQuery lists the objects of schema public on which an API role lacks a privilege that GRANT ALL
// gives, as "table public.x", "sequence public.x_id_seq" or "function public.f(integer)". Privileges held
// through PUBLIC count as held (EXECUTE on functions usually is).
const ungrantedQuery = `
with api(role) as (values ('anon'), ('authenticated'), ('service_role'))
select kind || ' ' || name from (
  select 'table' as kind, format('public.%I', c.relname) as name
    from pg_class c
   where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p', 'v', 'm', 'f')
     and exists (select from api
                  where not has_table_privilege(api.role, c.oid, 'select')
                     or not has_table_privilege(api.role, c.oid, 'insert')
                     or not has_table_privilege(api.role, c.oid, 'update')
                     or not has_table_privilege(api.role, c.oid, 'delete')
                     or not has_table_privilege(api.role, c.oid, 'truncate')
                     or not has_table_privilege(api.role, c.oid, 'references')
                     or not has_table_privilege(api.role, c.oid, 'trigger'))
  union all
  select 'sequence', format('public.%I', c.relname)
    from pg_class c
   where c.relnamespace = 'public'::regnamespace and c.relkind = 'S'
     and exists (select from api
                  where not has_sequence_privilege(api.role, c.oid, 'usage')
                     or not has_sequence_privilege(api.role, c.oid, 'select')
                     or not has_sequence_privilege(api.role, c.oid, 'update'))
  union all
  select case p.prokind when 'p' then 'procedure' else 'function' end,
         format('public.%I(%s)', p.proname, pg_get_function_identity_arguments(p.oid))
    from pg_proc p
   where p.pronamespace = 'public'::regnamespace
     and exists (select from api where not has_function_privilege(api.role, p.oid, 'execute'))
) o
order by kind, name`

// Ungranted lists the objects of schema public on which anon, authenticated or service_role lack a privilege
// that GrantExisting would give them. Apply must have run (the roles must exist).
func Ungranted(ctx context.Context, q rowsQuerier) ([]string, error) {
	return queryStrings(ctx, q, "list the objects of schema public the API roles may not use", ungrantedQuery)
}

// rowsQuerier is a connection or a transaction.
type rowsQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// GrantExisting grants anon, authenticated and service_role every privilege on the tables, views, sequences
// and routines that exist in schema public, Supabase's platform default (service.md 5.2.2), and returns the
// objects that gained a privilege, in Ungranted's words. Apply must have run.
func GrantExisting(ctx context.Context, conn *pgx.Conn) ([]string, error) {
	var granted []string
	err := inLockedTx(ctx, conn, func(tx pgx.Tx) error {
		var err error
		if granted, err = Ungranted(ctx, tx); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, existingGrantsSQL); err != nil {
			return fmt.Errorf("grant the existing objects of schema public: %w", err)
		}
		return nil
	})
	return granted, err
}

// AnonWritableWithoutRLS lists, as schema.table, the tables of the given schemas that the anon role may
// insert into, update, delete from or truncate while their row level security is off: anyone holding the
// public anon key can change every row of them. Any role may call it.
func AnonWritableWithoutRLS(ctx context.Context, q rowsQuerier, schemas []string) ([]string, error) {
	const query = `
select format('%I.%I', n.nspname, c.relname)
  from pg_class c join pg_namespace n on n.oid = c.relnamespace
 where c.relkind in ('r', 'p') and not c.relrowsecurity
   and n.nspname = any($1)
   and exists (select from pg_roles where rolname = 'anon')
   and has_schema_privilege('anon', n.oid, 'usage')
   and (has_table_privilege('anon', c.oid, 'insert, update, delete, truncate')
        or has_any_column_privilege('anon', c.oid, 'insert, update'))
 order by 1`
	return queryStrings(ctx, q, "list the tables anon may write without row level security", query, schemas)
}

// queryStrings runs a query of one text column and returns its values; what says what it does, for errors.
func queryStrings(ctx context.Context, q rowsQuerier, what, query string, args ...any) ([]string, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	values, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return values, nil
}

// LoadDemo creates the demo schema in schema public (tables with foreign keys, an enum, a view and a table
// under row level security, with a few rows). It does nothing when the demo is already there. Apply must have
// run first (the demo uses auth.uid() and the default privileges).
func LoadDemo(ctx context.Context, conn *pgx.Conn) error {
	return inLockedTx(ctx, conn, func(tx pgx.Tx) error {
		var present bool
		if err := tx.QueryRow(ctx, `select to_regtype('public.blog_post_status') is not null`).Scan(&present); err != nil {
			return fmt.Errorf("check for the demo schema: %w", err)
		}
		if present {
			return nil
		}
		if _, err := tx.Exec(ctx, demoSQL); err != nil {
			return fmt.Errorf("load demo schema: %w", err)
		}
		return nil
	})
}

// Installed reports whether Apply's objects exist in the database: the roles, the schema-version sequence,
// the API settings' table (a database set up by an older pgreflect lacks it), both event triggers and the auth
// helpers. Any role may call it.
func Installed(ctx context.Context, conn *pgx.Conn) (bool, error) {
	// Catalog lookups rather than to_regclass and friends, which fail without USAGE on the schema.
	const q = `
select (select count(*) from pg_roles
         where rolname in ('anon', 'authenticated', 'service_role', 'authenticator')) = 4
   and exists (select from pg_class c join pg_namespace n on n.oid = c.relnamespace
                where n.nspname = 'pgreflect' and c.relname = 'schema_version' and c.relkind = 'S')
   and exists (select from pg_class c join pg_namespace n on n.oid = c.relnamespace
                where n.nspname = 'pgreflect' and c.relname = 'api_settings' and c.relkind = 'r')
   and (select count(*) from pg_event_trigger
         where evtname in ('pgreflect_watch_ddl', 'pgreflect_watch_drop') and evtenabled <> 'D') = 2
   and (select count(distinct p.proname) from pg_proc p join pg_namespace n on n.oid = p.pronamespace
         where n.nspname = 'auth' and p.proname in ('uid', 'role', 'email', 'jwt') and p.pronargs = 0) = 4`
	var ok bool
	if err := conn.QueryRow(ctx, q).Scan(&ok); err != nil {
		return false, fmt.Errorf("check pgreflect database setup: %w", err)
	}
	return ok, nil
}

// ForeignHelpers lists the auth helpers the database has with another result than Supabase's, such as
// "auth.uid() returns integer": Apply keeps them, so RLS policies that call them go on working, but policies
// written for Supabase expect Supabase's.
func ForeignHelpers(ctx context.Context, conn *pgx.Conn) ([]string, error) {
	const q = `
select format('auth.%s() returns %s', p.proname, pg_catalog.format_type(p.prorettype, null))
  from (values ('uid', 'uuid'::regtype), ('role', 'text'), ('email', 'text'), ('jwt', 'jsonb')) as h(name, result)
  join pg_proc p on p.proname = h.name and p.pronargs = 0 and p.prorettype <> h.result
  join pg_namespace n on n.oid = p.pronamespace and n.nspname = 'auth'
 order by p.proname`
	return queryStrings(ctx, conn, "list the auth helpers", q)
}

// CreateLoginRole creates name as a NOINHERIT login role with password, granted the API roles, and reports
// whether it did. A role of that name that exists already is left as it is, password included: roles belong
// to the whole cluster, so it may be another project's, whose servers log in with its password.
func CreateLoginRole(ctx context.Context, conn *pgx.Conn, name, password string) (created bool, err error) {
	err = inLockedTx(ctx, conn, func(tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, `select exists (select from pg_roles where rolname = $1)`, name).Scan(&exists); err != nil {
			return fmt.Errorf("look for role %s: %w", name, err)
		}
		if exists {
			return nil
		}
		// The savepoint keeps the transaction usable when a concurrent twin creates the role first.
		if _, err := tx.Exec(ctx, "savepoint create_role"); err != nil {
			return err
		}
		if err := execFormat(ctx, tx, `create role %I login noinherit password %L`, name, password); err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && (pgErr.Code == "42710" || pgErr.Code == "23505") { // duplicate_object, unique_violation
				_, err = tx.Exec(ctx, "rollback to savepoint create_role")
				return err
			}
			return fmt.Errorf("create login role %s: %w", name, err)
		}
		if _, err := tx.Exec(ctx, rolesSQL); err != nil {
			return fmt.Errorf("create roles: %w", err)
		}
		if err := execFormat(ctx, tx, `grant anon, authenticated, service_role to %I`, name); err != nil {
			return fmt.Errorf("grant the API roles to %s: %w", name, err)
		}
		created = true
		return nil
	})
	return created, err
}

func inLockedTx(ctx context.Context, conn *pgx.Conn, fn func(pgx.Tx) error) (err error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, ignoreClosed(tx.Rollback(context.WithoutCancel(ctx))))
		}
	}()
	if _, err := tx.Exec(ctx, `select pg_advisory_xact_lock($1)`, lockKey); err != nil {
		return fmt.Errorf("take setup lock: %w", err)
	}
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// querier is a connection or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// HasPassword reports whether the role name exists with a password. It reads pg_authid: superusers only.
func HasPassword(ctx context.Context, conn *pgx.Conn, name string) (bool, error) {
	var has bool
	if err := conn.QueryRow(ctx, `select exists (select from pg_authid where rolname = $1 and rolpassword is not null)`, name).Scan(&has); err != nil {
		return false, fmt.Errorf("look for a password of %s: %w", name, err)
	}
	return has, nil
}

// SetPassword gives the login role name a password. Only for a role of the caller's own: roles belong to the
// whole cluster, and other servers may log in with the role's present password.
func SetPassword(ctx context.Context, conn *pgx.Conn, name, password string) error {
	if err := execFormat(ctx, conn, `alter role %I with login password %L`, name, password); err != nil {
		return fmt.Errorf("set the password of %s: %w", name, err)
	}
	return nil
}

// execFormat runs the utility statement that format() makes of template and args: CREATE ROLE, GRANT and
// friends take no parameters, and format() quotes identifiers (%I) and literals (%L) as the server does.
func execFormat(ctx context.Context, tx querier, template string, args ...string) error {
	placeholders := make([]string, len(args))
	values := make([]any, len(args))
	for i, a := range args {
		placeholders[i] = fmt.Sprintf(", $%d::text", i+2)
		values[i] = a
	}
	var stmt string
	if err := tx.QueryRow(ctx, "select format($1::text"+strings.Join(placeholders, "")+")", append([]any{template}, values...)...).Scan(&stmt); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, stmt)
	return err
}

func ignoreClosed(err error) error {
	if errors.Is(err, pgx.ErrTxClosed) {
		return nil
	}
	return err
}
