-- What the benchmark adds to dbsetup's demo schema: a link from accounts to auth users, the indexes a person
-- would create for these queries, and row level security on posts: everyone reads published posts, a signed-in
-- user also reads and writes the posts of their own blogs.
truncate public.blog_post, public.blog, public.account restart identity cascade;

alter table public.account add column user_id uuid unique;
create index on public.blog (owner_id);
create index on public.blog_post (blog_id);
create index on public.blog_post (status, created_at);

alter table public.blog_post enable row level security;
create policy blog_post_published on public.blog_post
  for select to anon, authenticated
  using (status = 'RELEASED');
-- (select auth.uid()) rather than auth.uid(): evaluated once per statement, as Supabase's RLS guide advises.
create policy blog_post_owner on public.blog_post
  for all to authenticated
  using (blog_id in (select b.id from public.blog b join public.account a on a.id = b.owner_id
                      where a.user_id = (select auth.uid())))
  with check (blog_id in (select b.id from public.blog b join public.account a on a.id = b.owner_id
                           where a.user_id = (select auth.uid())));

-- Issue 12's extensions, turned on by comment directives only where the extra queries (Q6-Q8) use them, so
-- that Q1-Q5 run on pg_graphql's API: an upsert of a subscription, a post inserted with two comments, posts
-- filtered by their blog's name.
create index on public.blog (name);

create table public.blog_subscription (
  account_id int not null references public.account (id),
  blog_id int not null references public.blog (id),
  level text not null,
  primary key (account_id, blog_id)
);
alter table public.blog_subscription enable row level security;
create policy blog_subscription_own on public.blog_subscription
  for all to authenticated
  using (account_id in (select a.id from public.account a where a.user_id = (select auth.uid())))
  with check (account_id in (select a.id from public.account a where a.user_id = (select auth.uid())));
comment on table public.blog_subscription is e'@graphql({"features": ["upsert"]})';

create table public.post_comment (
  id bigserial primary key,
  post_id uuid not null references public.blog_post (id),
  author_id uuid not null default auth.uid(),
  body text not null
);
create index on public.post_comment (post_id);
alter table public.post_comment enable row level security;
create policy post_comment_read on public.post_comment
  for select to anon, authenticated
  using (true);
create policy post_comment_write on public.post_comment
  for insert to authenticated
  with check (author_id = (select auth.uid()));
comment on table public.blog_post is e'@graphql({"features": ["nestedInsert", "relatedFilter"]})';
