package gqlschema

import (
	"testing"

	"github.com/pgreflect/pgreflect/reflect"
)

func TestValidEnumValue(t *testing.T) {
	for name, want := range map[string]bool{"profile_pkey": true, "null": false, "true": false, "false": false, "1_key": false, "Null": true} {
		if got := validEnumValue(name); got != want {
			t.Errorf("validEnumValue(%q) = %v", name, got)
		}
	}
}

func TestRelationshipToParent(t *testing.T) {
	self := &reflect.Relation{Name: "account"}
	fk := &reflect.ForeignKey{Local: self, Foreign: self, LocalColumns: []string{"parent_id"}, ForeignColumns: []string{"id"}}
	table := &Table{Rel: self}
	forward := &Relationship{FK: fk, From: table, To: table, FromColumns: fk.LocalColumns, ToColumns: fk.ForeignColumns}
	reverse := &Relationship{FK: fk, From: table, To: table, FromColumns: fk.ForeignColumns, ToColumns: fk.LocalColumns}
	if !forward.ToParent() || reverse.ToParent() {
		t.Errorf("self-referencing key: forward %v, reverse %v", forward.ToParent(), reverse.ToParent())
	}
}
