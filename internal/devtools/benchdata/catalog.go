package benchdata

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// catalogSQL generates issue 18's large catalog in one round trip, for a number of tables ({tables}, a multiple of 10):
// tables/10 enums; tables tables of 10 columns, each with a foreign key to the one before it (tables-1 in all);
// tables/5 computed fields (functions taking a table's row) and tables/10 root functions returning a table's
// rows; introspection on. At 5,000 tables: 500 enums, 4,999 foreign keys, 1,000 computed fields.
const catalogSQL = `
-- Event triggers do not fire in replica mode: announcing each of thousands of statements of one transaction
-- made the generation five times slower at 2,000 tables and quadratic (2 minutes at 5,000). A server started
-- afterwards reads the catalog anyway.
select set_config('session_replication_role', 'replica', true);
do $$
declare
  tables int := {tables};
begin
  for i in 1..tables / 10 loop
    execute format('create type e_%s as enum (''LOW'', ''MEDIUM'', ''HIGH'', ''UNKNOWN'')', i);
  end loop;
  for i in 1..tables loop
    execute format('create table t_%s (
      id serial primary key,
      parent_id integer %s,
      name text not null,
      n integer,
      big bigint,
      at timestamptz not null default now(),
      flag boolean,
      amount numeric(12, 2),
      mood e_%s,
      data jsonb)', i, case when i > 1 then format('references t_%s (id)', i - 1) else '' end,
      (i - 1) % (tables / 10) + 1);
  end loop;
  for i in 1..tables / 5 loop
    execute format('create function f_%s(r t_%s) returns text stable language sql as %L', i, i * 5,
      'select r.name');
  end loop;
  for i in 1..tables / 10 loop
    execute format('create function q_%s(x integer) returns setof t_%s stable language sql as %L', i, i * 10 - 5,
      format('select * from t_%s where n = x', i * 10 - 5));
  end loop;
end
$$;
comment on schema public is '@graphql({"inflect_names": true, "introspection": true})';
grant usage on schema public to anon, authenticated, service_role;
grant all on all tables in schema public to anon, authenticated, service_role;
`

// Catalog creates the large catalog of issue 18 (Large catalogs) in the public schema of the database conn is
// connected to, which must have pgreflect's setup applied: tables tables (a positive multiple of 10) and the
// enums, foreign keys and functions catalogSQL describes, readable by anon, authenticated and service_role.
// conn must be a superuser's (replica mode); nothing is announced to servers already watching.
func Catalog(ctx context.Context, conn *pgx.Conn, tables int) error {
	if tables <= 0 || tables%10 != 0 {
		return fmt.Errorf("benchdata: tables must be a positive multiple of 10, not %d", tables)
	}
	if _, err := conn.Exec(ctx, strings.ReplaceAll(catalogSQL, "{tables}", strconv.Itoa(tables))); err != nil {
		return fmt.Errorf("benchdata: catalog of %d tables: %w", tables, err)
	}
	return nil
}
