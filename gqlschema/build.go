package gqlschema

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/pgreflect/pgreflect/reflect"
)

type builder struct {
	cat       *reflect.Catalog
	s         *Schema
	enumNames map[uint32]string
	// defaultMaxRows applies when neither relation nor schema sets max_rows
	defaultMaxRows int
	// features are on for every table, whatever the directives say
	features reflect.FeatureSet
	// composites are the types made for composite-type columns, by type oid (nil for one that has none)
	composites map[uint32]*compositeTypes
	interned
	// pageArgs are first, last, before, after and offset, which every collection shares (collectionArgs), and
	// affectedCount the field every mutation response shares
	pageArgs      []*InputValue
	affectedCount *Field
}

// Options tune schema generation.
type Options struct {
	// MaxRows is the page-size cap when no directive sets one; 0 means pg_graphql's 30.
	MaxRows int
	// Features are extensions beyond pg_graphql turned on for every table (the server's setting); directives
	// add to them per schema and per table.
	Features reflect.FeatureSet
	// Version is the pg_graphql behaviour to follow; "" means NewestVersion.
	Version Version
}

func str(s string) *string { return &s }

// Build generates the type system for a catalog.
func Build(cat *reflect.Catalog, opts Options) *Schema {
	b := &builder{
		cat:            cat,
		s:              &Schema{Types: map[string]*Type{}, Catalog: cat, Tables: map[uint32]*Table{}, visible: map[uint32]bool{}},
		enumNames:      map[uint32]string{},
		defaultMaxRows: 30,
		features:       opts.Features,
		interned:       newInterned(),
	}
	if opts.MaxRows > 0 {
		b.defaultMaxRows = opts.MaxRows
	}
	if opts.Version == "" {
		opts.Version = NewestVersion
	}
	b.s.Version = opts.Version
	for _, sc := range cat.Schemas {
		if sc.Directives.Introspection || !opts.Version.introspectionOptIn() {
			b.s.Introspection = true
			b.s.visible[sc.OID] = true
		}
	}
	b.addBuiltins()
	b.addEnums()
	tables, keyless := b.collectTables()
	rels := b.relationships(tables)
	computed, udfs := b.functions(tables, keyless)
	for _, t := range tables {
		b.addTableTypes(t, rels[t], computed[t])
	}
	b.addKeylessTypes(tables, keyless, computed)
	for _, t := range tables {
		b.addWriteExtensions(t, rels[t])
	}
	b.addRoots(tables, udfs)
	return b.s
}

func (b *builder) add(t *Type) *Type {
	b.s.Types[t.Name] = t
	return t
}

func (b *builder) hidden(schemaOID uint32) bool { return b.s.HidesSchema(schemaOID) }

func (b *builder) addBuiltins() {
	for _, sc := range builtinScalars {
		b.add(&Type{Kind: Scalar, Name: sc.name, Description: str(sc.description)})
	}
	b.add(&Type{Kind: Object, Name: "PageInfo", Role: RolePageInfo, Fields: []*Field{
		{Name: "endCursor", Type: b.named("String"), Kind: FieldEndCursor},
		{Name: "hasNextPage", Type: b.nonNull(b.named("Boolean")), Kind: FieldHasNextPage},
		{Name: "hasPreviousPage", Type: b.nonNull(b.named("Boolean")), Kind: FieldHasPreviousPage},
		{Name: "startCursor", Type: b.named("String"), Kind: FieldStartCursor},
	}})
	b.add(&Type{Kind: Enum, Name: "FilterIs", EnumValues: []*EnumValue{{Name: "NULL"}, {Name: "NOT_NULL"}}})
	b.add(&Type{Kind: Enum, Name: "OrderByDirection", Description: b.text("Defines a per-field sorting order"),
		EnumValues: []*EnumValue{
			{Name: "AscNullsFirst", Description: b.text("Ascending order, nulls first")},
			{Name: "AscNullsLast", Description: b.text("Ascending order, nulls last")},
			{Name: "DescNullsFirst", Description: b.text("Descending order, nulls first")},
			{Name: "DescNullsLast", Description: b.text("Descending order, nulls last")},
		}})
	b.add(&Type{Kind: Interface, Name: "Node", Role: RoleNodeInterface, Fields: []*Field{
		{Name: "nodeId", Description: b.text("Retrieves a record by `ID`"), Type: b.nonNull(b.named("ID")), Kind: FieldNodeID},
	}})
	b.add(&Type{Kind: InputObject, Name: "IDFilter", Role: RoleScalarFilter,
		Description: b.text(`Boolean expression comparing fields on type "ID"`),
		InputFields: []*InputValue{{Name: "eq", Type: b.named("ID")}}})
	ordered := []string{"Int", "Float", "BigInt", "BigFloat", "Date", "Time", "Datetime"}
	for _, sc := range ordered {
		b.addScalarFilter(sc, "eq gt gte in is lt lte neq")
	}
	b.addScalarFilter("String", "eq gt gte ilike in iregex is like lt lte neq regex startsWith")
	b.addScalarFilter("UUID", "eq in is neq")
	b.addScalarFilter("Boolean", "eq is")
	b.addScalarFilter("Opaque", "eq is")
	for _, sc := range []string{"Int", "Float", "String", "Boolean", "UUID", "BigInt", "BigFloat", "Time", "Date", "Datetime"} {
		b.addListFilter(sc)
	}
}

