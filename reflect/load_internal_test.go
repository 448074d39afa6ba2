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
		{Num: 2, Name: "title", Type: 25, TypeMod: -1, FormatType: "text", NotNull: true, Generated: true},
		{Num: 3, Name: "n", Type: 23, TypeMod: -1, FormatType: "integer", HasDefault: true, Serial: true, Comment: &note},
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
