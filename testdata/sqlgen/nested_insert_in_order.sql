with t2 as (insert into "public"."blog_post" as t1 ("blog_id", "title") values (($1::text)::integer, ($2::text)::text) returning t1."id", t1."blog_id", t1."title"), t3 as (insert into "public"."comment" as t1 ("body", "post_id") values (($3::text)::text, (select "id" from t2)), (default, (select "id" from t2)) returning true), t1_affected as (select "id", "blog_id", "title" from t2) select ('{"records": [' || array_to_string(array(select ('{"title": ' || coalesce(to_json(t4."title")::text, 'null') || '}') from t1_affected t4), ', ') || ']}')::text
-- parameters
$1 = "1"
$2 = "p"
$3 = "c1"
