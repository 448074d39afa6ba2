-- Who may do what with the relations and functions of the API's schemas ($1, the search path) for each API
-- role ($2): row level security and its policies as Postgres stores them, table and column privileges, EXECUTE,
-- and the columns each policy reads (pg_depend records them). One JSON document; the privilege functions take a
-- role name, so the connection's own role does not matter.
with
schemas as (
    select n.oid, n.nspname, p.pos
    from unnest($1::text[]) with ordinality as p(name, pos)
    join pg_namespace n on n.nspname = p.name
),
roles as (
    select r.rolname, r.rolbypassrls, r.oid
    from unnest($2::text[]) with ordinality as p(name, pos)
    join pg_roles r on r.rolname = p.name
),
rels as (
    select c.oid, c.relname, c.relkind, c.relrowsecurity, c.relforcerowsecurity, c.reloptions, c.relispartition,
           s.nspname, s.pos
    from pg_class c
    join schemas s on s.oid = c.relnamespace
    where c.relkind in ('r', 'v', 'm', 'f', 'p')
)
select json_build_object(
    'roles', coalesce((select json_agg(json_build_object('name', r.rolname, 'bypassRLS', r.rolbypassrls)) from roles r), '[]'),
    'relations', coalesce((select json_agg(json_build_object(
        'oid', c.oid::int8, 'schema', c.nspname, 'name', c.relname, 'kind', c.relkind,
        'rls', c.relrowsecurity, 'forceRLS', c.relforcerowsecurity, 'partition', c.relispartition,
        -- a view runs with its owner's rights, past the RLS of what it reads, unless security_invoker (15+)
        'securityInvoker', exists (select 1 from unnest(c.reloptions) o
            where lower(o) in ('security_invoker=true', 'security_invoker=on', 'security_invoker=1', 'security_invoker=yes')),
        'grants', (select json_object_agg(r.rolname, json_build_object(
                'select', has_table_privilege(r.rolname, c.oid, 'SELECT'),
                'insert', has_table_privilege(r.rolname, c.oid, 'INSERT'),
                'update', has_table_privilege(r.rolname, c.oid, 'UPDATE'),
                'delete', has_table_privilege(r.rolname, c.oid, 'DELETE'))) from roles r),
        'policies', coalesce((select json_agg(json_build_object(
                'name', p.polname,
                'command', case p.polcmd when 'r' then 'SELECT' when 'a' then 'INSERT' when 'w' then 'UPDATE'
                    when 'd' then 'DELETE' else 'ALL' end,
                'permissive', p.polpermissive,
                'roles', (select json_agg(case when o = 0 then 'public' else pg_get_userbyid(o)::text end order by o)
                    from unnest(p.polroles) o),
                'using', pg_get_expr(p.polqual, p.polrelid),
                'withCheck', pg_get_expr(p.polwithcheck, p.polrelid),
                'columns', coalesce((select json_agg(a.attname order by a.attnum) from pg_depend d
                    join pg_attribute a on a.attrelid = d.refobjid and a.attnum = d.refobjsubid
                    where d.classid = 'pg_policy'::regclass and d.objid = p.oid and d.refclassid = 'pg_class'::regclass
                      and d.refobjid = p.polrelid and d.refobjsubid > 0), '[]'))
            order by p.polname) from pg_policy p where p.polrelid = c.oid), '[]'),
        'columns', coalesce((select json_agg(json_build_object(
                'name', a.attname, 'type', format_type(a.atttypid, a.atttypmod),
                'grants', (select json_object_agg(r.rolname, json_build_object(
                    'select', has_column_privilege(r.rolname, c.oid, a.attnum, 'SELECT'),
                    'insert', has_column_privilege(r.rolname, c.oid, a.attnum, 'INSERT'),
                    'update', has_column_privilege(r.rolname, c.oid, a.attnum, 'UPDATE'))) from roles r))
            order by a.attnum) from pg_attribute a where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped), '[]')
    ) order by c.pos, c.relname) from rels c), '[]'),
    'functions', coalesce((select json_agg(json_build_object(
        'oid', p.oid::int8, 'schema', s.nspname, 'name', p.proname,
        'arguments', pg_get_function_identity_arguments(p.oid),
        'returns', pg_get_function_result(p.oid),
        'volatility', case p.provolatile when 'i' then 'IMMUTABLE' when 's' then 'STABLE' else 'VOLATILE' end,
        'securityDefiner', p.prosecdef,
        'execute', (select json_object_agg(r.rolname, has_function_privilege(r.rolname, p.oid, 'EXECUTE')) from roles r))
        order by s.pos, p.proname, p.oid) from pg_proc p join schemas s on s.oid = p.pronamespace where p.prokind = 'f'), '[]')
)::text
