update "public"."account" t1 set "name" = ($1::text)::text where true and ((t1."id" = ($2::text)::integer)) returning ('{"records": [{"email": ' || coalesce(to_json(t1."email")::text, 'null') || '}], "affectedCount": 1}')::text;
delete from "public"."account" t1 where true and ((t1."email" = ($1::text)::character varying(255))) returning ('{"__typename": "AccountDeleteResponse"}')::text
-- parameters
$1 = "n"
$2 = "1"
$3 = "a@x.com"
