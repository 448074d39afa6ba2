-- Two exposed schemas with a table of the same name: the first on the search path wins.
create schema app;
grant usage on schema app to anon, authenticated, service_role;
create table public.profiles (id serial primary key, name text);
create table app.profiles (id serial primary key, bio text);
grant select on app.profiles to anon, authenticated, service_role;
