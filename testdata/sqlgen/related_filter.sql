select (with t1_page as (select json_build_object('id', t1."id") as __node, null::text as __cursor, t1."id" as __o0 from "public"."blog" t1 where true and ((exists (select 1 from "public"."account" t2 where true and t2."id" = t1."owner_id" and ((t2."email" = ($1::text)::text)))) and ((not exists (select 1 from "public"."blog_post" t3 where true and t3."blog_id" = t1."id" and not coalesce((t3."title" like ($2::text)::text), false))) or (not (not exists (select 1 from "public"."blog_post" t4 where true and t4."blog_id" = t1."id"))))) order by t1."id" asc limit 30) select json_build_object('edges', coalesce((select json_agg(json_build_object('node', p.__node) order by p.__o0 asc) from t1_page p), '[]'::json)))::text
-- parameters
$1 = "a@x.com"
$2 = "%x%"
