package resolve

import (
	"bytes"
	"os"
	"strings"
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

// FuzzJSONLayout checks the layout pass, which copies runs of bytes, against the plain byte-at-a-time rule it
// implements.
func FuzzJSONLayout(f *testing.F) {
	for _, s := range []string{`{"a" : 1, "b" : [1,2,3]}`, `[{"x":{"y" : null}},` + "\n " + `{"x":true}]`,
		`{"s" : "\\\" still inside , ", "n" : 2.50}`, `"unterminated , `, `[1e2, -0.50, 12345678901234567890]`, `"a\\`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if got, want := appendJSONB([]byte("x"), raw), layoutByteByByte([]byte("x"), raw); string(got) != string(want) {
			t.Errorf("%q\n got: %q\nwant: %q", raw, got, want)
		}
	})
}

// layoutByteByByte is the layout rule one byte at a time: strings copied, white space outside them dropped, a
// space after each ':' and ',', numbers as serdeNumber gives them.
func layoutByteByByte(dst, raw []byte) []byte {
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '"':
			end := stringEnd(raw, i+1)
			dst = append(dst, raw[i:min(end+1, len(raw))]...)
			i = end
		case c == ' ' || c == '\n' || c == '\t' || c == '\r':
		case c == ':' || c == ',':
			dst = append(dst, c, ' ')
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(raw) && strings.IndexByte("0123456789.eE+-", raw[j]) >= 0 {
				j++
			}
			tok := raw[i:j]
			i = j - 1
			if n, changed := serdeNumber(string(tok)); changed {
				dst = append(dst, n...)
				continue
			}
			dst = append(dst, tok...)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// BenchmarkJSONLayout is the layout pass over the json Postgres builds for 10 accounts with 10 blogs each
// (json_build_object and json_agg, as the benchmark's Q3 answers).
func BenchmarkJSONLayout(b *testing.B) {
	raw, err := os.ReadFile("testdata/layout-q3.json")
	if err != nil {
		b.Fatal(err)
	}
	raw = bytes.TrimSpace(raw)
	dst := make([]byte, 0, 2*len(raw))
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		dst = appendJSONB(dst[:0], raw)
	}
	if want := layoutByteByByte(nil, raw); !bytes.Equal(dst, want) {
		b.Fatalf("got %.200s\nwant %.200s", dst, want)
	}
}
