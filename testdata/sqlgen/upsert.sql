with t1_affected as (insert into "public"."account" as t1 ("email", "name") values (($1::text)::character varying(255), ($2::text)::text) on conflict ("email") do update set "name" = excluded."name", "email" = excluded."email" where ((t1."name" <> ($3::text)::text)) returning t1.*) select ('{"affectedCount": ' || coalesce((select count(*) from t1_affected)::text, 'null') || '}')::text;
with t1_affected as (insert into "public"."account" as t1 ("email") values (($1::text)::character varying(255)) on conflict ("email") do nothing returning t1.*) select ('{"affectedCount": ' || coalesce((select count(*) from t1_affected)::text, 'null') || '}')::text
-- parameters
$1 = "a@x.com"
$2 = "n"
$3 = "keep"
$4 = "a@x.com"
