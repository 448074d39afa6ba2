select (select json_build_object('address', case when t1."address" is null then null else json_build_object('big', ((t1."address")."big")::text, 'city', (t1."address")."city", '__typename', 'Address'::text) end) from "public"."account" t1 where true and ((((t1."address")."city" = ($1::text)::text) and ((t1."address")."zip" is not null))))::text
-- parameters
$1 = "Oslo"