func (b *builder) addScalarFilter(scalar, ops string) {
	t := &Type{Kind: InputObject, Name: scalar + "Filter", Role: RoleScalarFilter,
		Description: str(fmt.Sprintf("Boolean expression comparing fields on type %q", scalar))}
	for _, op := range strings.Fields(ops) {
		var ref *TypeRef
		switch op {
		case "in":
			ref = b.listOf(b.nonNull(b.named(scalar)))
		case "is":
			ref = b.named("FilterIs")
		case "ilike", "iregex", "like", "regex", "startsWith":
			ref = b.named("String")
		default:
			ref = b.named(scalar)
		}
		t.InputFields = append(t.InputFields, &InputValue{Name: op, Type: ref})
	}
	b.add(t)
}

func (b *builder) addListFilter(scalar string) {
	elems := b.listOf(b.nonNull(b.named(scalar)))
	b.add(&Type{Kind: InputObject, Name: scalar + "ListFilter", Role: RoleScalarFilter,
		Description: str(fmt.Sprintf("Boolean expression comparing fields on type %q", scalar+"List")),
		InputFields: []*InputValue{
			{Name: "containedBy", Type: elems}, {Name: "contains", Type: elems}, {Name: "eq", Type: elems},
			{Name: "is", Type: b.named("FilterIs")}, {Name: "overlaps", Type: elems},
		}})
}

func (b *builder) schemaInflects(oid uint32) bool {
	if sc := b.cat.SchemaByOID(oid); sc != nil {
		return sc.Directives.InflectNames
	}
	return false
}

func (b *builder) addEnums() {
	var oids []uint32
	for oid, t := range b.cat.Types {
		if t.Kind == "e" && t.CanUse && b.cat.SchemaByOID(t.SchemaOID) != nil {
			oids = append(oids, oid)
		}
	}
	sort.Slice(oids, func(i, j int) bool { return oids[i] < oids[j] })
	for _, oid := range oids {
		t := b.cat.Types[oid]
		name := t.Directives.Name
		if name == "" {
			name = base(t.Name, b.schemaInflects(t.SchemaOID))
		}
		if !IsValidName(name) || b.s.Types[name] != nil {
			continue
		}
		b.enumNames[oid] = name
		et := &Type{Kind: Enum, Name: name, Role: RoleEnum, Enum: t, Hidden: b.hidden(t.SchemaOID)}
		for _, label := range t.EnumValues {
			gql := label
			if m, ok := t.Directives.Mappings[label]; ok {
				gql = m
			}
			et.EnumValues = append(et.EnumValues, &EnumValue{Name: gql, SQL: label})
		}
		b.add(et)
		b.add(&Type{Kind: InputObject, Name: name + "Filter", Role: RoleScalarFilter, Hidden: et.Hidden,
			Description: str(fmt.Sprintf("Boolean expression comparing fields on type %q", name)),
			InputFields: []*InputValue{
				{Name: "eq", Type: b.named(name)}, {Name: "in", Type: b.listOf(b.nonNull(b.named(name)))},
				{Name: "is", Type: b.named("FilterIs")}, {Name: "neq", Type: b.named(name)},
			}})
	}
}

// collectTables returns the tables with a primary key, which get collections, mutations and relationships, and
// the keyless relations (views without primary_key_columns, tables without a key), which pg_graphql shows only
// as the result of a computed field (keylessTypes).
func (b *builder) collectTables() (keyed, keyless []*Table) {
	taken := map[string]*reflect.Relation{}
	for _, withKey := range []bool{true, false} {
		for _, r := range b.cat.Relations {
			if r.Schema == nil || (len(r.PrimaryKey) > 0) != withKey {
				continue
			}
			// A keyless relation may never be reached, so it must not add the types of its composite columns.
			t, why := b.table(r, withKey)
			if t == nil {
				b.omit(Omission{Reason: why, Relation: r, Name: b.relationTypeName(r)})
				continue
			}
			if by := taken[t.TypeName]; by != nil || b.s.Types[t.TypeName] != nil {
				b.omit(Omission{Reason: OmitNameTaken, Relation: r, Name: t.TypeName, By: by})
				continue
			}
			taken[t.TypeName] = r
			if withKey {
				b.s.Tables[r.OID] = t
				keyed = append(keyed, t)
			} else {
				keyless = append(keyless, t)
			}
		}
	}
	return keyed, keyless
}

