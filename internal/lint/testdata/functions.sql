-- Functions pg_graphql leaves out, each for its own reason; and two it leaves out on purpose (a trigger
-- function, one the API roles may not execute), which lint does not report.
create table public.todo (id serial primary key, title text);
create function public.sum_all(variadic nums int[]) returns int language sql immutable
  as 'select sum(n)::int from unnest(nums) n';
create function public.search(q text) returns setof public.todo language sql stable
  as 'select * from public.todo where title like q';
create function public.search(q text, lim int) returns setof public.todo language sql stable
  as 'select * from public.todo where title like q limit lim';
create function public.pair() returns record language sql immutable as 'select 1, 2';
create function public.twice(int) returns int language sql immutable as 'select 2 * $1';
create function public."todoCollection"() returns int language sql stable as 'select count(*)::int from public.todo';
create function public.newest(first int) returns setof public.todo language sql stable
  as 'select * from public.todo order by id desc limit first';
create function public."do-it"() returns int language sql volatile as 'select 1';
create function public.bump() returns trigger language plpgsql as 'begin return new; end';
create function public.secret() returns int language sql immutable as 'select 42';
revoke execute on function public.secret() from public, anon, authenticated, service_role;
