-- The demo schema that `pgreflect start` loads into a new project: the blog example of pg_graphql's
-- documentation plus a to-do list guarded by row level security.

-- Introspection on, so that GraphiQL and other tools can read the schema; name inflection stays off
-- (pg_graphql's default). Subscriptions on, so that a live query runs in the console's GraphiQL.
comment on schema public is e'@graphql({"introspection": true, "features": ["subscriptions"]})';

create table public.account (
  id serial primary key,
  email varchar(255) not null,
  encrypted_password varchar(255) not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table public.blog (
  id serial primary key,
  owner_id integer not null references public.account (id),
  name varchar(255) not null,
  description varchar(255),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create type public.blog_post_status as enum ('PENDING', 'RELEASED');

create table public.blog_post (
  id uuid primary key default gen_random_uuid(),
  blog_id integer not null references public.blog (id),
  title varchar(255) not null,
  body varchar(10000),
  status public.blog_post_status not null default 'PENDING',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- Views have no primary key of their own; the directive names one so that the view gets a node id and
-- relationships.
create view public.released_post as
  select id, blog_id, title, created_at
  from public.blog_post
  where status = 'RELEASED';
-- security_invoker: the caller's privileges and row level security on blog_post apply, not the view owner's.
-- PostgreSQL 14 lacks the option (its views always run as their owner), and the demo loads there too.
do $$
begin
  if current_setting('server_version_num')::int >= 150000 then
    alter view public.released_post set (security_invoker = true);
  end if;
end
$$;
comment on view public.released_post is e'@graphql({"primary_key_columns": ["id"]})';

-- The blog is public to read; writing it takes a signed-in user (or the service_role key), so that the anon
-- key that ships in every browser cannot change it (start warns of tables anon can write without RLS).
revoke insert, update, delete, truncate on public.account, public.blog, public.blog_post from anon;

-- Each signed-in user sees and changes only their own to-dos; anon sees none.
create table public.todo (
  id bigserial primary key,
  user_id uuid not null default auth.uid(),
  task text not null,
  done boolean not null default false
);
alter table public.todo enable row level security;
create policy todo_owner on public.todo
  for all to authenticated
  using (auth.uid() = user_id)
  with check (auth.uid() = user_id);

insert into public.account (email, encrypted_password) values
  ('alice@example.com', 'not-a-real-hash'),
  ('bob@example.com', 'not-a-real-hash');

insert into public.blog (owner_id, name, description) values
  (1, 'Alice''s notes', 'Things Alice writes down'),
  (2, 'Bob builds', null);

insert into public.blog_post (blog_id, title, body, status) values
  (1, 'Hello, world', 'The first post.', 'RELEASED'),
  (1, 'Drafts', 'Not ready yet.', 'PENDING'),
  (2, 'Shed, part one', 'Foundations.', 'RELEASED');

insert into public.todo (user_id, task, done) values
  ('00000000-0000-4000-8000-000000000001', 'Water the plants', false),
  ('00000000-0000-4000-8000-000000000001', 'Read pg_graphql docs', true),
  ('00000000-0000-4000-8000-000000000002', 'Buy timber', false);
