-- What the current role may see and do of what the catalog query (catalog.sql) reads, as one JSON document.
-- It runs as the request's role with the request's search_path; it is the cheap, per-role part of a schema
-- load, so that roles share one catalog read.
with
schemas as (
    select n.oid
    from unnest(current_schemas(false)) as p(name)
    join pg_namespace n on n.nspname = p.name
),
-- the relations of catalog.sql's rels (a superset: nested partitioned tables are never shown)
rels as (
    select c.oid,
           has_table_privilege(c.oid, 'SELECT') as s, has_table_privilege(c.oid, 'INSERT') as i,
           has_table_privilege(c.oid, 'UPDATE') as u, has_table_privilege(c.oid, 'DELETE') as d
    from pg_class c
    join schemas s on s.oid = c.relnamespace
    where c.relkind in ('r', 'v', 'm', 'f', 'p')
)
-- No role name: roles whose answers are equal see the same schema (resolve builds it once for them, and keeps it
-- while the catalog and the answer stay as they are). Every list is in oid order: GRANT and REVOKE move a row of
-- pg_class, and an answer in scan order would differ where nothing did.
select json_build_object(
    'search_path', to_json(current_schemas(false)),
    'schemas', coalesce((select json_agg(s.oid::int8 order by s.oid) from schemas s where has_schema_privilege(s.oid, 'USAGE')), '[]'),
    -- a relation's table privileges as letters: s(elect), i(nsert), u(pdate), d(elete)
    'relations', coalesce((select json_object_agg(r.oid::int8, concat(case when r.s then 's' end,
            case when r.i then 'i' end, case when r.u then 'u' end, case when r.d then 'd' end) order by r.oid) from rels r), '{}'),
    -- A table privilege covers every column, and a column has privileges of its own only where it has an ACL:
    -- only those columns are asked about, only where the table privileges fall short.
    'columns', coalesce((select json_agg(json_build_object('relation', a.attrelid::int8, 'num', a.attnum,
            'can', concat(case when has_column_privilege(a.attrelid, a.attnum, 'SELECT') then 's' end,
                case when has_column_privilege(a.attrelid, a.attnum, 'INSERT') then 'i' end,
                case when has_column_privilege(a.attrelid, a.attnum, 'UPDATE') then 'u' end)) order by a.attrelid, a.attnum)
        from pg_attribute a
        join rels r on r.oid = a.attrelid
        where a.attacl is not null and a.attnum > 0 and not a.attisdropped and not (r.s and r.i and r.u)), '[]'),
    -- Functions and types are usable by everyone unless an ACL of their own (or, for an array, its element's)
    -- says otherwise: only the exceptions are listed.
    'functions_denied', coalesce((select json_agg(p.oid::int8 order by p.oid)
        from pg_proc p
        join schemas s on s.oid = p.pronamespace
        where p.proacl is not null and not has_function_privilege(p.oid, 'EXECUTE')), '[]'),
    'types_denied', coalesce((select json_agg(t.oid::int8 order by t.oid)
        from pg_type t
        left join pg_type e on e.oid = t.typelem
        where (t.typacl is not null or e.typacl is not null) and not has_type_privilege(t.oid, 'USAGE')), '[]')
)::text