// relationTypeName is the type name of a relation: its name directive, else its (inflected) name.
func (b *builder) relationTypeName(r *reflect.Relation) string {
	if r.Directives.Name != "" {
		return r.Directives.Name
	}
	return base(r.Name, r.Schema.Directives.InflectNames)
}

// table maps a relation the role may read, or returns nil and why not: its name is not a GraphQL name, no
// column is selectable, or a primary key column has no GraphQL type. Composite columns (the composite feature) are
// mapped only when composites is set. A selectable column whose name is not a GraphQL name is left out and
// recorded.
func (b *builder) table(r *reflect.Relation, composites bool) (*Table, OmitReason) {
	inflect := r.Schema.Directives.InflectNames
	t := &Table{Rel: r, Inflect: inflect, TypeName: b.relationTypeName(r), Features: b.tableFeatures(r)}
	if !IsValidName(t.TypeName) {
		return nil, OmitInvalidName
	}
	t.refs = newTableRefs(t.TypeName)
	var badNames []Omission
	selectable := false
	columns := newSlab[Column](len(r.Columns))
	t.AllColumns = make([]*Column, 0, len(r.Columns))
	for _, c := range r.Columns {
		name := c.Directives.Name
		if name == "" {
			name = c.Name
			if inflect {
				name = lcfirst(base(c.Name, true))
			}
		}
		vt, ok := b.valueType(c.Type, c.TypeMod, c.FormatType)
		if !ok && composites && t.Features.Has(reflect.FeatureComposite) {
			vt, ok = b.compositeValueType(c.Type, c.FormatType)
		}
		if !ok {
			continue
		}
		col := columns.add(Column{SQL: c, FieldName: name, Type: vt})
		t.AllColumns = append(t.AllColumns, col)
		selectable = selectable || c.CanSelect
		if c.CanSelect && IsValidName(name) {
			t.Columns = append(t.Columns, col)
		} else if c.CanSelect {
			badNames = append(badNames, Omission{Reason: OmitInvalidName, Relation: r, Column: c, Name: name})
		}
	}
	// A table the role may read keeps its type even when no column has a name GraphQL can show: it
	// still has nodeId (pg_graphql does the same).
	if !selectable {
		return nil, OmitNotSelectable
	}
	for _, pk := range r.PrimaryKey {
		for _, c := range t.AllColumns {
			if c.SQL.Name == pk {
				t.PK = append(t.PK, c)
			}
		}
	}
	if len(t.PK) != len(r.PrimaryKey) {
		return nil, OmitPrimaryKeyType
	}
	b.s.Omitted = append(b.s.Omitted, badNames...)
	t.MaxRows = b.defaultMaxRows
	if m := r.Schema.Directives.MaxRows; m != nil {
		t.MaxRows = int(*m)
	}
	if m := r.Directives.MaxRows; m != nil {
		t.MaxRows = int(*m)
	}
	return t, 0
}

// tableRelationships are a table's relationship fields: forward (foreign keys on it) then reverse.
type tableRelationships struct {
	forward, reverse []*Field
}

