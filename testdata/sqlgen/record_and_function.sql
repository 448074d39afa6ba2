select (select jsonb_build_object($1::text, case (t1."status")::text when $2::text then $3::text when $4::text then $5::text else (t1."status")::text end, $6::text, ((t1."meta") #>> '{}'), $7::text, "public"."full_name"(t1)) from "public"."account" t1 where true and ((t1."id" = ($8::text)::integer)))::text, (to_jsonb(("public"."add"("a" => ($9::text)::bigint, "b" => ($10::text[])::bigint[]))::text))::text, (select jsonb_build_object($11::text, t2."id") from "public"."newest"() t2 where true and not (t2 is null))::text
-- parameters
$1 = "status"
$2 = "a"
$3 = "A"
$4 = "b"
$5 = "B"
$6 = "meta"
$7 = "full"
$8 = "1"
$9 = "1"
$10 = ["2"]
$11 = "id"
