-- Names beginning with __, which GraphQL keeps for introspection.
create table public.__migrations (id serial primary key, name text);
create type public.visibility as enum ('public', '__hidden');
create table public.notes (id serial primary key, __meta jsonb, body text, visibility public.visibility);
create function public.___internal() returns int language sql stable as 'select 1';
