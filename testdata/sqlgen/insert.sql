with t1_affected as (insert into "public"."account" as t1 ("email", "name") values (($1::text)::text, default), (null::text, ($2::text)::text) returning t1.*) select jsonb_build_object($3::text, (select count(*) from t1_affected), $4::text, coalesce((select jsonb_agg(jsonb_build_object($5::text, translate(encode(convert_to(jsonb_build_array($6::text, $7::text, t2."id")::text, 'utf-8'), 'base64'), E'\n', ''), $8::text, t2."id", $9::text, (t2."balance")::text, $10::text, $11::text)) from t1_affected t2), '[]'::jsonb))::text
-- parameters
$1 = "a@x.com"
$2 = "n"
$3 = "affectedCount"
$4 = "records"
$5 = "nodeId"
$6 = "public"
$7 = "account"
$8 = "id"
$9 = "balance"
$10 = "__typename"
$11 = "Account"
