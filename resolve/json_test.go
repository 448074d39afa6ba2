package resolve

import (
	"testing"
)

// Postgres' json functions lay out text differently from jsonb (" : " after keys, no spaces in array_to_json,
// newlines in some aggregates); the response writer gives every answer jsonb's layout, leaving strings alone.
func TestJSONLayoutIsJSONB(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"a" : 1, "b" : [1,2,3]}`, `{"a": 1, "b": [1, 2, 3]}`},
		{`[{"x":{"y" : null}},` + "\n " + `{"x":true}]`, `[{"x": {"y": null}}, {"x": true}]`},
		{`{"s" : "a , b : c"}`, `{"s": "a , b : c"}`},
		{`{"s" : "quote \" , : inside", "t" : "ends in backslash \\", "u" : 1}`, `{"s": "quote \" , : inside", "t": "ends in backslash \\", "u": 1}`},
		{`{"s" : "\\\" still inside , ", "n" : 2.50}`, `{"s": "\\\" still inside , ", "n": 2.5}`},
		{`{"a": 1, "b": [1, 2]}`, `{"a": 1, "b": [1, 2]}`},
		{`"unterminated , `, `"unterminated , `},
	}
	for _, c := range cases {
		if got := string(appendJSONB(nil, []byte(c.in))); got != c.want {
			t.Errorf("%s\n got: %s\nwant: %s", c.in, got, c.want)
		}
	}
}
