select (with t1_page as (select ('{"cursor": ' || coalesce('"' || (translate(encode(convert_to(jsonb_build_array(t1."name", t1."id")::text, 'utf-8'), 'base64'), E'\n', ''))::text || '"', 'null') || '}') as __node, null::text as __cursor, t1."name" as __o0, t1."id" as __o1 from "public"."account" t1 where true and (t1."name" > ($1::text)::text or t1."name" is null or (t1."name" = ($2::text)::text and (t1."id" > ($3::text)::integer or (t1."id" = ($4::text)::integer and false)))) order by t1."name" asc nulls last, t1."id" asc limit 2) select ('{"edges": [' || array_to_string(array(select p.__node from t1_page p order by p.__o0 asc nulls last, p.__o1 asc), ', ') || ']}'))::text
-- parameters
$1 = "b"
$2 = "b"
$3 = "4"
$4 = "4"
