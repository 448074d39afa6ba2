package gqlschema

import "testing"

// A slab's values are each their own, keep what was added, outlast the first allocation, and cost nothing
// until one is asked for.
func TestSlab(t *testing.T) {
	var s slab[InputValue]
	if n := testing.AllocsPerRun(10, func() { s = newSlab[InputValue](10) }); n != 0 {
		t.Errorf("an unused slab allocated %v times", n)
	}
	s = newSlab[InputValue](3)
	var got []*InputValue
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		got = append(got, s.add(InputValue{Name: name}))
	}
	got[0].Name = "changed"
	for i, want := range []string{"changed", "b", "c", "d", "e"} {
		if got[i].Name != want {
			t.Errorf("value %d is %q, want %q", i, got[i].Name, want)
		}
	}
}

// Interned references are shared, and wrapping a shared reference gives one wrapper.
func TestInternedReferences(t *testing.T) {
	in := newInterned()
	first, second := in.named("Int"), in.named("Int")
	if first != second || first == in.named("String") {
		t.Error("named: one reference per name")
	}
	nonNull := in.nonNull(first)
	if nonNull != in.nonNull(second) || nonNull.String() != "Int!" {
		t.Error("nonNull: one Int! wrapper")
	}
	if list := in.listOf(nonNull); list != in.listOf(nonNull) || list.String() != "[Int!]" {
		t.Errorf("listOf: %s, or not one wrapper", list)
	}
	text := in.text("a")
	if text != in.text("a") || *text != "a" {
		t.Error("text: one pointer per text")
	}
}
