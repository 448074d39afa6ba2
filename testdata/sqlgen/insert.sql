with t1_affected as (insert into "public"."account" as t1 ("email", "name") values (($1::text)::character varying(255), default), (null::character varying(255), ($2::text)::text) returning t1.*) select (('{"records": [' || array_to_string(array(select (('{"id": ' || coalesce((t2."id")::text, 'null') || ', "nodeId": ' || coalesce('"' || (translate(encode(convert_to(jsonb_build_array('public'::text, 'account'::text, t2."id")::text, 'utf-8'), 'base64'), E'\n', ''))::text || '"', 'null')) || (', "balance": ' || coalesce('"' || (t2."balance")::text || '"', 'null') || ', "__typename": "Account"}')) from t1_affected t2), ', ') || '], "affectedCount": ') || coalesce((select count(*) from t1_affected)::text, 'null') || '}')::text
-- parameters
$1 = "a@x.com"
$2 = "n"