func (b *builder) relationships(tables []*Table) map[*Table]*tableRelationships {
	out := map[*Table]*tableRelationships{}
	for _, t := range tables {
		out[t] = &tableRelationships{}
	}
	for _, fk := range b.cat.ForeignKeys {
		local, foreign := b.s.Tables[fk.Local.OID], b.s.Tables[fk.Foreign.OID]
		if local == nil || foreign == nil || !selectable(local, fk.LocalColumns) || !selectable(foreign, fk.ForeignColumns) {
			continue
		}
		// To-one field on the local table.
		name := fk.Directives.ForeignName
		if name == "" {
			name = relationshipName(fk.LocalColumns, foreign, foreign.Inflect)
		}
		// Non-null when a local column is, unless the key is unchecked: a row may then reference nothing.
		nullable := true
		for _, c := range fk.LocalColumns {
			if local.ColumnByName(c).SQL.NotNull && !fk.Unchecked {
				nullable = false
			}
		}
		rls := foreign.Rel.RLS
		if fk.Synthetic {
			rls = local.Rel.RLS // pg_graphql copies the local table's flag for directive foreign keys
		}
		ref := foreign.refs.node
		if !nullable && !rls {
			ref = foreign.refs.nodeNonNull
		}
		out[local].forward = append(out[local].forward, &Field{
			Name: name, Type: ref, Kind: FieldToOne, Table: foreign,
			Relationship: &Relationship{FK: fk, From: local, To: foreign, FromColumns: fk.LocalColumns, ToColumns: fk.ForeignColumns},
		})
		// Reverse field on the foreign table: to-one when the local columns cover a unique index.
		rel := &Relationship{FK: fk, From: foreign, To: local, FromColumns: fk.ForeignColumns, ToColumns: fk.LocalColumns}
		if local.Rel.UniqueIndexWithin(fk.LocalColumns) {
			rname := fk.Directives.LocalName
			if rname == "" {
				rname = relationshipName(fk.ForeignColumns, local, local.Inflect) // pg_graphql takes the flag of the table the field leads to
			}
			out[foreign].reverse = append(out[foreign].reverse, &Field{
				Name: rname, Type: local.refs.node, Kind: FieldToOne, Table: local, Relationship: rel})
			continue
		}
		rname := fk.Directives.LocalName
		if rname == "" {
			rname = lcfirst(local.TypeName) + "Collection"
		}
		out[foreign].reverse = append(out[foreign].reverse, &Field{
			Name: rname, Type: local.refs.connection, Kind: FieldToMany, Table: local,
			Relationship: rel, Args: b.collectionArgs(local)})
	}
	return out
}

func selectable(t *Table, cols []string) bool {
	for _, c := range cols {
		if t.ColumnByName(c) == nil {
			return false
		}
	}
	return true
}

// tableFeatures is the server's features with those the schema's and the table's directives add.
func (b *builder) tableFeatures(r *reflect.Relation) reflect.FeatureSet {
	return b.withFeatures(r.Schema.Directives.Features, r.Directives.Features)
}

// withFeatures is the server's features with those the directives' lists add; nil when there are none.
func (b *builder) withFeatures(lists ...[]reflect.Feature) reflect.FeatureSet {
	n := len(b.features)
	for _, l := range lists {
		n += len(l)
	}
	if n == 0 {
		return nil
	}
	set := reflect.FeatureSet{}
	for f := range b.features {
		set[f] = true
	}
	for _, l := range lists {
		for _, f := range l {
			set[f] = true
		}
	}
	return set
}

// relationshipName names a relationship field from single-column keys ending in _id (inflected) or Id (not),
// else after the target type.
func relationshipName(cols []string, target *Table, inflect bool) string {
	if len(cols) == 1 {
		c := cols[0]
		if inflect && strings.HasSuffix(c, "_id") && len(c) > 3 {
			return lcfirst(base(strings.TrimSuffix(c, "_id"), true))
		}
		if !inflect && strings.HasSuffix(c, "Id") && len(c) > 2 {
			return lcfirst(strings.TrimSuffix(c, "Id"))
		}
	}
	return lcfirst(target.TypeName)
}

func (b *builder) collectionArgs(t *Table) []*InputValue {
	if b.pageArgs == nil {
		// The same for every collection, and nothing changes an argument once made: made once a build.
		b.pageArgs = []*InputValue{
			{Name: "first", Description: b.text("Query the first `n` records in the collection"), Type: b.named("Int")},
			{Name: "last", Description: b.text("Query the last `n` records in the collection"), Type: b.named("Int")},
			{Name: "before", Description: b.text("Query values in the collection before the provided cursor"), Type: b.named("Cursor")},
			{Name: "after", Description: b.text("Query values in the collection after the provided cursor"), Type: b.named("Cursor")},
			{Name: "offset", Description: b.text("Skip n values from the after cursor. Alternative to cursor pagination. Backward pagination not supported."), Type: b.named("Int")},
		}
	}
	args := make([]*InputValue, 0, len(b.pageArgs)+3)
	args = append(args, b.pageArgs...)
	args = append(args,
		&InputValue{Name: "filter", Description: b.text("Filters to apply to the results set when querying from the collection"), Type: t.refs.filter},
		&InputValue{Name: "orderBy", Description: b.text("Sort order to apply to the collection"), Type: t.refs.orders})
	if d := b.distinctArg(t); d != nil {
		args = append(args, d)
	}
	return args
}

