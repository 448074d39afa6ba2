select (with t1_page as (select null::json as __node, null::text as __cursor, t1."id" as __o0 from "public"."account" t1 where true and ((t1."tags" @> ($1::text[])::text[])) order by t1."id" asc limit 30) select json_build_object('aggregate', (select json_build_object('avg', json_build_object('id', avg((t2."id")::numeric)), 'sum', json_build_object('id', sum(t2."id")), 'count', count(*)) from "public"."account" t2 where true and ((t2."tags" @> ($2::text[])::text[])))))::text
-- parameters
$1 = ["a", "b\"c"]
$2 = ["a", "b\"c"]
