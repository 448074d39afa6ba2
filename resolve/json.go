package resolve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
)

// rawJSON is JSON text produced by Postgres (jsonb text), embedded verbatim.
type rawJSON []byte

// encodeResponse renders {"data": ..., "errors": [...]} as Postgres renders jsonb: keys ordered shorter first
// then bytewise, ", " and ": " separators. A nil data with errors renders "data": null.
func encodeResponse(data map[string]any, errs []error) []byte {
	body := map[string]any{}
	if data != nil {
		body["data"] = data
	} else {
		body["data"] = nil
	}
	if len(errs) > 0 {
		list := make([]any, len(errs))
		for i, e := range errs {
			list[i] = map[string]any{"message": e.Error()}
		}
		body["errors"] = list
	}
	var buf bytes.Buffer
	writeJSON(&buf, body)
	return buf.Bytes()
}

// errorsOnly is the shape of request-level failures: no data key.
func errorsOnly(err error) []byte {
	var buf bytes.Buffer
	writeJSON(&buf, map[string]any{"errors": []any{map[string]any{"message": err.Error()}}})
	return buf.Bytes()
}

// dataNull is the shape of mutation and SQL failures.
func dataNull(err error) []byte { return encodeResponse(nil, []error{err}) }

// jsonbKeyLess orders object keys as jsonb stores them.
func jsonbKeyLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

func writeJSON(buf *bytes.Buffer, v any) {
	switch v := v.(type) {
	case nil:
		buf.WriteString("null")
	case rawJSON:
		if v == nil {
			buf.WriteString("null")
		} else {
			buf.Write(v)
		}
	case bool:
		buf.WriteString(strconv.FormatBool(v))
	case string:
		writeString(buf, v)
	case json.Number:
		buf.WriteString(string(v))
	case int:
		buf.WriteString(strconv.Itoa(v))
	case []any:
		buf.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				buf.WriteString(", ")
			}
			writeJSON(buf, e)
		}
		buf.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return jsonbKeyLess(keys[i], keys[j]) })
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteString(", ")
			}
			writeString(buf, k)
			buf.WriteString(": ")
			writeJSON(buf, v[k])
		}
		buf.WriteByte('}')
	default:
		writeString(buf, fmt.Sprint(v))
	}
}

// writeString escapes as Postgres' escape_json does.
func writeString(buf *bytes.Buffer, s string) {
	buf.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			buf.WriteString(`\"`)
		case '\\':
			buf.WriteString(`\\`)
		case '\b':
			buf.WriteString(`\b`)
		case '\f':
			buf.WriteString(`\f`)
		case '\n':
			buf.WriteString(`\n`)
		case '\r':
			buf.WriteString(`\r`)
		case '\t':
			buf.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(buf, `\u%04x`, r)
			} else {
				buf.WriteRune(r)
			}
		}
	}
	buf.WriteByte('"')
}
