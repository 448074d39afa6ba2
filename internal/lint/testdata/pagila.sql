-- pagila's film and its neighbours as pagila's schema writes them, before any comment directive: the rating
-- enum with PG-13 and NC-17, two foreign keys to language, a table without a primary key of its own in the
-- original sakila (film_text), and the views of the sample.
create type public.mpaa_rating as enum ('G', 'PG', 'PG-13', 'R', 'NC-17');
create table public.language (
  language_id serial primary key,
  name character(20) not null,
  last_update timestamp with time zone default now() not null
);
create table public.film (
  film_id serial primary key,
  title text not null,
  description text,
  release_year integer,
  language_id integer not null references public.language (language_id) on update cascade on delete restrict,
  original_language_id integer references public.language (language_id) on update cascade on delete restrict,
  rental_duration smallint default 3 not null,
  rental_rate numeric(4,2) default 4.99 not null,
  length smallint,
  replacement_cost numeric(5,2) default 19.99 not null,
  rating public.mpaa_rating default 'G'::public.mpaa_rating,
  last_update timestamp with time zone default now() not null,
  special_features text[]
);
create table public.actor (
  actor_id serial primary key,
  first_name text not null,
  last_name text not null,
  last_update timestamp with time zone default now() not null
);
create table public.film_actor (
  actor_id integer not null references public.actor (actor_id),
  film_id integer not null references public.film (film_id),
  last_update timestamp with time zone default now() not null,
  primary key (actor_id, film_id)
);
create table public.film_text (film_id integer not null, title text not null, description text);
create view public.actor_info as
  select a.actor_id, a.first_name, a.last_name, count(fa.film_id) as films
  from public.actor a left join public.film_actor fa on fa.actor_id = a.actor_id
  group by a.actor_id, a.first_name, a.last_name;
create function public.film_in_stock(p_film_id integer, p_store_id integer, out p_film_count integer) returns setof integer
  language sql as 'select 1';
create function public.film_not_in_stock(p_film_id integer, p_store_id integer, out p_film_count integer) returns setof integer
  language sql as 'select 1';
create function public.last_day(timestamp with time zone) returns date language sql immutable strict
  as 'select (date_trunc(''month'', $1) + interval ''1 month'' - interval ''1 day'')::date';