func (b *builder) addTableTypes(t *Table, rels *tableRelationships, computed []*Field) {
	hidden := b.hidden(t.Rel.Schema.OID)
	name := t.TypeName
	node := &Type{Kind: Object, Name: name, Role: RoleNode, Table: t, Interfaces: []string{"Node"},
		Description: t.Rel.Directives.Description, Hidden: hidden}
	node.Fields = append(node.Fields, &Field{Name: "nodeId", Description: b.text("Globally Unique Record Identifier"),
		Type: b.nonNull(b.named("ID")), Kind: FieldNodeID, Table: t})
	node.Fields = append(node.Fields, b.columnFields(t)...)
	node.Fields = append(node.Fields, rels.forward...)
	node.Fields = append(node.Fields, rels.reverse...)
	node.Fields = append(node.Fields, computed...)
	b.add(node)

	b.add(&Type{Kind: Object, Name: name + "Edge", Role: RoleEdge, Table: t, Hidden: hidden, Fields: []*Field{
		{Name: "cursor", Type: b.nonNull(b.named("String")), Kind: FieldCursor},
		{Name: "node", Type: t.refs.nodeNonNull, Kind: FieldEdgeNode, Table: t},
	}})
	conn := &Type{Kind: Object, Name: name + "Connection", Role: RoleConnection, Table: t, Hidden: hidden, Fields: []*Field{
		{Name: "edges", Type: NonNullOf(ListOf(NonNullOf(Named(name + "Edge")))), Kind: FieldEdges, Table: t},
		{Name: "pageInfo", Type: b.nonNull(b.named("PageInfo")), Kind: FieldPageInfo},
	}}
	if t.Rel.Directives.TotalCountEnabled() {
		conn.Fields = append(conn.Fields, &Field{Name: "totalCount", Type: b.nonNull(b.named("Int")), Kind: FieldTotalCount,
			Description: b.text("The total number of records matching the `filter` criteria")})
	}
	if t.Rel.Directives.AggregateEnabled() {
		conn.Fields = append(conn.Fields, &Field{Name: "aggregate", Type: Named(name + "Aggregate"), Kind: FieldAggregate,
			Table: t, Description: str(fmt.Sprintf("Aggregate functions calculated on the collection of `%s`", name))})
		b.addAggregateTypes(t, hidden)
	}
	b.add(conn)

	// Unlike the scalar filters, pg_graphql gives a table's filter no description.
	filter := &Type{Kind: InputObject, Name: name + "Filter", Role: RoleFilter, Table: t, Hidden: hidden,
		InputFields: make([]*InputValue, 0, len(t.Columns)+4)}
	byColumn := newSlab[InputValue](len(t.Columns))
	for _, c := range t.Columns {
		if f := b.filterOf(c.Type); f != nil {
			filter.InputFields = append(filter.InputFields, byColumn.add(InputValue{Name: c.FieldName, Type: f, Column: c}))
		}
	}
	filter.InputFields = append(filter.InputFields, &InputValue{Name: "nodeId", Type: b.named("IDFilter")})
	for _, op := range []struct{ name, desc string }{
		{"and", "Returns true only if all its inner filters are true, otherwise returns false"},
		{"or", "Returns true if at least one of its inner filters is true, otherwise returns false"},
		{"not", "Negates a filter"},
	} {
		if slices.ContainsFunc(filter.InputFields, func(in *InputValue) bool { return in.Column != nil && in.Name == op.name }) {
			continue
		}
		ref := t.refs.filters
		if op.name == "not" {
			ref = t.refs.filter
		}
		filter.InputFields = append(filter.InputFields, &InputValue{Name: op.name, Description: b.text(op.desc), Type: ref})
	}
	b.addRelatedFilters(t, rels, filter)
	b.add(filter)

	orderBy := &Type{Kind: InputObject, Name: name + "OrderBy", Role: RoleOrderBy, Table: t, Hidden: hidden,
		InputFields: make([]*InputValue, 0, len(t.Columns))}
	byColumn = newSlab[InputValue](len(t.Columns))
	for _, c := range t.Columns {
		if c.Type.Orderable() {
			orderBy.InputFields = append(orderBy.InputFields, byColumn.add(InputValue{Name: c.FieldName, Type: b.named("OrderByDirection"), Column: c}))
		}
	}
	b.addRelatedOrders(t, rels, orderBy)
	b.add(orderBy)
	b.addMutationTypes(t, hidden)
}

// columnFields are the fields of a table's selectable columns.
func (b *builder) columnFields(t *Table) []*Field {
	out := make([]*Field, 0, len(t.Columns))
	fields := newSlab[Field](len(t.Columns))
	for _, c := range t.Columns {
		ref := c.Type.GraphQL
		if c.SQL.NotNull {
			ref = b.nonNull(ref)
		}
		out = append(out, fields.add(Field{Name: c.FieldName, Description: c.SQL.Directives.Description,
			Type: ref, Kind: FieldColumn, Column: c, Table: t}))
	}
	return out
}

