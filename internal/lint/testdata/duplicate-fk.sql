-- pagila's film before any directive: two foreign keys to language give film two fields "language" (and
-- language two "filmCollection"), and the API answers the later one, original_language_id's.
create table public.language (language_id serial primary key, name text not null);
create table public.film (
  film_id serial primary key,
  title text not null,
  language_id int not null references public.language (language_id),
  original_language_id int references public.language (language_id)
);
