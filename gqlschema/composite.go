package gqlschema

import (
	"fmt"

	"github.com/pgreflect/pgreflect/reflect"
)

// compositeTypes are the GraphQL types made for one composite type, shared by every column of that type.
type compositeTypes struct {
	object *Type
	filter string // empty when no field can be filtered
}

// compositeValueType maps a column of a standalone composite type to a nested object type with a field per
// attribute, and a filter input over its scalar fields (the composite feature). pg_graphql leaves such columns
// out. Attributes that are composites themselves are left out, as are composite types whose name is taken.
func (b *builder) compositeValueType(oid uint32, formatType string) (*ValueType, bool) {
	ct, seen := b.composites[oid]
	if !seen {
		ct = b.addCompositeTypes(oid)
		if b.composites == nil {
			b.composites = map[uint32]*compositeTypes{}
		}
		b.composites[oid] = ct
	}
	if ct == nil {
		return nil, false
	}
	return &ValueType{GraphQL: b.named(ct.object.Name), Scalar: ct.object.Name, Cast: formatType, ElemOID: oid,
		Composite: ct.object, compositeFilter: ct.filter}, true
}

func (b *builder) addCompositeTypes(oid uint32) *compositeTypes {
	t := b.cat.Types[oid]
	if t == nil || t.Kind != "c" || len(t.Attributes) == 0 || !t.CanUse {
		return nil
	}
	inflect := b.schemaInflects(t.SchemaOID)
	name := base(t.Name, inflect)
	if !IsValidName(name) || b.typeNameTaken(name) || b.typeNameTaken(name+"Filter") {
		return nil
	}
	hidden := b.hidden(t.SchemaOID)
	obj := &Type{Kind: Object, Name: name, Role: RoleComposite, Hidden: hidden,
		Description: str(fmt.Sprintf("A value of the composite type `%s`", t.Name))}
	filter := &Type{Kind: InputObject, Name: name + "Filter", Role: RoleFilter, Hidden: hidden,
		Description: str(fmt.Sprintf("Boolean expression comparing fields on type %q", name))}
	for _, a := range t.Attributes {
		vt, ok := b.valueType(a.Type, a.TypeMod, a.FormatType)
		field := a.Name
		if inflect {
			field = lcfirst(base(a.Name, true))
		}
		if !ok || !IsValidName(field) {
			continue
		}
		col := &Column{SQL: &reflect.Column{Name: a.Name, Type: a.Type, TypeMod: a.TypeMod, FormatType: a.FormatType,
			CanSelect: true}, FieldName: field, Type: vt}
		obj.Fields = append(obj.Fields, &Field{Name: field, Type: vt.GraphQL, Kind: FieldColumn, Column: col})
		if f := b.filterOf(vt); f != nil {
			filter.InputFields = append(filter.InputFields, &InputValue{Name: field, Type: f, Column: col})
		}
	}
	if len(obj.Fields) == 0 {
		return nil
	}
	ct := &compositeTypes{object: b.add(obj)}
	if len(filter.InputFields) > 0 {
		ct.filter = b.add(filter).Name
	}
	return ct
}

// typeNameTaken reports whether a type has the name or a relation may take it, so that a type an extension
// adds never displaces one pg_graphql would show.
func (b *builder) typeNameTaken(name string) bool {
	if b.s.Types[name] != nil {
		return true
	}
	for _, r := range b.cat.Relations {
		if r.Schema == nil {
			continue
		}
		typeName := r.Directives.Name
		if typeName == "" {
			typeName = base(r.Name, r.Schema.Directives.InflectNames)
		}
		if typeName == name {
			return true
		}
	}
	return false
}

// extensionType returns the type of that name which an extension added for table t with that role, creating
// it with add the first time; "" when another type has or may take the name.
func (b *builder) extensionType(name string, t *Table, role TypeRole, add func() *Type) string {
	if existing := b.s.Types[name]; existing != nil {
		if existing.Table == t && existing.Role == role {
			return name
		}
		return ""
	}
	if b.typeNameTaken(name) {
		return ""
	}
	typ := add()
	if typ == nil {
		return ""
	}
	typ.Table = t
	return b.add(typ).Name
}

// functionFeatures are the features on for a function: the server's and its schema's (functions are not
// tables, so no table directive applies).
func (b *builder) functionFeatures(f *reflect.Function) reflect.FeatureSet {
	if f.Schema == nil {
		return b.features
	}
	return b.withFeatures(f.Schema.Directives.Features)
}

// enumArgument reports whether a function argument of that type is an enum GraphQL names, or an array of one,
// which the composite feature lets functions take.
func (b *builder) enumArgument(oid uint32) bool {
	t := b.cat.Types[oid]
	if t != nil && t.Category == "A" && t.Elem != 0 {
		t = b.cat.Types[t.Elem]
	}
	return t != nil && t.Kind == "e" && b.enumNames[t.OID] != ""
}
