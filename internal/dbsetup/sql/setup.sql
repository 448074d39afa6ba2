-- Default privileges of service.md 5.2.2 and 5.2.4: the API roles may use schema public and everything created
-- in it from now on. (Grants on objects that already exist are in existing_grants.sql, applied on request
-- only: on an existing database without row level security they would let the anon key write every table.)
grant usage on schema public to anon, authenticated, service_role;
alter default privileges in schema public grant all on tables to anon, authenticated, service_role;
alter default privileges in schema public grant all on routines to anon, authenticated, service_role;
alter default privileges in schema public grant all on sequences to anon, authenticated, service_role;
do $$
begin
  if exists (select from pg_roles where rolname = 'postgres') and current_user <> 'postgres' then
    alter default privileges for role postgres in schema public grant all on tables to anon, authenticated, service_role;
    alter default privileges for role postgres in schema public grant all on routines to anon, authenticated, service_role;
    alter default privileges for role postgres in schema public grant all on sequences to anon, authenticated, service_role;
  end if;
end
$$;

-- Schema version: every DDL, COMMENT, GRANT, REVOKE and DROP bumps a counter and announces it on a channel,
-- so that servers reload their catalog model without a query per request (pg_graphql does the same).
create schema if not exists pgreflect;
comment on schema pgreflect is 'pgreflect internals: the schema version counter and its event triggers';
create sequence if not exists pgreflect.schema_version as bigint;

