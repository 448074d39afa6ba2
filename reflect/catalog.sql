-- The catalog query: everything the GraphQL schema needs, as one JSON document, in one round trip. It depends
-- on the schemas it is given ($1, the search path's, in order; null for current_schemas(false)) and on no role:
-- roles share one read, and privileges.sql, run as each role, says what that role may see of it. (Not
-- current_schemas(false) alone: it leaves out the schemas the current role may not use, which another may.)
-- $2, when not null, restricts the read to those relations (oids) and the foreign keys that touch them: what
-- Shared.Update merges into an earlier read after the event triggers announced a change of those only. $3, when
-- not null, are types (oids) to read whatever uses them: the types of that earlier read, which a change of a
-- type (a new enum value, a comment) or of a relation's columns may have changed.
-- The answer is rows, each of a kind (its first field; load.go's Answer reads them): one document ('d': the
-- server's version, schemas, foreign keys, functions, types, as JSON), a row per relation read ('r') and a row
-- per column of those ('c'), their fields as text. Writing the 50,000 columns of 5,000 tables as JSON arrays cost
-- Postgres 220 ms, about 3 us a column in json_build_array's per-value dispatch, and the relations as JSON
-- objects more; as rows of text they cost almost nothing, and Go reads them without a JSON pass.
-- Comments are joined from pg_description rather than read by obj_description, a SQL function called per row
-- that cost 8 us a call (100 ms at 5,000 tables; a partition's root comment, rare, is still read by it). Key columns are attribute numbers, named in Go from the relation's
-- columns: a subquery per index and foreign key side cost 250-400 ms at 5,000 tables.
with
schemas as (
    select n.oid, n.nspname, d.description as comment, p.pos
    from unnest(coalesce($1::text[], current_schemas(false))) with ordinality as p(name, pos)
    join pg_namespace n on n.nspname = p.name
    left join pg_description d
      on d.objoid = n.oid and d.classoid = 'pg_namespace'::regclass and d.objsubid = 0
),
-- every relation that can be shown, whichever are read
shown as (
    select c.oid
    from pg_class c
    join schemas s on s.oid = c.relnamespace
    -- As in pg_graphql, partitions are shown as the ordinary tables they are (relkind r, or f) and partitioned
    -- tables (relkind p) are not. A top-level partitioned table is read too: Decode shows it, and hides its
    -- partitions, when its comment opts in ({"partitions": "hidden"}). Nested partitioned tables never show.
    where c.relkind in ('r', 'v', 'm', 'f') or (c.relkind = 'p' and not c.relispartition)
),
rels as (
    select c.oid, c.relname, c.relkind, c.relnamespace, c.reltype, c.relrowsecurity,
           d.description as comment,
           c.relispartition as partition,
           -- a partition is hidden when its root table says so; the root may be outside the search path
           case when c.relispartition then obj_description(pg_partition_root(c.oid), 'pg_class') end
               as partition_root_comment,
           -- what a change of the root's tree reads again: the partitions it had (Shared.WithPartitions)
           case when c.relispartition then pg_partition_root(c.oid) end as partition_root
    from pg_class c
    join shown on shown.oid = c.oid
    left join pg_description d on d.objoid = c.oid and d.classoid = 'pg_class'::regclass and d.objsubid = 0
    where $2::oid[] is null or c.oid = any($2::oid[])
),
-- PostgreSQL 18 records NOT NULL as constraints, and one added NOT VALID sets attnotnull while rows may still
-- hold NULL: such a column is nullable until the constraint is validated. (Before 18 no relation has
-- constraints of type 'n', and this is empty.)
unvalidated_not_null as (
    select con.conrelid, con.conkey[1] as attnum
    from pg_constraint con
    where con.contype = 'n' and not con.convalidated
),
cols as (
    select a.attrelid, a.attnum, a.attname, a.atttypid, a.atttypmod, a.atthasdef,
           a.attnotnull and not exists (select 1 from unvalidated_not_null u
                where u.conrelid = a.attrelid and u.attnum = a.attnum) as attnotnull,
           a.attgenerated <> '' as generated,
           -- what pg_get_serial_sequence looks for, as one index probe instead of a name lookup per column
           (a.attidentity <> '' or exists (select 1 from pg_depend d join pg_class seq on seq.oid = d.objid
                where d.classid = 'pg_class'::regclass and d.refclassid = 'pg_class'::regclass
                  and d.refobjid = a.attrelid and d.refobjsubid = a.attnum
                  and d.deptype in ('a', 'i') and seq.relkind = 'S')) as serial,
           d.description as comment
    from pg_attribute a
    join rels c on c.oid = a.attrelid
    left join pg_description d
      on d.objoid = a.attrelid and d.classoid = 'pg_class'::regclass and d.objsubid = a.attnum
    where a.attnum > 0 and not a.attisdropped
),
-- format_type once per type and modifier that columns use, not once per column (a tenth of the catalog read
-- at 5,000 tables)
column_types as (
    select t.atttypid, t.atttypmod, format_type(t.atttypid, t.atttypmod) as format_type
    from (select distinct atttypid, atttypmod from cols) t
),
-- the unique indexes that are not partial, the primary key's among them, read once for the primary key, the
-- unique column sets and the conflict targets of upserts
rel_indexes as (
    -- the oid: a dropped index is announced by it alone (Shared.ToRead finds its relation)
    select i.indrelid, json_agg(json_build_object('oid', i.indexrelid::int8, 'name', ic.relname,
            'primary', i.indisprimary,
            'expression', i.indexprs is not null,
            -- PostgreSQL 18's WITHOUT OVERLAPS keys are unique and exclusion constraints at once
            'exclusion', i.indisexclusion,
            -- a deferrable key may hold duplicates until commit, and ON CONFLICT refuses it as an arbiter; so
            -- does an index left invalid by a failed CREATE INDEX CONCURRENTLY, which may hold duplicates
            'deferrable', not i.indimmediate,
            'valid', i.indisvalid,
            -- 0 for an expression
            'columns', to_json(i.indkey::int2[]))
            order by ic.relname) as indexes
    from pg_index i
    join rels c on c.oid = i.indrelid
    join pg_class ic on ic.oid = i.indexrelid
    where i.indisunique and i.indpred is null
    group by i.indrelid
),
fks as (
    select con.oid, con.conname, con.conrelid, con.confrelid,
           con.conkey as local_columns, con.confkey as foreign_columns,
           -- NOT VALID, or PostgreSQL 18's NOT ENFORCED: rows may reference nothing
           not con.convalidated as unchecked,
           d.description as comment
    from pg_constraint con
    left join pg_description d
      on d.objoid = con.oid and d.classoid = 'pg_constraint'::regclass and d.objsubid = 0
    -- Both ends must be shown (shown's test). Joined by index on pg_class rather than tested against shown: catalogs analyzed
    -- long ago (or never, just after a bulk of DDL) estimate one foreign key, and the planner then scanned
    -- shown once per foreign key, quadratic (3.6 s at 5,000 tables).
    join pg_class lc on lc.oid = con.conrelid
    join pg_class fc on fc.oid = con.confrelid
    where con.contype = 'f'
      and lc.relnamespace in (select oid from schemas) and fc.relnamespace in (select oid from schemas)
      and (lc.relkind in ('r', 'v', 'm', 'f') or (lc.relkind = 'p' and not lc.relispartition))
      and (fc.relkind in ('r', 'v', 'm', 'f') or (fc.relkind = 'p' and not fc.relispartition))
      -- A foreign key with PERIOD (PostgreSQL 18) matches referenced rows whose ranges cover its own, not
      -- equal ones, which no relationship field expresses. It is the one kind that references a WITHOUT
      -- OVERLAPS key, an exclusion index (18 requires PERIOD there): an index probe, where conperiod would need
      -- the query to differ by version.
      and not exists (select 1 from pg_index ki where ki.indexrelid = con.conindid and ki.indisexclusion)
      and ($2::oid[] is null or con.conrelid = any($2::oid[]) or con.confrelid = any($2::oid[]))
),
funcs as (
    select p.oid, p.proname, p.pronamespace, p.provolatile, p.proretset, p.prorettype, p.prorows, p.prokind,
           p.pronargs, p.pronargdefaults, p.provariadic <> 0 as variadic,
           coalesce(p.proargnames, array[]::text[]) as arg_names,
           coalesce(p.proargmodes, array[]::"char"[]) as arg_modes,
           p.proargtypes::oid[] as arg_types,
           pg_get_expr(p.proargdefaults, 0) as arg_defaults,
           d.description as comment
    from pg_proc p
    join schemas s on s.oid = p.pronamespace
    left join pg_description d on d.objoid = p.oid and d.classoid = 'pg_proc'::regclass and d.objsubid = 0
    where p.prokind = 'f'
      and s.nspname not in ('graphql', 'graphql_public', 'auth', 'extensions', 'pgreflect')
),
used_types as (
    select atttypid as oid from cols
    union select unnest(arg_types) from funcs
    union select prorettype from funcs
    union select t.oid from pg_type t join schemas s on s.oid = t.typnamespace where t.typtype = 'e'
    union select unnest($3::oid[])
    -- the fields of composite-type columns (the composite feature), one level deep
    union select a.atttypid from pg_attribute a join pg_class c on c.oid = a.attrelid and c.relkind = 'c'
    where (c.reltype in (select atttypid from cols) or c.reltype = any($3::oid[])) and a.attnum > 0
      and not a.attisdropped
),
types as (
    select t.oid, t.typname, t.typnamespace, n.nspname, t.typtype, t.typcategory, t.typelem, t.typrelid,
           d.description as comment
    from pg_type t
    join pg_namespace n on n.oid = t.typnamespace
    left join pg_description d on d.objoid = t.oid and d.classoid = 'pg_type'::regclass and d.objsubid = 0
    where t.oid in (select oid from used_types)
       or t.oid in (select e.typelem from pg_type e where e.oid in (select oid from used_types))
)
select 'd', json_build_object(
    'server_version_num', current_setting('server_version_num')::int,
    'schemas', coalesce((select json_agg(json_build_object(
            'oid', s.oid::int8, 'name', s.nspname, 'comment', s.comment) order by s.pos) from schemas s), '[]'),
    'foreign_keys', coalesce((select json_agg(json_build_object(
            'oid', f.oid::int8, 'name', f.conname, 'local_relation', f.conrelid::int8, 'foreign_relation', f.confrelid::int8,
            'local_columns', to_json(f.local_columns), 'foreign_columns', to_json(f.foreign_columns),
            'unchecked', f.unchecked, 'comment', f.comment) order by f.oid) from fks f), '[]'),
    'functions', coalesce((select json_agg(json_build_object(
            'oid', p.oid::int8, 'name', p.proname, 'schema_oid', p.pronamespace::int8, 'volatility', p.provolatile,
            'returns_set', p.proretset, 'return_type', p.prorettype::int8, 'rows', p.prorows,
            'num_args', p.pronargs, 'num_defaults', p.pronargdefaults, 'variadic', p.variadic,
            'arg_names', to_json(p.arg_names), 'arg_modes', to_json(p.arg_modes::text[]),
            'arg_types', to_json(p.arg_types::int8[]), 'arg_defaults', p.arg_defaults,
            'comment', p.comment) order by p.oid) from funcs p), '[]'),
    'types', coalesce((select json_agg(json_build_object(
            'oid', t.oid::int8, 'name', t.typname, 'schema_oid', t.typnamespace::int8, 'schema', t.nspname,
            'kind', t.typtype, 'category', t.typcategory, 'elem', t.typelem::int8, 'relation', t.typrelid::int8,
            'comment', t.comment,
            'enum_values', case when t.typtype = 'e' then (select json_agg(e.enumlabel order by e.enumsortorder)
                from pg_enum e where e.enumtypid = t.oid) end,
            'attributes', case when t.typtype = 'c' then (select json_agg(json_build_object(
                    'name', a.attname, 'type', a.atttypid::int8, 'typmod', a.atttypmod,
                    'format_type', format_type(a.atttypid, a.atttypmod)) order by a.attnum)
                from pg_attribute a join pg_class c on c.oid = a.attrelid and c.relkind = 'c'
                where a.attrelid = t.typrelid and a.attnum > 0 and not a.attisdropped) end) order by t.oid) from types t), '[]')
)::text,
    null::text, null::text, null::text, null::text, null::text, null::text, null::text, null::text, null::text,
    null::text
union all
-- load.go's rawRelation says the order
select 'r', c.oid::text, c.relname::text, c.relkind::text, c.relnamespace::text, c.reltype::text,
       c.relrowsecurity::text, c.comment, c.partition::text, c.partition_root_comment, c.partition_root::oid::text,
       ri.indexes::text
from rels c
left join rel_indexes ri on ri.indrelid = c.oid
union all
-- load.go's rawColumn says the order
select 'c', a.attrelid::text, a.attnum::text, a.attname::text, a.atttypid::text, a.atttypmod::text, ct.format_type,
       a.attnotnull::text, a.atthasdef::text, a.generated::text, a.serial::text, a.comment
from cols a
join column_types ct on ct.atttypid = a.atttypid and ct.atttypmod = a.atttypmod
