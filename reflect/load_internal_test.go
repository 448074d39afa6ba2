package reflect

import (
	"encoding/json"
	"strings"
	"testing"
)

// A column of the catalog query's answer is an array in rawColumn's order: each field lands where it belongs,
// a null comment is none, and an array of another length is refused rather than read shifted.
func TestRawColumnFromAnArray(t *testing.T) {
	var got []rawColumn
	doc := `[[2, "title", 25, -1, "text", true, false, true, false, null], [3, "n", 23, -1, "integer", false, true, false, true, "a note"]]`
	if err := json.Unmarshal([]byte(doc), &got); err != nil {
		t.Fatal(err)
	}
	note := "a note"
	want := []rawColumn{
		{Column: Column{Num: 2, Name: "title", Type: 25, TypeMod: -1, FormatType: "text", NotNull: true, Generated: true}},
		{Column: Column{Num: 3, Name: "n", Type: 23, TypeMod: -1, FormatType: "integer", HasDefault: true, Serial: true},
			Comment: &note},
	}
	if len(got) != 2 || got[0] != want[0] || got[1].Comment == nil || *got[1].Comment != note {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	got[1].Comment = want[1].Comment
	if got[1] != want[1] {
		t.Fatalf("got %+v, want %+v", got[1], want[1])
	}
	for _, bad := range []string{`[2, "title"]`, `[2, "title", 25, -1, "text", true, false, true, false, null, 1]`, `{"num": 2}`} {
		var c rawColumn
		if err := json.Unmarshal([]byte(bad), &c); err == nil || !strings.Contains(err.Error(), "column") {
			t.Errorf("%s: got %v, want a column error", bad, err)
		}
	}
}

// rawColumnSeeds are columns as the catalog query writes them, and others that only encoding/json reads.
var rawColumnSeeds = []string{
	`[1, "id", 23, -1, "integer", true, true, false, true, null]`,
	`[12,"naïve ✓",4294967295,-2147483648,"character varying(20)",false,false,true,false,"a \"quoted\" note"]`,
	` [ 3 , "a\"b" , 25 , 0 , "text" , false , false , false , false , "x" ] `,
	`[3, "tab\tin", 25, 0, "text", false, false, false, false, null]`,
	`[3, "x", 25, 1e1, "text", false, false, false, false, null]`,
	`[3, "x", 25, 01, "text", false, false, false, false, null]`,
	`[3, "x", 4294967296, 0, "text", false, false, false, false, null]`,
	`[3, "x", -1, 0, "text", false, false, false, false, null]`,
	`[-0, "x", 25, 0, "text", false, false, false, false, null]`,
	`[3, "x", 25, 0, "text", null, false, false, false, null]`,
	`[3, "x", 25, 0, "text", false, false, false, false, null] x`,
	`[3, "x", 25, 0, "text", false, false, false, false]`,
	"[3, \"\xff\", 25, 0, \"text\", false, false, false, false, null]",
	`[99999999999, "x", 25, 0, "text", false, false, false, false, null]`,
}

// The plain reader (decodePlain) reads the columns the catalog query writes, and what it reads is what
// encoding/json reads; what it leaves, encoding/json reads or refuses.
func TestRawColumnPlainReaderAgrees(t *testing.T) {
	if c := (rawColumn{}); !c.decodePlain([]byte(rawColumnSeeds[0])) || c.Name != "id" || !c.Serial {
		t.Fatalf("the plain reader left a column as the catalog query writes it: %+v", c)
	}
	for _, seed := range rawColumnSeeds {
		comparePlainReader(t, []byte(seed))
	}
}

func FuzzRawColumn(f *testing.F) {
	for _, seed := range rawColumnSeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(comparePlainReader)
}

func comparePlainReader(t *testing.T, data []byte) {
	var plain, generic rawColumn
	if !plain.decodePlain(data) {
		return
	}
	if err := generic.decode(data); err != nil {
		t.Fatalf("%s: the plain reader read %+v, encoding/json refused it: %v", data, plain, err)
	}
	if (plain.Comment == nil) != (generic.Comment == nil) || plain.Comment != nil && *plain.Comment != *generic.Comment {
		t.Fatalf("%s: comment %v, encoding/json %v", data, plain.Comment, generic.Comment)
	}
	plain.Comment, generic.Comment = nil, nil
	if plain != generic {
		t.Fatalf("%s: the plain reader read %+v, encoding/json %+v", data, plain, generic)
	}
}
