package plainjson

import (
	"bytes"
	"encoding/json"
	"testing"
)

// What the reader reads, it reads as encoding/json does; where it refuses, encoding/json may still read.
func TestReadsAsEncodingJSON(t *testing.T) {
	read := []string{`"plain"`, ` "tab\tnew\nline \"q\" \\ \/ \b\f\r" `, `"é ✓"`, `""`, `0`, `-12`, `4294967295`,
		`true`, `false`, `null`, `{"a": [1, {"b": "]}"}]}`, `[]`, ` [ "x" , null ] `}
	refused := []string{`"\u00e9"`, "\"\xff\"", "\"a\x01\"", `"open`, `"\q"`, `01`, `1.5`, `1e3`, `12345678901`,
		`tru`, `{"a": }`, `{]`, `[1,]`, `"x`}
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

// agree reads one value of data with the reader as the kind of value it starts with, checks that encoding/json
// reads the same, and reports whether the reader read it.
func agree(t *testing.T, data []byte) bool {
	t.Helper()
	r := Reader{Data: data}
	switch r.Peek() {
	case '"':
		var got, want string
		if !r.String(&got) || !r.End() {
			return false
		}
		if err := json.Unmarshal(data, &want); err != nil || got != want {
			t.Errorf("%q: read %q, encoding/json %q, %v", data, got, want, err)
		}
	case 't', 'f':
		var got, want bool
		if !r.Bool(&got) || !r.End() {
			return false
		}
		if err := json.Unmarshal(data, &want); err != nil || got != want {
			t.Errorf("%q: read %v, encoding/json %v, %v", data, got, want, err)
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
		got, ok := r.Integer()
		if !ok || !r.End() {
			return false
		}
		var want int64
		if err := json.Unmarshal(data, &want); err != nil || got != want {
			t.Errorf("%q: read %d, encoding/json %d, %v", data, got, want, err)
		}
	}
	return true
}

func FuzzReader(f *testing.F) {
	for _, s := range []string{`"a\nb"`, `-7`, `{"a":[1,"}"]}`, `null`, `true`, `"é"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { agree(t, data) })
}
