-- A table without a primary key and a view without primary_key_columns: neither is in the API.
create table public.audit_log (id bigint generated always as identity, at timestamptz not null default now(), message text);
create table public.tags (tag text not null unique, color text);
create view public.recent_tags as select tag, color from public.tags;
