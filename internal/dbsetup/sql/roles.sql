-- The API roles of service.md 2.3 and the login role that switches into them, as in Supabase.
-- Roles are cluster-wide while the advisory lock of Apply is per database, so two databases of one cluster
-- may run this at the same time: every step tolerates the other one having done it first.
do $$
declare
  r record;
begin
  for r in
    select * from (values
      ('anon', 'nologin noinherit'),
      ('authenticated', 'nologin noinherit'),
      ('service_role', 'nologin noinherit bypassrls'),
      ('authenticator', 'login noinherit')
    ) as v(name, options)
  loop
    if not exists (select from pg_roles where rolname = r.name) then
      begin
        execute format('create role %I %s', r.name, r.options);
      exception when duplicate_object or unique_violation then
        null;
      end;
    end if;
  end loop;

  for r in select unnest(array['anon', 'authenticated', 'service_role']) as name loop
    if not pg_has_role('authenticator', r.name, 'member') then
      begin
        execute format('grant %I to authenticator', r.name);
      exception when duplicate_object or unique_violation then
        null;
      end;
    end if;
  end loop;
end
$$;
