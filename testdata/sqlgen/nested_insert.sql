with t2 as (insert into "public"."blog" as t1 ("owner_id", "name") values (($1::text)::integer, ($2::text)::text) returning t1."id"), t3 as (insert into "public"."blog_post" as t1 ("title", "blog_id") values (($3::text)::text, (select "id" from t2)) returning t1."id", t1."blog_id", t1."title"), t4 as (insert into "public"."comment" as t1 ("body", "post_id") values (($4::text)::text, (select "id" from t3)), (default, (select "id" from t3)) returning true), t5 as (insert into "public"."blog_post" as t1 ("blog_id", "title") values (($5::text)::integer, ($6::text)::text) returning t1."id", t1."blog_id", t1."title"), t1_written as materialized (select count(*) from (select from t2 union all select from t3 union all select from t4 union all select from t5) w), t1_affected as (select "id", "blog_id", "title" from t3 union all select "id", "blog_id", "title" from t5) select (('{"records": [' || array_to_string(array(select ('{"title": ' || coalesce(to_json(t6."title")::text, 'null') || '}') from t1_affected t6), ', ') || '], "affectedCount": ') || coalesce((select count(*) from t1_affected)::text, 'null') || '}')::text from t1_written
-- parameters
$1 = "1"
$2 = "b"
$3 = "p"
$4 = "c1"
$5 = "1"
$6 = "q"
