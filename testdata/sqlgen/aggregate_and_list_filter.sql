select (with t1_page as (select null::text as __node, null::text as __cursor, t1."id" as __o0 from "public"."account" t1 where true and ((t1."tags" @> ($1::text[])::text[])) order by t1."id" asc limit 30) select ('{"aggregate": ' || (select (('{"avg": {"id": ' || coalesce(to_json(avg((t2."id")::numeric))::text, 'null') || '}, "sum": {"id": ') || ((coalesce(to_json(sum(t2."id"))::text, 'null') || '}, "count": ') || coalesce((count(*))::text, 'null')) || '}') from "public"."account" t2 where true and ((t2."tags" @> ($2::text[])::text[]))) || '}'))::text
-- parameters
$1 = ["a", "b\"c"]
$2 = ["a", "b\"c"]
