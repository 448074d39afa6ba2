select (with t1_page as (select ('{"node": {"id": ' || coalesce((t1."id")::text, 'null') || '}}') as __node, null::text as __cursor, t1."id" as __o0 from "public"."blog" t1 where true and ((((not exists (select 1 from "public"."blog_post" t2 where true and t2."blog_id" = t1."id" and not coalesce(((t2."title" like ($1::text)::text)), false)))) or ((not ((not exists (select 1 from "public"."blog_post" t3 where true and t3."blog_id" = t1."id")))))) and (exists (select 1 from "public"."account" t4 where true and t4."id" = t1."owner_id" and ((t4."email" = ($2::text)::character varying(255)))))) order by t1."id" asc limit 30) select ('{"edges": [' || array_to_string(array(select p.__node from t1_page p order by p.__o0 asc), ', ') || ']}'))::text
-- parameters
$1 = "%x%"
$2 = "a@x.com"
