select (select (('{"meta": ' || coalesce(to_json(((t1."meta") #>> '{}'))::text, 'null')) || (', "status": ' || coalesce('"' || (case (t1."status")::text when 'a'::text then 'A'::text when 'b'::text then 'B'::text else (t1."status")::text end)::text || '"', 'null') || ', "fullName": ' || coalesce(to_json("public"."full_name"(t1))::text, 'null')) || '}') from "public"."account" t1 where true and ((t1."id" = ($1::text)::integer)))::text, (to_jsonb(("public"."add"("a" => ($2::text)::"pg_catalog"."int8", "b" => ($3::text[])::"pg_catalog"."int8"[]))::text))::text, (select ('{"id": ' || coalesce((t2."id")::text, 'null') || '}') from "public"."newest"() t2 where true and not (t2 is null))::text
-- parameters
$1 = "1"
$2 = "1"
$3 = ["2"]
