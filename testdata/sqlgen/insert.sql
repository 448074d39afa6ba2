with t1_affected as (insert into "public"."account" as t1 ("email", "name") values (($1::text)::character varying(255), default), (null::character varying(255), ($2::text)::text) returning t1.*) select json_build_object('records', coalesce((select json_agg(json_build_object('id', t2."id", 'nodeId', translate(encode(convert_to(jsonb_build_array('public'::text, 'account'::text, t2."id")::text, 'utf-8'), 'base64'), E'\n', ''), 'balance', (t2."balance")::text, '__typename', 'Account'::text)) from t1_affected t2), '[]'::json), 'affectedCount', (select count(*) from t1_affected))::text
-- parameters
$1 = "a@x.com"
$2 = "n"