// writable lists the columns an insert or update input offers.
func (b *builder) writable(t *Table, priv func(*reflect.Column) bool) []*InputValue {
	var out []*InputValue
	values := newSlab[InputValue](len(t.AllColumns))
	for _, c := range t.AllColumns {
		// A column without a GraphQL name cannot be written in a document, nor be listed by introspection;
		// composite columns are read-only (the composite extension).
		if c.SQL.Generated || c.SQL.Serial || !priv(c.SQL) || !IsValidName(c.FieldName) || c.Type.Composite != nil {
			continue
		}
		out = append(out, values.add(InputValue{Name: c.FieldName, Type: c.Type.GraphQL, Column: c}))
	}
	return out
}

func (b *builder) addMutationTypes(t *Table, hidden bool) {
	name := t.TypeName
	if b.affectedCount == nil {
		b.affectedCount = &Field{Name: "affectedCount", Description: b.text("Count of the records impacted by the mutation"),
			Type: b.nonNull(b.named("Int")), Kind: FieldAffectedCount}
	}
	// The three responses' fields are alike: they share them.
	records := &Field{Name: "records", Description: b.text("Array of records impacted by the mutation"),
		Type: t.refs.records, Kind: FieldRecords, Table: t}
	response := func(suffix string, role TypeRole) {
		b.add(&Type{Kind: Object, Name: name + suffix, Role: role, Table: t, Hidden: hidden,
			Fields: []*Field{b.affectedCount, records}})
	}
	if ins := b.writable(t, func(c *reflect.Column) bool { return c.CanInsert }); len(ins) > 0 {
		b.add(&Type{Kind: InputObject, Name: name + "InsertInput", Role: RoleInsertInput, Table: t, Hidden: hidden, InputFields: ins})
		response("InsertResponse", RoleInsertResponse)
	}
	if upd := b.writable(t, func(c *reflect.Column) bool { return c.CanUpdate }); len(upd) > 0 {
		b.add(&Type{Kind: InputObject, Name: name + "UpdateInput", Role: RoleUpdateInput, Table: t, Hidden: hidden, InputFields: upd})
		response("UpdateResponse", RoleUpdateResponse)
	}
	if t.Rel.CanDelete {
		response("DeleteResponse", RoleDeleteResponse)
	}
}

func (b *builder) addAggregateTypes(t *Table, hidden bool) {
	name := t.TypeName
	agg := &Type{Kind: Object, Name: name + "Aggregate", Role: RoleAggregate, Table: t, Hidden: hidden,
		Description: str(fmt.Sprintf("Aggregate results for `%s`", name)),
		Fields: []*Field{{Name: "count", Description: b.text("The number of records matching the query"),
			Type: b.nonNull(b.named("Int")), Kind: FieldAggregateCount}}}
	groups := []struct{ group, suffix, word, term, description string }{
		{"sum", "SumAggregateResult", "Sum", "summation", "Summation aggregates for numeric fields"},
		{"avg", "AvgAggregateResult", "Average", "average", "Average aggregates for numeric fields"},
		{"min", "MinAggregateResult", "Minimum", "minimum", "Minimum aggregates for comparable fields"},
		{"max", "MaxAggregateResult", "Maximum", "maximum", "Maximum aggregates for comparable fields"},
	}
	for _, g := range groups {
		result := &Type{Kind: Object, Name: name + g.suffix, Role: RoleAggregateResult, Table: t, Aggregate: g.group, Hidden: hidden,
			Description: str(fmt.Sprintf("Result of %s aggregation for `%s`", g.term, name))}
		// Only columns the role may select: pg_graphql lists every column here, which leaks the names of hidden
		// columns and fails at run time (docs/compatibility.md).
		for _, c := range t.Columns {
			sumAvg, minMax := aggregatable(c)
			if (g.group == "sum" || g.group == "avg") && !sumAvg || (g.group == "min" || g.group == "max") && !minMax {
				continue
			}
			result.Fields = append(result.Fields, &Field{Name: c.FieldName, Type: b.named(aggregateType(g.group, c)),
				Kind: FieldAggregateColumn, Column: c,
				Description: str(fmt.Sprintf("%s of %s across all matching records", g.word, c.FieldName))})
		}
		if len(result.Fields) == 0 {
			continue
		}
		b.add(result)
		agg.Fields = append(agg.Fields, &Field{Name: g.group, Type: Named(name + g.suffix), Kind: FieldAggregateGroup,
			Description: b.text(g.description)})
	}
	b.add(agg)
}

