package resolve

import (
	"bytes"
	"encoding/json"
	"testing"
)

// jsonLen, the size an answer's buffer is made with, is the length writeJSON writes: escapes, multi-byte and
// invalid UTF-8, numbers, nesting, meta objects and maps.
func TestJSONLenIsWhatWriteJSONWrites(t *testing.T) {
	for _, v := range []any{
		nil, true, false, "", "plain", "quote \" backslash \\ tab \t newline \n cr \r ff \f bs \b", "\x01\x1f",
		"héllo ☃ 𝄞", "bad \xff utf8", json.Number("12.5"), 0, -42, 1234567890123,
		[]any{}, []any{1, "two", nil, []any{true}},
		map[string]any{}, map[string]any{"b": 1, "aa": []any{"x"}, "é": nil},
		&introFields{keys: []string{"name", "ofType"}, values: []any{"Int", &introFields{keys: []string{}, values: []any{}}}},
		struct{ A int }{7},
	} {
		var buf bytes.Buffer
		writeJSON(&buf, v)
		if got := jsonLen(v); got != buf.Len() {
			t.Errorf("jsonLen(%#v) = %d, writeJSON wrote %d bytes: %s", v, got, buf.Len(), buf.Bytes())
		}
	}
}
