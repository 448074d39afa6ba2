with t1_affected as (update "public"."account" t1 set "email" = ($1::text)::text where true and ((t1."id" < ($2::text)::integer)) returning t1."id", t1."email") select case when (select count(*) from t1_affected) > 1 then "pgreflect"."raise_error"('update impacts too many records'::text)::json else json_build_object('records', coalesce((select json_agg(json_build_object('email', t2."email")) from t1_affected t2), '[]'::json)) end::text;
with t1_affected as (delete from "public"."account" t1 where true returning t1.*) select case when (select count(*) from t1_affected) > 2 then "pgreflect"."raise_error"('delete impacts too many records'::text)::json else json_build_object('__typename', 'AccountDeleteResponse'::text) end::text
-- parameters
$1 = "b@x.com"
$2 = "5"