func (b *builder) addRoots(tables []*Table, udfs []*Field) {
	q := &Type{Kind: Object, Name: "Query", Role: RoleQuery, Description: b.text("The root type for querying data")}
	q.Fields = append(q.Fields, &Field{Name: "node", Description: b.text("Retrieve a record by its `ID`"), Type: b.named("Node"),
		Kind: FieldNode, Args: []*InputValue{{Name: "nodeId", Description: b.text("The record's `ID`"), Type: b.nonNull(b.named("ID"))}}})
	m := &Type{Kind: Object, Name: "Mutation", Role: RoleMutation, Description: b.text("The root type for creating and mutating data")}
	taken := map[string]bool{}
	var nodeTypes []string
	for _, t := range tables {
		name := t.TypeName
		hidden := b.hidden(t.Rel.Schema.OID)
		nodeTypes = append(nodeTypes, name)
		coll := lcfirst(name) + "Collection"
		q.Fields = append(q.Fields, &Field{Name: coll, Description: str(fmt.Sprintf("A pagable collection of type `%s`", name)),
			Type: NonNullOf(t.refs.connection), Kind: FieldCollection, Table: t, Args: b.collectionArgs(t), Hidden: hidden})
		taken[coll] = true
		if pkArgs, ok := b.byPkArgs(t); ok && b.s.Version.byPk() {
			f := lcfirst(name) + "ByPk"
			q.Fields = append(q.Fields, &Field{Name: f, Description: str(fmt.Sprintf("Retrieve a record of type `%s` by its primary key", name)),
				Type: t.refs.node, Kind: FieldByPk, Table: t, Args: pkArgs, Hidden: hidden})
			taken[f] = true
		}
		if b.s.Types[name+"InsertInput"] != nil {
			m.Fields = append(m.Fields, &Field{Name: "insertInto" + name + "Collection", Hidden: hidden,
				Description: str(fmt.Sprintf("Adds one or more `%s` records to the collection", name)),
				Type:        Named(name + "InsertResponse"), Kind: FieldInsert, Table: t,
				Args: b.insertArgs(t)})
		}
		if b.s.Types[name+"UpdateInput"] != nil {
			m.Fields = append(m.Fields, &Field{Name: "update" + name + "Collection", Hidden: hidden,
				Description: str(fmt.Sprintf("Updates zero or more records in the `%s` collection", name)),
				Type:        NonNullOf(Named(name + "UpdateResponse")), Kind: FieldUpdate, Table: t,
				Args: []*InputValue{
					{Name: "set", Description: b.text("Fields that are set will be updated for all records matching the `filter`"), Type: NonNullOf(Named(name + "UpdateInput"))},
					{Name: "filter", Description: b.text("Restricts the mutation's impact to records matching the criteria"), Type: t.refs.filter},
					{Name: "atMost", Description: b.text("The maximum number of records in the collection permitted to be affected"), Type: b.nonNull(b.named("Int")), DefaultValue: b.text("1")},
				}})
		}
		if t.Rel.CanDelete {
			m.Fields = append(m.Fields, &Field{Name: "deleteFrom" + name + "Collection", Hidden: hidden,
				Description: str(fmt.Sprintf("Deletes zero or more records from the `%s` collection", name)),
				Type:        NonNullOf(Named(name + "DeleteResponse")), Kind: FieldDelete, Table: t,
				Args: []*InputValue{
					{Name: "filter", Description: b.text("Restricts the mutation's impact to records matching the criteria"), Type: t.refs.filter},
					{Name: "atMost", Description: b.text("The maximum number of records in the collection permitted to be affected"), Type: b.nonNull(b.named("Int")), DefaultValue: b.text("1")},
				}})
		}
	}
	for _, f := range udfs {
		if taken[f.Name] {
			b.omit(Omission{Reason: OmitFieldNameTaken, Function: f.Function.SQL, Name: f.Name})
			continue
		}
		if f.Function.SQL.Volatility == "v" {
			m.Fields = append(m.Fields, f)
		} else {
			q.Fields = append(q.Fields, f)
		}
	}
	sortFields(q.Fields)
	sortFields(m.Fields)
	b.add(q)
	b.s.Query = q
	if len(m.Fields) > 0 {
		b.add(m)
		b.s.Mutation = m
	}
	sort.Strings(nodeTypes)
	b.s.Types["Node"].PossibleTypes = nodeTypes
	b.addSubscriptionRoot(q)
}

