select (with t1_page as (select null::jsonb as __node, null::text as __cursor, t1."id" as __o0 from "public"."account" t1 where true and (t1."tags" @> ($1::text[])::text[]) order by t1."id" asc limit 30) select jsonb_build_object($2::text, (select jsonb_build_object($3::text, count(*), $4::text, jsonb_build_object($5::text, sum(t2."id")), $6::text, jsonb_build_object($7::text, avg((t2."id")::numeric))) from "public"."account" t2 where true and (t2."tags" @> ($8::text[])::text[]))))::text
-- parameters
$1 = ["a", "b\"c"]
$2 = "aggregate"
$3 = "count"
$4 = "sum"
$5 = "id"
$6 = "avg"
$7 = "id"
$8 = ["a", "b\"c"]
