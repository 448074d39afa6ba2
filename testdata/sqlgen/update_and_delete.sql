with t1_locked as materialized (select t1."id" from "public"."account" t1 where true and ((t1."id" < ($1::text)::integer)) order by t1."id" for update of t1), t1_affected as (update "public"."account" t1 set "email" = ($2::text)::text from t1_locked where true and t1."id" = t1_locked."id" and ((t1."id" < ($3::text)::integer)) returning t1."id", t1."email") select case when (select count(*) from t1_affected) > 1 then "pgreflect"."raise_error"($4::text) else jsonb_build_object($5::text, coalesce((select jsonb_agg(jsonb_build_object($6::text, t2."email")) from t1_affected t2), '[]'::jsonb)) end::text;
with t1_locked as materialized (select t1."id" from "public"."account" t1 where true order by t1."id" for update of t1), t1_affected as (delete from "public"."account" t1 using t1_locked where true and t1."id" = t1_locked."id" returning t1.*) select case when (select count(*) from t1_affected) > 2 then "pgreflect"."raise_error"($1::text) else jsonb_build_object($2::text, $3::text) end::text
-- parameters
$1 = "5"
$2 = "b@x.com"
$3 = "5"
$4 = "update impacts too many records"
$5 = "records"
$6 = "email"
$7 = "delete impacts too many records"
$8 = "__typename"
$9 = "AccountDeleteResponse"