-- security definer: the event trigger runs as whoever issues the DDL, who need not have rights on the sequence.
-- The announcement is the new version, then what changed when a server can reload less than everything
-- (reflect.Watch reads it): " privileges" after GRANT, REVOKE and ALTER DEFAULT PRIVILEGES, which change what
-- roles may do and not the catalog; " relations <oid>,<oid>..." when only tables, views and their columns,
-- indexes and owned sequences changed (" partitions <oid>,<oid>...": of partition trees, whole; " indexes
-- <oid>,<oid>...": of dropped indexes, whose relations a server knows), or functions, procedures and
-- aggregates, or a new schema or a schema's comment, or types (with the relations whose columns use them), or
-- policies and triggers, which the catalog model does not hold (the list may be empty: a server re-reads those
-- relations only, the types it read before, and functions and schemas whole); nothing more otherwise. Some
-- DDL changes nothing the catalog model holds, and moves no version: a refresh of a materialized view (its
-- rows), REINDEX, temporary objects and commands that did nothing are not announced, and a change of a
-- publication is announced with the version as it is and " publications", for the change feed of live
-- queries, which reads its publication again.
create or replace function pgreflect.bump_schema_version()
  returns event_trigger
  language plpgsql
  security definer
  set search_path = ''
as $$
declare
  what text := '';
  relations oid[];
  others boolean;
  type_users oid[];
  type_user_roots oid[];
  schema_roots oid[];
  partition_roots oid[];
  dropped_indexes boolean := false;
begin
  -- Servers would otherwise read the catalog again and rebuild every role's schema: for each refresh or reindex
  -- a cron job runs (REINDEX is an event since PostgreSQL 17), and for each table the change feed adds to its
  -- publication.
  if tg_tag in ('REFRESH MATERIALIZED VIEW', 'REINDEX') then
    return;
  end if;
  if tg_tag in ('CREATE PUBLICATION', 'ALTER PUBLICATION', 'DROP PUBLICATION') then
    -- once, at ddl_command_end (ALTER PUBLICATION ... DROP TABLE also fires sql_drop)
    if tg_event = 'ddl_command_end' then
      perform pg_notify('pgreflect_schema_version',
        coalesce(pg_catalog.pg_sequence_last_value('pgreflect.schema_version'::pg_catalog.regclass), 0)::text || ' publications');
    end if;
    return;
  end if;
  -- Temporary objects (a table a function makes at every call, its indexes, a temporary view) are in no API's
  -- search path: announced, each would have every server read and rebuild its schemas as often.
  if tg_event = 'ddl_command_end' then
    if (select bool_and(c.schema_name = 'pg_temp') from pg_catalog.pg_event_trigger_ddl_commands() c) then
      return;
    end if;
    -- Each command of an extension's script (citext's are about 90) would be announced: CREATE and ALTER
    -- EXTENSION are announced once, by their own command, as a change of anything.
    if (select bool_and(c.in_extension) from pg_catalog.pg_event_trigger_ddl_commands() c) then
      return;
    end if;
  -- what a command names (its dependents may not say: a temporary view's rule has no schema)
  elsif (select bool_and(o.is_temporary) from pg_catalog.pg_event_trigger_dropped_objects() o where o.original) then
    return;
  end if;
  if tg_tag in ('GRANT', 'REVOKE', 'ALTER DEFAULT PRIVILEGES') then
    what := ' privileges';
  elsif tg_event = 'ddl_command_end' then
    if tg_tag in ('DROP TABLE', 'DROP VIEW', 'DROP MATERIALIZED VIEW', 'DROP FOREIGN TABLE', 'DROP FUNCTION',
                  'DROP TYPE', 'DROP DOMAIN', 'DROP POLICY', 'DROP TRIGGER') then
      return; -- announced by sql_drop, which lists what was dropped
    end if;
    -- A command that did nothing (IF NOT EXISTS of what exists, as migrations and programs at their start run)
    -- reports no object; so does any other DROP, which sql_drop announces.
    if not exists (select from pg_catalog.pg_event_trigger_ddl_commands()) then
      return;
    end if;
    -- An index or an owned sequence stands for its table. A change of a partitioned table or a partition shows
    -- or hides others of its tree (a new partition, ATTACH PARTITION as pg_partman runs it, a comment, a column
    -- added to every partition): it lists the whole tree, from its root, and a server reads again the partitions
    -- its last read had of that root too (one DETACH PARTITION took out of the tree).
    select array_agg(distinct coalesce(i.indrelid, d.refobjid, con.conrelid, c.objid))
             filter (where c.classid = 'pg_catalog.pg_class'::pg_catalog.regclass and c.object_type <> 'composite type'
                        or con.oid is not null),
           array_agg(distinct pg_catalog.pg_partition_root(r.oid)) filter (where r.relkind = 'p' or r.relispartition),
           bool_or(not ((c.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
                         and c.object_type in ('table', 'table column', 'view', 'materialized view', 'foreign table',
                                               'index', 'sequence')
                         -- a table's constraint (a comment on a foreign key) stands for its table
                         or con.oid is not null)
                        -- the catalog read reads functions and schemas whole every time: no relation to list
                        -- (procedures and aggregates it does not read: the API shows neither)
                        or c.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass
                           and c.object_type in ('function', 'procedure', 'aggregate')
                        -- or a new schema: nothing is in it yet (what CREATE SCHEMA makes in it is listed); or
                        -- one renamed or given to another owner, whose relations are listed below
                        or c.classid = 'pg_catalog.pg_namespace'::pg_catalog.regclass
                           and tg_tag in ('COMMENT', 'CREATE SCHEMA', 'ALTER SCHEMA')
                        -- types the read had are read again every time; their users are listed below
                        or c.classid = 'pg_catalog.pg_type'::pg_catalog.regclass
                        or c.classid = 'pg_catalog.pg_class'::pg_catalog.regclass and c.object_type = 'composite type'
                        -- not in the catalog model
                        or c.classid in ('pg_catalog.pg_policy'::pg_catalog.regclass,
                                         'pg_catalog.pg_trigger'::pg_catalog.regclass)))
      into relations, partition_roots, others
      from pg_catalog.pg_event_trigger_ddl_commands() c
      left join pg_catalog.pg_index i on i.indexrelid = c.objid
      left join pg_catalog.pg_depend d
        on c.object_type = 'sequence' and d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
       and d.objid = c.objid and d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass and d.deptype in ('a', 'i')
      left join pg_catalog.pg_constraint con
        on c.classid = 'pg_catalog.pg_constraint'::pg_catalog.regclass and con.oid = c.objid and con.conrelid <> 0
      left join pg_catalog.pg_class r on r.oid = coalesce(i.indrelid, d.refobjid, con.conrelid, c.objid);
    -- A column's description names its type (format_type): the relations with a column of a changed type, or
    -- of its array, are read again, a partitioned table or a partition with its tree. (pg_attribute has no
    -- index on the type: one scan, on type DDL only.)
    select array_agg(distinct a.attrelid),
           array_agg(distinct pg_catalog.pg_partition_root(r.oid)) filter (where r.relkind = 'p' or r.relispartition)
      into type_users, type_user_roots
      from pg_catalog.pg_event_trigger_ddl_commands() c
      join pg_catalog.pg_type t
        on c.classid = 'pg_catalog.pg_type'::pg_catalog.regclass and t.oid = c.objid
        or c.classid = 'pg_catalog.pg_class'::pg_catalog.regclass and c.object_type = 'composite type' and t.typrelid = c.objid
      join pg_catalog.pg_attribute a on a.atttypid in (t.oid, t.typarray) and a.attnum > 0 and not a.attisdropped
      join pg_catalog.pg_class r on r.oid = a.attrelid and r.relkind in ('r', 'v', 'm', 'f', 'p');
    -- A schema renamed is on a search path by another name, or on none: its relations show or hide. (Its
    -- functions and types are read whole, or as the last read had them, every time; a new owner's privileges
    -- are read again by every server's next load, whatever the change.)
    if tg_tag = 'ALTER SCHEMA' then
      select relations || array_agg(r.oid),
             array_agg(distinct pg_catalog.pg_partition_root(r.oid)) filter (where r.relkind = 'p' or r.relispartition)
        into relations, schema_roots
        from pg_catalog.pg_event_trigger_ddl_commands() c
        join pg_catalog.pg_class r on r.relnamespace = c.objid and r.relkind in ('r', 'v', 'm', 'f', 'p')
       where c.classid = 'pg_catalog.pg_namespace'::pg_catalog.regclass;
    end if;
    partition_roots := partition_roots || type_user_roots || schema_roots; -- null where all are: no tree
    relations := relations || type_users
      || (select array_agg(t.relid::oid) from pg_catalog.unnest(partition_roots) root, pg_catalog.pg_partition_tree(root) t);
  elsif tg_tag = 'ALTER TABLE' then
    -- what ALTER TABLE dropped (a column, its default, index or sequence, a constraint): the announcement at
    -- ddl_command_end lists the table
    select array_agg(distinct o.objid) filter (where o.object_type = 'table column'),
           bool_or(o.object_type not in ('table column', 'default value', 'table constraint', 'index', 'sequence',
                                         'trigger'))
      into relations, others
      from pg_catalog.pg_event_trigger_dropped_objects() o;
  elsif tg_event = 'sql_drop' then
    -- What a DROP dropped, with what CASCADE took along. A relation, or a column of one, is listed. A column's
    -- default or a constraint of a table that stays no longer says its table: its address names it, and the
    -- table is listed (triggers, policies and rules are not in the catalog model). An index names only itself:
    -- it is listed by its own oid (" indexes <oid>..."), and a server reads again the relation its last read had
    -- it on (it reads unique indexes only: any other changed nothing it shows). Where a table was dropped, its
    -- indexes go with it and are not listed. Functions, procedures, aggregates and schemas are read whole every
    -- time, and types as the last read had them. A sequence dropped alone may have been a column's (serial):
    -- another change, as is any other kind of object (an extension, an operator).
    select array_agg(distinct r) filter (where r is not null),
           bool_or(not (o.object_type in ('table', 'view', 'materialized view', 'foreign table', 'table column',
                                          'index', 'toast table', 'type', 'composite type', 'domain constraint',
                                          'table constraint', 'default value', 'rule', 'trigger', 'policy',
                                          'function', 'procedure', 'aggregate', 'schema')
                        or o.object_type = 'sequence' and tg_tag <> 'DROP SEQUENCE')),
           bool_or(o.object_type = 'index' and r is not null)
      into relations, others, dropped_indexes
      from pg_catalog.pg_event_trigger_dropped_objects() o,
           lateral (select case
             when o.object_type in ('table', 'view', 'materialized view', 'foreign table', 'table column') then o.objid
             when o.object_type = 'index'
                  and tg_tag not in ('DROP TABLE', 'DROP VIEW', 'DROP MATERIALIZED VIEW', 'DROP FOREIGN TABLE')
               then o.objid
             when o.object_type in ('default value', 'table constraint')
               then pg_catalog.to_regclass(pg_catalog.quote_ident(o.address_names[1]) || '.'
                                           || pg_catalog.quote_ident(o.address_names[2]))::oid
             end as r) listed;
    -- a partitioned table or a partition listed (a partition's own default, dropped with its function): its
    -- tree, as DDL on one lists it
    select array_agg(distinct pg_catalog.pg_partition_root(c.oid))
      into partition_roots
      from pg_catalog.pg_class c
     where c.oid = any(relations) and (c.relkind = 'p' or c.relispartition);
    relations := relations
      || (select array_agg(t.relid::oid) from pg_catalog.unnest(partition_roots) root, pg_catalog.pg_partition_tree(root) t);
  end if;
  -- an announcement holds at most 8,000 bytes
  if not others then
    relations := coalesce(relations, '{}');
  end if;
  if not others and pg_catalog.cardinality(relations) <= 500 then
    -- A server older than the partition trees' announcements would take one for relations only, and miss a
    -- partition detached: to it, " partitions" is a change of anything.
    -- A server that knows no dropped indexes reads everything for " indexes", whether the list holds trees too.
    what := case when dropped_indexes then ' indexes '
                 when partition_roots is not null then ' partitions '
                 else ' relations ' end
      || pg_catalog.array_to_string(relations, ',');
  end if;
  perform pg_notify('pgreflect_schema_version', nextval('pgreflect.schema_version')::text || what);
  -- Until the transaction ends, a schema read in it holds its own uncommitted change: the library's Execute
  -- (resolve) reads this and keeps no schema it reads then.
  perform pg_catalog.set_config('pgreflect.catalog_changed', 'on', true);
end
$$;
revoke all on function pgreflect.bump_schema_version() from public;

do $$
begin
  if not exists (select from pg_event_trigger where evtname = 'pgreflect_watch_ddl') then
    create event trigger pgreflect_watch_ddl on ddl_command_end
      execute function pgreflect.bump_schema_version();
  end if;
  if not exists (select from pg_event_trigger where evtname = 'pgreflect_watch_drop') then
    create event trigger pgreflect_watch_drop on sql_drop
      execute function pgreflect.bump_schema_version();
  end if;
end
$$;

-- Any login role a server uses (authenticator is NOINHERIT) must read the version; it is not secret.
grant usage on schema pgreflect to public;
grant select on sequence pgreflect.schema_version to public;

-- Automatic persisted queries (docs/persisted-queries.md): documents by the hex SHA-256 of their text, shared by
-- every instance. The table is private; the server reaches it through the two functions below, which any login
-- role may call (like the version above, the login role is the operator's choice). They cannot be used to plant
-- a document under another's hash: persist_query checks the hash itself, so a row's text is always the
-- document its key names, and the table never holds more than the caller's bound.
create table if not exists pgreflect.persisted_queries (
  hash text primary key check (hash ~ '^[0-9a-f]{64}$'),
  document text not null,
  last_used_at timestamptz not null default now()
);
create index if not exists persisted_queries_last_used_at on pgreflect.persisted_queries (last_used_at);
revoke all on table pgreflect.persisted_queries from public;

-- persisted_query returns the document of a hash, or null, and marks it used (at most once a minute, so that
-- a popular document is not rewritten on every lookup) for the eviction of the least recently used.
create or replace function pgreflect.persisted_query(query_hash text)
  returns text
  language plpgsql
  security definer
  set search_path = ''
as $$
declare
  doc text;
begin
  update pgreflect.persisted_queries set last_used_at = now()
   where hash = query_hash and last_used_at < now() - interval '1 minute';
  select document into doc from pgreflect.persisted_queries where hash = query_hash;
  return doc;
end
$$;

-- persist_query stores a document under its hash, refusing a hash that is not the document's, and evicts the
-- least recently used documents beyond max_documents.
create or replace function pgreflect.persist_query(query_hash text, query_document text, max_documents integer)
  returns void
  language plpgsql
  security definer
  set search_path = ''
as $$
begin
  if query_hash is distinct from encode(pg_catalog.sha256(convert_to(query_document, 'UTF8')), 'hex') then
    raise exception 'provided sha does not match query' using errcode = '22023';
  end if;
  if max_documents is null or max_documents < 1 then
    raise exception 'max_documents must be positive' using errcode = '22023';
  end if;
  insert into pgreflect.persisted_queries (hash, document) values (query_hash, query_document)
    on conflict (hash) do update set last_used_at = now();
  delete from pgreflect.persisted_queries where hash in (
    select hash from pgreflect.persisted_queries order by last_used_at desc, hash offset max_documents);
end
$$;
grant execute on function pgreflect.persisted_query(text) to public;
grant execute on function pgreflect.persist_query(text, text, integer) to public;

-- Trusted documents (docs/persisted-queries.md): the operations an app may send, by the id its manifest gives
-- them (Relay's and graphql-codegen's are hashes), pushed by `pgreflect documents push` with the rights of the
-- table's owner. The server reads them through trusted_document, by id or by the SHA-256 of the text, so that
-- a client may send the id, the hash, or the document itself.
create table if not exists pgreflect.trusted_documents (
  id text primary key check (id <> ''),
  sha256 text not null check (sha256 ~ '^[0-9a-f]{64}$'),
  document text not null,
  added_at timestamptz not null default now()
);
create index if not exists trusted_documents_sha256 on pgreflect.trusted_documents (sha256);
revoke all on table pgreflect.trusted_documents from public;

create or replace function pgreflect.trusted_document(key text)
  returns text
  language sql
  stable
  security definer
  set search_path = ''
as $$
  select document from pgreflect.trusted_documents where id = key or sha256 = key limit 1
$$;
grant execute on function pgreflect.trusted_document(text) to public;

-- The project's API settings (internal/apisettings): the pg_graphql behaviour version the project pins and the
-- exposed schemas stored through the management API or the console over supabase/config.toml's; null: none
-- stored. One row. Every instance reads it twice a second, so a change made through one reaches all. Anyone may
-- read it (`pgreflect schema` and `status` read the version with the URL they are given); writes go through the
-- owner of schema auth, who serves the management API (granted below).
create table if not exists pgreflect.api_settings (
  singleton boolean primary key default true check (singleton),
  graphql_version text,
  db_schema text[],
  updated_at timestamptz not null default now()
);
insert into pgreflect.api_settings (singleton) values (true) on conflict do nothing;
revoke all on table pgreflect.api_settings from public;
grant select on table pgreflect.api_settings to public;
-- Before, the pinned version lived in auth.pgreflect_config: an upgraded project keeps its pin.
do $pin$
begin
  if exists (select from pg_attribute where attrelid = to_regclass('auth.pgreflect_config')
              and attname = 'graphql_version' and not attisdropped) then
    execute 'update pgreflect.api_settings s set graphql_version = c.graphql_version
               from auth.pgreflect_config c where s.graphql_version is null and c.graphql_version is not null';
  end if;
end
$pin$;

-- The SQL helpers of Supabase Auth (auth-api.md section 5), so that RLS policies written for Supabase work
-- unchanged. The auth tables are created by the auth service's migrations, not here. A helper the database
-- already has is kept as it is, whatever it returns (a PostgREST database's auth.uid() may return an integer
-- that its policies compare with): replacing it would change or break those policies. dbsetup.ForeignHelpers
-- names the ones whose result differs from Supabase's.
create schema if not exists auth;

do $setup$
declare
  h record;
  claim text := $claim$
    select coalesce(
      nullif(current_setting('request.jwt.claim.%1$s', true), ''),
      (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> '%1$s')
    )::%2$s
  $claim$;
begin
  for h in
    select * from (values
      ('uid', 'uuid', format(claim, 'sub', 'uuid'), 'Deprecated. Use auth.jwt() -> ''sub'' instead.'),
      ('role', 'text', format(claim, 'role', 'text'), 'Deprecated. Use auth.jwt() -> ''role'' instead.'),
      ('email', 'text', format(claim, 'email', 'text'), 'Deprecated. Use auth.jwt() -> ''email'' instead.'),
      ('jwt', 'jsonb', $body$
    select coalesce(
      nullif(current_setting('request.jwt.claim', true), ''),
      nullif(current_setting('request.jwt.claims', true), '')
    )::jsonb
  $body$, null)
    ) as v(name, result, body, comment)
  loop
    if not exists (select from pg_proc p join pg_namespace n on n.oid = p.pronamespace
                    where n.nspname = 'auth' and p.proname = h.name and p.pronargs = 0) then
      execute format('create function auth.%I() returns %s language sql stable as %L', h.name, h.result, h.body);
      if h.comment is not null then
        execute format('comment on function auth.%I() is %L', h.name, h.comment);
      end if;
    end if;
    if exists (select from pg_proc p join pg_namespace n on n.oid = p.pronamespace
                where n.nspname = 'auth' and p.proname = h.name and p.pronargs = 0
                  and p.prorettype = h.result::regtype) then
      execute format('grant execute on function auth.%I() to anon, authenticated, service_role', h.name);
    end if;
  end loop;
end
$setup$;

grant usage on schema auth to anon, authenticated, service_role;

-- The auth service manages the trusted documents over the management API with its own role, the owner of schema
-- auth (docs/deploy.md), which on managed Postgres is no superuser: it may read them and add some (a push never
-- changes or removes one). A role given schema auth after the setup gets this when the setup runs again.
do $documents$
begin
  execute format('grant select, insert on table pgreflect.trusted_documents to %s',
    (select nspowner::regrole from pg_namespace where nspname = 'auth'));
  execute format('grant update on table pgreflect.api_settings to %s',
    (select nspowner::regrole from pg_namespace where nspname = 'auth'));
end
$documents$;

-- Live queries (the subscriptions feature) learn which tables changed by logical decoding of this publication.
-- It starts empty: the server adds the tables that subscriptions read and that have a primary key, since a
-- publication of every table would make UPDATE and DELETE fail on tables without a replica identity.
do $live$
begin
  if not exists (select from pg_publication where pubname = 'pgreflect_live') then
    create publication pgreflect_live;
  end if;
end
$live$;

-- Live queries (docs/subscriptions.md): one statement refreshes the subscribers of one document and role, each
-- under its own claims and variables. Every subscriber gets an execution of its query of its own, after its
-- claims are switched, so that row level security, and any `(select auth.uid())` that Postgres evaluates once
-- per execution, see that subscriber's claims and nobody else's (Supabase Realtime checks its subscribers' rows
-- the same way). queries are the compiled queries (one per set of variables), args their parameters (each the
-- array literal of its parameters as text), prepared the names of the statements this connection has prepared
-- for them (planned once, by the server's own statement cache), or NULL behind a transaction pooler, where
-- nothing prepared outlives a transaction and EXECUTE plans each query for each subscriber, with at most 64
-- parameters. sessions holds seven values per subscriber: role, search_path, claims, the legacy claim settings
-- sub, role and email, and the (1-based) number of its query.
-- Security invoker, and it refuses to run unless called directly by the login role: then it does only what its
-- caller could do itself (set_config('role') checks the login role's memberships), while an API role that
-- reached it through another function cannot borrow the login role's memberships. So any login role may call it.
create or replace function pgreflect.live_refresh(queries text[], prepared text[], args text[], sessions text[])
returns text[]
language plpgsql volatile
as $$
declare
  answers text[] := '{}';
  runs text[] := '{}';
  answer text;
  a text[];
  k integer;
  i integer := 0;
begin
  if current_user <> session_user then
    raise exception 'pgreflect.live_refresh runs only as the login role' using errcode = '42501';
  end if;
  if prepared is not null then
    for k in 1 .. coalesce(pg_catalog.array_length(queries, 1), 0) loop
      a := args[k]::text[];
      runs[k] := 'execute ' || pg_catalog.quote_ident(prepared[k]);
      if pg_catalog.cardinality(a) > 0 then
        runs[k] := runs[k] || '(' || (select pg_catalog.string_agg(pg_catalog.quote_nullable(v), ', ' order by n)
          from pg_catalog.unnest(a) with ordinality as u(v, n)) || ')';
      end if;
    end loop;
  end if;
  while i < coalesce(pg_catalog.array_length(sessions, 1), 0) loop
    perform pg_catalog.set_config('role', sessions[i + 1], true),
      pg_catalog.set_config('search_path', sessions[i + 2], true),
      pg_catalog.set_config('request.jwt.claims', sessions[i + 3], true),
      pg_catalog.set_config('request.jwt.claim.sub', sessions[i + 4], true),
      pg_catalog.set_config('request.jwt.claim.role', sessions[i + 5], true),
      pg_catalog.set_config('request.jwt.claim.email', sessions[i + 6], true);
    k := sessions[i + 7]::integer;
    if prepared is not null then
      execute runs[k] into answer;
    else
      a := args[k]::text[];
      execute queries[k] into answer
        using a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15],
          a[16], a[17], a[18], a[19], a[20], a[21], a[22], a[23], a[24], a[25], a[26], a[27], a[28], a[29],
          a[30], a[31], a[32], a[33], a[34], a[35], a[36], a[37], a[38], a[39], a[40], a[41], a[42], a[43],
          a[44], a[45], a[46], a[47], a[48], a[49], a[50], a[51], a[52], a[53], a[54], a[55], a[56], a[57],
          a[58], a[59], a[60], a[61], a[62], a[63], a[64];
    end if;
    answers := pg_catalog.array_append(answers, answer);
    i := i + 7;
  end loop;
  return answers;
end
$$;
grant execute on function pgreflect.live_refresh(text[], text[], text[], text[]) to public;
