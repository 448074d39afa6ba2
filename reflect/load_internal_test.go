package reflect

import (
	"strings"
	"testing"
)

// answerRow is a row of the catalog query's answer of a kind, its fields as the protocol delivers them ("<null>"
// for NULL), padded with nulls to the answer's width.
func answerRow(kind string, fields ...string) [][]byte {
	row := [][]byte{[]byte(kind)}
	for _, f := range fields {
		if f == "<null>" {
			row = append(row, nil)
			continue
		}
		row = append(row, []byte(f))
	}
	for len(row) < answerFields {
		row = append(row, nil)
	}
	return row
}

func columnRow(fields ...string) [][]byte { return answerRow("c", fields...) }

func relationRow(oid, name string) [][]byte {
	return answerRow("r", oid, name, "r", "2200", "1", "false", "<null>", "false", "<null>", "<null>", "<null>")
}

// A column row of the catalog query's answer lands in rawColumn's fields in their order, a null comment is none,
// and a row that is not one the query writes is refused rather than read shifted or as zeros.
func TestAnswerColumnRows(t *testing.T) {
	var a Answer
	for _, row := range [][][]byte{
		columnRow("16390", "2", "title", "25", "-1", "text", "true", "false", "true", "false", "<null>"),
		columnRow("16390", "3", "n", "23", "-1", "integer", "false", "true", "false", "true", "a note"),
	} {
		if err := a.Add(row); err != nil {
			t.Fatal(err)
		}
	}
	want := []rawColumn{
		{Column: Column{Num: 2, Name: "title", Type: 25, TypeMod: -1, FormatType: "text", NotNull: true, Generated: true}},
		{Column: Column{Num: 3, Name: "n", Type: 23, TypeMod: -1, FormatType: "integer", HasDefault: true, Serial: true}},
	}
	got := a.columns[16390]
	if len(a.columns) != 1 || len(got) != 2 || got[0] != want[0] || got[1].Comment == nil || *got[1].Comment != "a note" {
		t.Fatalf("got %+v, want %+v", a.columns, want)
	}
	if got[1].Comment = nil; got[1] != want[1] {
		t.Fatalf("got %+v, want %+v", got[1], want[1])
	}

	for name, row := range map[string][][]byte{
		"fields missing":       columnRow("16390", "2", "title"),
		"a field too many":     columnRow("16390", "2", "title", "25", "-1", "text", "true", "false", "true", "false", "<null>", "x"),
		"a field over the row": append(columnRow("16390", "2", "title", "25", "-1", "text", "true", "false", "true", "false", "<null>"), nil),
		"a kind unknown":       answerRow("x", "16390"),
		"no kind":              answerRow("<null>", "16390"),
		"a relation's bad oid": answerRow("r", "r1", "t", "r", "2200", "1", "false", "<null>", "false", "<null>", "<null>", "<null>"),
		"a relation's bad indexes": answerRow("r", "1", "t", "r", "2200", "1", "false", "<null>", "false", "<null>", "<null>",
			`[{"oid": "x"}]`),
		"a relation without a name": answerRow("r", "1", "<null>", "r", "2200", "1", "false", "<null>", "false", "<null>",
			"<null>", "<null>"),
		"a document that is not JSON": answerRow("d", "{"),
		"a document and more":         answerRow("d", "{}", "1"),
		"an oid out of range":         columnRow("4294967296", "2", "title", "25", "-1", "text", "true", "false", "true", "false", "<null>"),
		"a negative oid":              columnRow("16390", "2", "title", "-25", "-1", "text", "true", "false", "true", "false", "<null>"),
		"a number that is not":        columnRow("16390", "two", "title", "25", "-1", "text", "true", "false", "true", "false", "<null>"),
		"a boolean that is not": columnRow("16390", "2", "title", "25", "-1", "text", "yes", "false", "true", "false",
			"<null>"),
		"a null boolean": columnRow("16390", "2", "title", "25", "-1", "text", "true", "<null>", "true", "false", "<null>"),
		"a null name":    columnRow("16390", "2", "<null>", "25", "-1", "text", "true", "false", "true", "false", "<null>"),
		"a null type":    columnRow("16390", "2", "title", "25", "-1", "<null>", "true", "false", "true", "false", "<null>"),
		"a null relation": columnRow("<null>", "2", "title", "25", "-1", "text", "true", "false", "true", "false",
			"<null>"),
	} {
		b := Answer{}
		if err := b.Add(row); err == nil || !strings.Contains(err.Error(), "catalog") || len(b.columns) != 0 ||
			len(b.raw.Relations) != 0 {
			t.Errorf("%s: got %v, %d columns and %d relations, want a catalog query error and none", name, err,
				len(b.columns), len(b.raw.Relations))
		}
	}

	doc := answerRow("d", `{}`)
	b := Answer{}
	if err := b.Add(doc); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(doc); err == nil || !strings.Contains(err.Error(), "second document") {
		t.Errorf("a second document: got %v", err)
	}
}

// Parse gives the relations in oid order and each its columns in attribute order, whatever order the rows came
// in, and refuses a column of a relation the answer does not hold and an answer without a document.
func TestParseGivesRelationsTheirColumns(t *testing.T) {
	var a Answer
	doc := answerRow("d", `{"schemas": [{"oid": 2200, "name": "public"}]}`)
	for _, row := range [][][]byte{
		columnRow("30", "2", "c2", "25", "-1", "text", "false", "false", "false", "false", "<null>"),
		relationRow("30", "c"),
		columnRow("10", "3", "a3", "25", "-1", "text", "false", "false", "false", "false", "<null>"),
		doc,
		relationRow("20", "b"),
		columnRow("30", "1", "c1", "25", "-1", "text", "false", "false", "false", "false", "<null>"),
		relationRow("10", "a"),
		columnRow("10", "1", "a1", "25", "-1", "text", "false", "false", "false", "false", "<null>"),
	} {
		if err := a.Add(row); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Parse(&a)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range s.raw.Relations {
		var names []string
		for _, c := range r.Columns {
			names = append(names, c.Name)
		}
		got = append(got, r.Name+":"+strings.Join(names, ","))
	}
	if g := strings.Join(got, " "); g != "a:a1,a3 b: c:c1,c2" || len(s.raw.Schemas) != 1 {
		t.Errorf("got %s and %d schemas", g, len(s.raw.Schemas))
	}
	// each relation's columns are its own: appending to one does not write into the next
	s.raw.Relations[0].Columns = append(s.raw.Relations[0].Columns, rawColumn{})
	if s.raw.Relations[2].Columns[0].Name != "c1" {
		t.Errorf("appending to a's columns changed c's: %+v", s.raw.Relations[2].Columns)
	}

	stray := Answer{}
	for _, row := range [][][]byte{
		doc, relationRow("10", "a"),
		columnRow("40", "1", "d1", "25", "-1", "text", "false", "false", "false", "false", "<null>"),
	} {
		if err := stray.Add(row); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Parse(&stray); err == nil || !strings.Contains(err.Error(), "relation 40") {
		t.Errorf("a column of a relation not in the document: got %v", err)
	}
	if _, err := Parse(&Answer{}); err == nil || !strings.Contains(err.Error(), "no document") {
		t.Errorf("no document: got %v", err)
	}
}