// addSubscriptionRoot adds the Subscription root when a table has the subscriptions feature: a live query is a
// query that is answered again whenever its answer changes, so its root fields are the query root's fields of
// those tables (collections and byPk), with node when any table takes part. Functions are left out: what a
// function reads is not known, so no change could be traced back to it.
func (b *builder) addSubscriptionRoot(q *Type) {
	sub := &Type{Kind: Object, Name: "Subscription", Role: RoleSubscription,
		Description: b.text("The root type for subscribing to live query results")}
	for _, f := range q.Fields {
		if f.Table != nil && f.Table.Features.Has(reflect.FeatureSubscriptions) && (f.Kind == FieldCollection || f.Kind == FieldByPk) {
			sub.Fields = append(sub.Fields, f)
			if f.Kind == FieldCollection {
				if stream := b.streamField(f); stream != nil {
					sub.Fields = append(sub.Fields, stream)
				}
			}
		}
	}
	if len(sub.Fields) == 0 {
		return
	}
	for _, f := range q.Fields {
		if f.Kind == FieldNode {
			sub.Fields = append(sub.Fields, f)
		}
	}
	sortFields(sub.Fields)
	b.add(sub)
	b.s.Subscription = sub
}

// streamField is Subscription.<x>Stream for the table of a collection field: its rows after a cursor over a
// column with a unique key of its own, in batches (Hasura's streaming subscriptions are the model); nil when
// the table has no such column. The key must be one Postgres enforces (UniqueKeys): an index left invalid by a
// failed CREATE UNIQUE INDEX CONCURRENTLY may hold duplicates, and a stream whose batch ended at one of them
// would skip the other.
func (b *builder) streamField(coll *Field) *Field {
	t := coll.Table
	var cols []*Column
	for _, key := range t.Rel.UniqueKeys {
		if len(key.Columns) != 1 {
			continue
		}
		if c := t.ColumnByName(key.Columns[0]); c != nil && byPkTypes[c.SQL.FormatType] && !slices.Contains(cols, c) {
			cols = append(cols, c)
		}
	}
	if len(cols) == 0 {
		return nil
	}
	name := t.TypeName
	if b.s.Types["StreamOrdering"] == nil {
		b.add(&Type{Kind: Enum, Name: "StreamOrdering", Description: b.text("The order in which a stream delivers rows"),
			EnumValues: []*EnumValue{{Name: "ASC", Description: b.text("Ascending: rows after the cursor's value")},
				{Name: "DESC", Description: b.text("Descending: rows before the cursor's value")}}})
	}
	value := &Type{Kind: InputObject, Name: name + "StreamCursorValue", Role: RoleStreamCursor, Table: t, Hidden: coll.Hidden,
		Description: b.text("The column a stream is ordered by, with the value it starts after: exactly one field")}
	for _, c := range cols {
		value.InputFields = append(value.InputFields, &InputValue{Name: c.FieldName, Type: c.Type.GraphQL, Column: c})
	}
	b.add(value)
	b.add(&Type{Kind: InputObject, Name: name + "StreamCursor", Role: RoleStreamCursor, Table: t, Hidden: coll.Hidden,
		InputFields: []*InputValue{
			{Name: "initialValue", Description: b.text("Where the stream starts: the rows after this value come first"), Type: NonNullOf(Named(name + "StreamCursorValue"))},
			{Name: "ordering", Description: b.text("The order of the rows"), Type: b.named("StreamOrdering"), DefaultValue: b.text("ASC")},
		}})
	return &Field{Name: lcfirst(name) + "Stream", Kind: FieldStream, Table: t, Hidden: coll.Hidden,
		Description: str(fmt.Sprintf("The records of type `%s` after a cursor, in order, in batches as they come", name)),
		Type:        t.refs.records,
		Args: []*InputValue{
			{Name: "batchSize", Description: b.text("The most records one message carries"), Type: b.nonNull(b.named("Int"))},
			{Name: "cursor", Description: b.text("The column the stream is ordered by and where it starts"), Type: NonNullOf(Named(name + "StreamCursor"))},
			{Name: "filter", Description: b.text("Filters to apply to the streamed records"), Type: t.refs.filter},
		}}
}

func sortFields(fs []*Field) {
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Name < fs[j].Name })
}

func (b *builder) byPkArgs(t *Table) ([]*InputValue, bool) {
	var args []*InputValue
	for _, c := range t.PK {
		if !byPkTypes[c.SQL.FormatType] || t.ColumnByName(c.SQL.Name) == nil {
			return nil, false
		}
		args = append(args, &InputValue{Name: c.FieldName, Type: b.nonNull(c.Type.GraphQL), Column: c,
			Description: str(fmt.Sprintf("The record's `%s` value", c.SQL.Name))})
	}
	return args, true
}
