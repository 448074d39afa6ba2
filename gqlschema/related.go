package gqlschema

import (
	"fmt"

	"github.com/pgreflect/pgreflect/reflect"
)

// The query features beyond pg_graphql (relatedFilter, relatedOrder, distinct) add fields to a table's own
// filter and order-by inputs and an argument to its collections, so they follow the features of the table whose
// rows are filtered, ordered or listed. The inputs of a related table they point to (its <X>Filter, its
// <X>OrderBy) are that table's own types, shaped by that table's features, so every type has one shape whoever
// refers to it. Types only these features use are added the first time a table asks for them.

// addRelatedFilters adds a field per relationship to a table's filter: the related table's filter for a to-one
// relationship, some/every/none over it for a to-many one.
func (b *builder) addRelatedFilters(t *Table, rels *tableRelationships, filter *Type) {
	if t.Features.Has(reflect.FeatureRelatedFilter) {
		toOne := func(t *Table) *TypeRef { return t.refs.filter }
		b.addRelationshipInputs(filter, rels, toOne, b.toManyFilter,
			"Matches when the related `%s` record matches the filter", "Matches by the related `%s` records")
	}
}

// addRelationshipInputs adds a field per relationship to a filter or order-by input: the related table's own
// input of that kind (toOne) for a to-one relationship, toMany's input for a to-many one ("" when its name is
// taken: no field then). A name a column or an operator already takes stays theirs. The descriptions take the
// related type's name.
func (b *builder) addRelationshipInputs(input *Type, rels *tableRelationships, toOne func(*Table) *TypeRef,
	toMany func(*Table) string, toOneDescription, toManyDescription string) {
	taken := inputNames(input)
	for _, f := range append(append([]*Field{}, rels.forward...), rels.reverse...) {
		if taken[f.Name] {
			continue
		}
		taken[f.Name] = true
		ref, desc := toOne(f.Table), fmt.Sprintf(toOneDescription, f.Table.TypeName)
		if f.Kind == FieldToMany {
			ref, desc = Named(toMany(f.Table)), fmt.Sprintf(toManyDescription, f.Table.TypeName)
		}
		if ref.Name == "" {
			continue
		}
		input.InputFields = append(input.InputFields, &InputValue{Name: f.Name, Description: str(desc), Type: ref,
			Relationship: f.Relationship})
	}
}

// toManyFilter is the name of the input that quantifies a filter over the records of a to-many relationship
// ("" when the name is taken).
func (b *builder) toManyFilter(t *Table) string {
	filter := t.refs.filter
	return b.extensionType(t.TypeName+"ToManyFilter", t, RoleFilter, func() *Type {
		return &Type{Kind: InputObject, Name: t.TypeName + "ToManyFilter", Role: RoleFilter, Hidden: b.hidden(t.Rel.Schema.OID),
			Description: str(fmt.Sprintf("Quantifies a filter over related `%s` records", t.TypeName)),
			InputFields: []*InputValue{
				{Name: "every", Description: b.text("Every related record matches (true when there is none)"), Type: filter},
				{Name: "none", Description: b.text("No related record matches"), Type: filter},
				{Name: "some", Description: b.text("At least one related record matches"), Type: filter},
			}}
	})
}

// addRelatedOrders adds a field per relationship to a table's order-by input: the related table's order-by for
// a to-one relationship, the count or an aggregate of a column for a to-many one.
func (b *builder) addRelatedOrders(t *Table, rels *tableRelationships, orderBy *Type) {
	if t.Features.Has(reflect.FeatureRelatedOrder) {
		toOne := func(t *Table) *TypeRef { return t.refs.orderBy }
		b.addRelationshipInputs(orderBy, rels, toOne, b.aggregateOrderBy, "Sorts by the related `%s` record",
			"Sorts by the count or an aggregate of the related `%s` records")
	}
}

// aggregateOrderBy is the name of the input that sorts by the count or an aggregate of a table's records ("" when
// the name is taken).
func (b *builder) aggregateOrderBy(t *Table) string {
	return b.extensionType(t.TypeName+"AggregateOrderBy", t, RoleOrderBy, func() *Type { return b.aggregateOrderByType(t) })
}

func (b *builder) aggregateOrderByType(t *Table) *Type {
	hidden := b.hidden(t.Rel.Schema.OID)
	agg := &Type{Kind: InputObject, Name: t.TypeName + "AggregateOrderBy", Role: RoleOrderBy, Hidden: hidden,
		Description: str(fmt.Sprintf("Sorts by the count or an aggregate of `%s` records", t.TypeName)),
		InputFields: []*InputValue{{Name: "count", Description: b.text("The number of records"), Type: b.named("OrderByDirection")}}}
	groups := []struct{ group, suffix string }{
		{"avg", "AvgOrderBy"}, {"max", "MaxOrderBy"}, {"min", "MinOrderBy"}, {"sum", "SumOrderBy"},
	}
	for _, g := range groups {
		cols := &Type{Kind: InputObject, Name: t.TypeName + g.suffix, Role: RoleOrderBy, Table: t, Hidden: hidden,
			Description: str(fmt.Sprintf("Sorts by the %s of a column of `%s` records", g.group, t.TypeName))}
		for _, c := range t.Columns {
			sumAvg, minMax := aggregatable(c)
			if c.Type.Scalar == "Boolean" || (g.group == "sum" || g.group == "avg") && !sumAvg || (g.group == "min" || g.group == "max") && !minMax {
				continue
			}
			cols.InputFields = append(cols.InputFields, &InputValue{Name: c.FieldName, Type: b.named("OrderByDirection"), Column: c})
		}
		if len(cols.InputFields) == 0 || b.typeNameTaken(cols.Name) {
			continue
		}
		b.add(cols)
		agg.InputFields = append(agg.InputFields, &InputValue{Name: g.group, Type: Named(cols.Name)})
	}
	return agg
}

// distinctArg is the distinctOn argument of a table's collections, with the enum of the columns it takes, or
// nil when the table does not offer it.
func (b *builder) distinctArg(t *Table) *InputValue {
	if !t.Features.Has(reflect.FeatureDistinct) {
		return nil
	}
	name := b.extensionType(t.TypeName+"SelectColumn", t, RoleEnum, func() *Type {
		enum := &Type{Kind: Enum, Name: t.TypeName + "SelectColumn", Role: RoleEnum, Hidden: b.hidden(t.Rel.Schema.OID),
			Description: str(fmt.Sprintf("A column of `%s` that distinctOn compares", t.TypeName))}
		for _, c := range t.Columns {
			if c.Type.Orderable() {
				enum.EnumValues = append(enum.EnumValues, &EnumValue{Name: c.FieldName, SQL: c.SQL.Name})
			}
		}
		if len(enum.EnumValues) == 0 {
			return nil
		}
		return enum
	})
	if name == "" {
		return nil
	}
	return &InputValue{Name: "distinctOn", Type: ListOf(NonNullOf(Named(name))),
		Description: b.text("Keeps one record per distinct value of these columns: the first in the collection's order")}
}

func inputNames(t *Type) map[string]bool {
	out := map[string]bool{}
	for _, f := range t.InputFields {
		out[f.Name] = true
	}
	return out
}
