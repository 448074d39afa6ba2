-- Enum labels that are not GraphQL names, as pagila's rating and the Supabase slack clone's permissions are.
create type public.mpaa_rating as enum ('G', 'PG', 'PG-13', 'R', 'NC-17');
create type public.app_permission as enum ('channels.delete', 'messages.delete', '*', 'channels_delete');
create table public.film (film_id serial primary key, title text not null, rating public.mpaa_rating);
create table public.role_permissions (id serial primary key, permission public.app_permission not null);
