select (with t1_page as (select (('{"id": ' || coalesce((t1."id")::text, 'null') || ', "nodeId": ' || coalesce('"' || (translate(encode(convert_to(jsonb_build_array('public'::text, 'account'::text, t1."id")::text, 'utf-8'), 'base64'), E'\n', ''))::text || '"', 'null')) || (', "balance": ' || coalesce('"' || (t1."balance")::text || '"', 'null') || ', "__typename": "Account"}')) as __node, translate(encode(convert_to(jsonb_build_array(t1."name", t1."id")::text, 'utf-8'), 'base64'), E'\n', '') as __cursor, t1."name" as __o0, t1."id" as __o1 from "public"."account" t1 where true and ((t1."email" = ($1::text)::character varying(255)) and (((t1."id" = any(($2::text[])::integer[]))) or ((t1."email" is not null))) and (not ((t1."name" ilike ($3::text)::text)))) and (t1."name" is not null or (t1."name" is null and (t1."id" > ($4::text)::integer or (t1."id" = ($5::text)::integer and false)))) order by t1."name" desc nulls first, t1."id" asc limit 3 offset 2) select (('{"edges": [' || array_to_string(array(select ('{"node": ' || p.__node || ', "cursor": ' || coalesce('"' || (p.__cursor)::text || '"', 'null') || '}') from t1_page p order by p.__o0 desc nulls first, p.__o1 asc), ', ') || '], "pageInfo": {"endCursor": ') || (((coalesce('"' || (select p.__cursor from t1_page p order by p.__o0 asc nulls last, p.__o1 desc limit 1)::text || '"', 'null') || ', "hasNextPage": ' || coalesce(((select count(*) > 3 from (select 1 from "public"."account" t2 where true and ((t2."email" = ($6::text)::character varying(255)) and (((t2."id" = any(($7::text[])::integer[]))) or ((t2."email" is not null))) and (not ((t2."name" ilike ($8::text)::text)))) and (t2."name" is not null or (t2."name" is null and (t2."id" > ($9::text)::integer or (t2."id" = ($10::text)::integer and false)))) order by t2."name" desc nulls first, t2."id" asc limit 4 offset 2) x))::text, 'null')) || (', "startCursor": ' || coalesce('"' || (select p.__cursor from t1_page p order by p.__o0 desc nulls first, p.__o1 asc limit 1)::text || '"', 'null') || ', "hasPreviousPage": ' || coalesce(((exists (select 1 from t1_page) and true))::text, 'null')) || '}, "totalCount": ') || coalesce((select count(*) from "public"."account" t3 where true and ((t3."email" = ($11::text)::character varying(255)) and (((t3."id" = any(($12::text[])::integer[]))) or ((t3."email" is not null))) and (not ((t3."name" ilike ($13::text)::text)))))::text, 'null')) || '}'))::text
-- parameters
$1 = "a@x.com"
$2 = ["1", "2"]
$3 = "%a%"
$4 = "4"
$5 = "4"
$6 = "a@x.com"
$7 = ["1", "2"]
$8 = "%a%"
$9 = "4"
$10 = "4"
$11 = "a@x.com"
$12 = ["1", "2"]
$13 = "%a%"
