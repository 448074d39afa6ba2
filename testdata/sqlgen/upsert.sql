insert into "public"."account" as t1 ("email", "name") values (($1::text)::character varying(255), ($2::text)::text) on conflict ("email") do update set "name" = excluded."name", "email" = excluded."email" where ((t1."name" <> ($3::text)::text)) returning ('{"affectedCount": 1}')::text;
insert into "public"."account" as t1 ("email") values (($1::text)::character varying(255)) on conflict ("email") do nothing returning ('{"affectedCount": 1}')::text
-- parameters
$1 = "a@x.com"
$2 = "n"
$3 = "keep"
$4 = "a@x.com"
