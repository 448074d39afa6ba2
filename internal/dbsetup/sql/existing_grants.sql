-- On request only (dbsetup.GrantExisting, `pgreflect setup --grant-existing`): the API roles get the objects
-- already in schema public, Supabase's platform default (service.md 5.2.2). Apply never runs this: on a
-- database without row level security it would let the anon key write every table.
grant all on all tables in schema public to anon, authenticated, service_role;
grant all on all routines in schema public to anon, authenticated, service_role;
grant all on all sequences in schema public to anon, authenticated, service_role;
