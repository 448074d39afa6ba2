with t1_locked as materialized (select t1."id" from "public"."account" t1 where true and ((t1."id" < ($1::text)::integer)) order by t1."id" for update of t1), t1_affected as (update "public"."account" t1 set "email" = ($2::text)::character varying(255) from t1_locked where true and t1."id" = t1_locked."id" and ((t1."id" < ($3::text)::integer)) returning t1.*) select case when (select count(*) from t1_affected) > 1 then to_json((select 'pgreflect atMost: update impacts too many records'::text)::integer)::text else ('{"records": [' || array_to_string(array(select ('{"email": ' || coalesce(to_json(t2."email")::text, 'null') || '}') from t1_affected t2), ', ') || ']}') end::text;
with t1_locked as materialized (select t1."id" from "public"."account" t1 where true order by t1."id" for update of t1), t1_affected as (delete from "public"."account" t1 using t1_locked where true and t1."id" = t1_locked."id" returning t1.*) select case when (select count(*) from t1_affected) > 2 then to_json((select 'pgreflect atMost: delete impacts too many records'::text)::integer)::text else ('{"__typename": "AccountDeleteResponse"}') end::text
-- parameters
$1 = "5"
$2 = "b@x.com"
$3 = "5"
