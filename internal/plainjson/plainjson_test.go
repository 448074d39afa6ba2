package plainjson

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// What the reader reads, it reads as encoding/json does; where it refuses, encoding/json may still read.
func TestReadsAsEncodingJSON(t *testing.T) {
	read := []string{`"plain"`, `"query Q1 { accountCollection(first: 1) { edges { node { id } } } }"`,
		"\"0123456789abcdef\\\"0123456789\\\\abcdefgh\\nijklmnop\u00e9qrstuvwx\"", "\"\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f~~\"", ` "tab\tnew\nline \"q\" \\ \/ \b\f\r" `, `"é ✓"`, `""`, `null`, `{"a": [1, {"b": "]}"}]}`, `[]`, ` [ "x" , null ] `}
	refused := []string{`"\u00e9"`, "\"01234567890\x01bcdefgh\"", "\"0123456789abcdef\xff\"", `"0123456789abcdef`, "\"\xff\"", "\"a\x01\"", `"open`, `"\q"`, `{"a": }`, `{]`, `[1,]`, `"x`}
	for _, in := range read {
		if !agree(t, []byte(in)) {
			t.Errorf("refused %s", in)
		}
	}
	for _, in := range refused {
		if agree(t, []byte(in)) {
			t.Errorf("read %s", in)
		}
	}
}

// agree reads one value of data with the reader as the kind of value it starts with (a string, an object, an
// array or null), checks that encoding/json reads the same, and reports whether the reader read it.
func agree(t *testing.T, data []byte) bool {
	t.Helper()
	r := Reader{Data: data}
	switch r.Peek() {
	case '"':
		k := Reader{Data: data}
		key, keyOK := k.Key()
		var got, want string
		if !r.String(&got) || !r.End() {
			if keyOK && k.End() {
				t.Errorf("%q: read as a key %q, not as a string", data, key)
			}
			return false
		}
		if err := json.Unmarshal(data, &want); err != nil || got != want {
			t.Errorf("%q: read %q, encoding/json %q, %v", data, got, want, err)
		}
		if keyOK && k.End() && string(key) != got {
			t.Errorf("%q: read as a key %q, as a string %q", data, key, got)
		}
		if ascii := bytes.IndexFunc(data, func(c rune) bool { return c >= utf8.RuneSelf }) < 0; !keyOK && ascii && !bytes.Contains(data, []byte(`\`)) {
			t.Errorf("%q: a string of plain ASCII refused as a key", data)
		}
	case '{', '[', 'n':
		got, ok := r.Raw()
		if !ok || !r.End() {
			return false
		}
		var want json.RawMessage
		if err := json.Unmarshal(data, &want); err != nil || !bytes.Equal(got, bytes.TrimSpace(want)) {
			t.Errorf("%q: read %s, encoding/json %s, %v", data, got, want, err)
		}
	default:
		return false // numbers and booleans are encoding/json's
	}
	return true
}

func FuzzReader(f *testing.F) {
	for _, s := range []string{`"a\nb"`, `"query Q1 { accountCollection(first: 1) { edges { node { id } } } }"`, "\"0123456789\x1fabcdef\"", `-7`, `{"a":[1,"}"]}`, `null`, `true`, `"é"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { agree(t, data) })
}
