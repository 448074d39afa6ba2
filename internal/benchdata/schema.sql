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
