-- Default privileges of service.md 5.2.2 and 5.2.4: the API roles may use schema public and everything created
-- in it from now on. (Grants on objects that already exist are in existing_grants.sql, applied on first install
-- only, so that a REVOKE made later survives the next Apply.)
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
create or replace function pgreflect.bump_schema_version()
  returns event_trigger
  language plpgsql
  security definer
  set search_path = ''
as $$
begin
  perform pg_notify('pgreflect_schema_version', nextval('pgreflect.schema_version')::text);
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

-- The SQL helpers of Supabase Auth (auth-api.md section 5), so that RLS policies written for Supabase work
-- unchanged. The auth tables are created by the auth service's migrations, not here.
create schema if not exists auth;

create or replace function auth.uid()
  returns uuid
  language sql stable
as $$
  select coalesce(
    nullif(current_setting('request.jwt.claim.sub', true), ''),
    (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub')
  )::uuid
$$;
comment on function auth.uid() is 'Deprecated. Use auth.jwt() -> ''sub'' instead.';

create or replace function auth.role()
  returns text
  language sql stable
as $$
  select coalesce(
    nullif(current_setting('request.jwt.claim.role', true), ''),
    (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'role')
  )::text
$$;
comment on function auth.role() is 'Deprecated. Use auth.jwt() -> ''role'' instead.';

create or replace function auth.email()
  returns text
  language sql stable
as $$
  select coalesce(
    nullif(current_setting('request.jwt.claim.email', true), ''),
    (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'email')
  )::text
$$;
comment on function auth.email() is 'Deprecated. Use auth.jwt() -> ''email'' instead.';

create or replace function auth.jwt()
  returns jsonb
  language sql stable
as $$
  select coalesce(
    nullif(current_setting('request.jwt.claim', true), ''),
    nullif(current_setting('request.jwt.claims', true), '')
  )::jsonb
$$;

grant usage on schema auth to anon, authenticated, service_role;
grant execute on function auth.uid(), auth.role(), auth.email(), auth.jwt() to anon, authenticated, service_role;
