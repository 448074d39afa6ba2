package gqlschema

import (
	"cmp"
	"regexp"
	"strings"

	"github.com/pgreflect/pgreflect/reflect"
)

// Pseudo-type oids that rule a function out.
const (
	oidRecord       = 2249
	oidTrigger      = 2279
	oidEventTrigger = 3838
)

var collectionArgNames = map[string]bool{"first": true, "last": true, "before": true, "after": true,
	"offset": true, "filter": true, "orderBy": true}

// functionFieldName strips one leading underscore, inflects when the schema does, and lower-cases the first
// character.
func functionFieldName(f *reflect.Function) string {
	if f.Directives.Name != "" {
		return f.Directives.Name
	}
	inflect := f.Schema != nil && f.Schema.Directives.InflectNames
	return lcfirst(base(strings.TrimPrefix(f.Name, "_"), inflect))
}

// rowTypes are the tables by row type oid: keyed ones (with a primary key) and keyless ones, which only a
// computed field may return.
type rowTypes struct{ keyed, keyless map[uint32]*Table }

func (rt rowTypes) any(oid uint32) *Table { return cmp.Or(rt.keyed[oid], rt.keyless[oid]) }

// functions returns the computed fields of each table, keyless ones included, and the functions that become
// root fields.
func (b *builder) functions(tables, keyless []*Table) (map[*Table][]*Field, []*Field) {
	byRowType := rowTypes{keyed: map[uint32]*Table{}, keyless: map[uint32]*Table{}}
	for _, t := range tables {
		byRowType.keyed[t.Rel.RowType] = t
	}
	for _, t := range keyless {
		byRowType.keyless[t.Rel.RowType] = t
	}
	nameCount := map[string]int{}
	for _, f := range b.cat.Functions {
		nameCount[f.Name]++
	}
	computed := map[*Table][]*Field{}
	var roots []*Field
	for _, f := range b.cat.Functions {
		if f.Schema == nil {
			continue
		}
		name := functionFieldName(f)
		left := func(why OmitReason) { b.omit(Omission{Reason: why, Function: f, Name: name}) }
		switch {
		case !f.CanExecute:
			left(OmitNoExecute)
			continue
		case f.Variadic:
			left(OmitVariadic)
			continue
		case !IsValidName(name):
			left(OmitInvalidName)
			continue
		}
		if len(f.ArgTypes) == 1 {
			if t := byRowType.any(f.ArgTypes[0]); t != nil {
				if !t.Rel.CanSelect {
					left(OmitTableNotSelectable)
					continue
				}
				field, why := b.functionField(f, name, byRowType, nil, true)
				if field == nil {
					left(why)
					continue
				}
				if field.Table == nil {
					field.Table = t // a function returning rows keeps the table it returns
				}
				computed[t] = append(computed[t], field)
				continue
			}
		}
		if nameCount[f.Name] > 1 {
			left(OmitOverloaded)
			continue
		}
		params, bad := b.params(f)
		if bad >= 0 {
			b.omit(Omission{Reason: OmitArgument, Function: f, Name: name, Argument: bad})
			continue
		}
		field, why := b.functionField(f, name, byRowType, params, false)
		if field == nil {
			left(why)
			continue
		}
		roots = append(roots, field)
	}
	return computed, roots
}

// InputArgNames are the names of a function's input arguments (IN, INOUT, VARIADIC) in the order of ArgTypes;
// proargnames also names the OUT and TABLE columns, which take no value. A function with OUT or INOUT
// arguments returns what pg_graphql sees in prorettype: the type of its one output, or record (left out) for
// several. pg_graphql pairs proargnames with proargtypes by position, which names the wrong argument when an
// OUT argument comes before an input one; pgreflect names the input (docs/compatibility.md).
func InputArgNames(f *reflect.Function) []string {
	if len(f.ArgModes) == 0 {
		return f.ArgNames
	}
	var out []string
	for i, m := range f.ArgModes {
		if m == "o" || m == "t" {
			continue
		}
		name := ""
		if i < len(f.ArgNames) {
			name = f.ArgNames[i]
		}
		out = append(out, name)
	}
	return out
}

// functionField builds the field for a function's result, or returns nil and why when the result cannot be
// shown.
func (b *builder) functionField(f *reflect.Function, name string, byRowType rowTypes, params []*Param, computedField bool) (*Field, OmitReason) {
	fn := &Function{SQL: f, Params: params}
	field := &Field{Name: name, Description: f.Directives.Description, Function: fn}
	if computedField {
		field.Kind = FieldComputed
	} else {
		field.Kind = FieldFunction
	}
	for _, p := range params {
		ref := p.Type.GraphQL
		if !p.HasDefault {
			ref = b.nonNull(ref)
		}
		iv := &InputValue{Name: p.gqlName(f), Type: ref, Param: p}
		iv.DefaultValue = p.defaultValue
		field.Args = append(field.Args, iv)
	}
	rt := b.cat.Types[f.ReturnType]
	switch {
	case f.ReturnType == oidTrigger || f.ReturnType == oidEventTrigger:
		return nil, OmitTrigger
	case f.ReturnType == oidRecord:
		return nil, OmitReturnType
	case computedField && byRowType.keyless[f.ReturnType] != nil:
		// pg_graphql needs a primary key only for what the root reaches: a computed field may return one row of
		// a keyless relation, as an object without nodeId. A set of them would need a connection, whose cursors
		// need a key.
		if f.ReturnsSet && f.Rows != 1 {
			return nil, OmitReturnType
		}
		t := byRowType.keyless[f.ReturnType]
		fn.Table, field.Table = t, t
		fn.Returns = ReturnsRow
		field.Type = t.refs.node
		return field, 0
	case byRowType.keyed[f.ReturnType] != nil:
		t := byRowType.keyed[f.ReturnType]
		fn.Table = t
		field.Table = t
		if f.ReturnsSet && f.Rows != 1 {
			for _, p := range params {
				if collectionArgNames[p.gqlName(f)] {
					return nil, OmitArgumentClash
				}
			}
			fn.Returns = ReturnsConnection
			field.Type = t.refs.connection
			for _, a := range b.collectionArgs(t) {
				// an argument of the function keeps its name over distinctOn (the distinct feature)
				if field.Arg(a.Name) == nil {
					field.Args = append(field.Args, a)
				}
			}
		} else {
			fn.Returns = ReturnsRow
			field.Type = t.refs.node
		}
		return field, 0
	case f.ReturnsSet:
		return nil, OmitReturnType
	case rt != nil && rt.Kind == "e" && !computedField:
		return nil, OmitReturnType
	case rt != nil && rt.Category == "A" && !computedField && !b.plainElement(rt.Elem):
		return nil, OmitReturnType
	}
	vt, ok := b.valueType(f.ReturnType, -1, "")
	if !ok {
		return nil, OmitReturnType
	}
	fn.Return = vt
	field.Type = vt.GraphQL
	return field, 0
}

// plainElement reports whether an array element type is a base or "other" type (no enums or composites).
func (b *builder) plainElement(oid uint32) bool {
	t := b.cat.Types[oid]
	return t == nil || (t.Kind == "b" && t.Category != "A")
}

var defaultsSplit = regexp.MustCompile(`,\s*`)

// params maps a root function's arguments; bad is the index of the first argument that rules the function
// out, or -1.
func (b *builder) params(f *reflect.Function) ([]*Param, int) {
	names := InputArgNames(f)
	if len(names) < len(f.ArgTypes) {
		return nil, len(names)
	}
	var defaults []string
	if f.NumDefaults > 0 {
		defaults = defaultsSplit.Split(f.ArgDefaults, -1)
		if len(defaults) != f.NumDefaults {
			// pg_graphql splits on commas, so a default holding a comma leaves the argument required.
			defaults = nil
		}
	}
	var out []*Param
	enums := b.functionFeatures(f).Has(reflect.FeatureComposite)
	firstDefault := len(f.ArgTypes) - len(defaults)
	for i, oid := range f.ArgTypes {
		if names[i] == "" {
			return nil, i
		}
		t := b.cat.Types[oid]
		enumArg := enums && b.enumArgument(oid)
		if t != nil && !enumArg && (t.Kind == "e" || t.Kind == "c" || t.Kind == "p" ||
			(t.Category == "A" && !b.plainElement(t.Elem))) {
			return nil, i
		}
		vt, ok := b.valueType(oid, -1, regtype(b.cat, oid))
		if !ok || vt.Enum != nil && !enumArg {
			return nil, i
		}
		p := &Param{SQLName: names[i], Type: vt}
		if i >= firstDefault && defaults != nil {
			p.HasDefault = true
			p.defaultValue = defaultLiteral(defaults[i-firstDefault], oid)
		}
		out = append(out, p)
	}
	return out, -1
}

// regtype names a type for a cast of an argument value.
func regtype(cat *reflect.Catalog, oid uint32) string {
	t := cat.Types[oid]
	if t == nil {
		return ""
	}
	if t.Name == "bpchar" || t.Name == "char" {
		return "text" // avoid char(1) truncation
	}
	if t.Category == "A" {
		if e := cat.Types[t.Elem]; e != nil {
			return quoteIdent(e.SchemaName) + "." + quoteIdent(e.Name) + "[]"
		}
	}
	return quoteIdent(t.SchemaName) + "." + quoteIdent(t.Name)
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

var (
	intLiteral   = regexp.MustCompile(`^-?\d+$`)
	floatLiteral = regexp.MustCompile(`^-?\d+(\.\d+)?(::(real|double precision))?$`)
	textLiteral  = regexp.MustCompile(`^'((?:[^']|'')*)'::text$`)
)

// defaultLiteral turns a SQL default into the GraphQL defaultValue pg_graphql shows, or nil.
func defaultLiteral(expr string, oid uint32) *string {
	expr = strings.TrimSpace(expr)
	switch {
	case strings.HasPrefix(strings.ToUpper(expr), "NULL"):
		return nil
	case (oid == 21 || oid == 23) && intLiteral.MatchString(expr):
		return &expr
	case oid == 16 && (expr == "true" || expr == "false"):
		return &expr
	case (oid == 700 || oid == 701) && floatLiteral.MatchString(expr):
		v := strings.SplitN(expr, "::", 2)[0]
		return &v
	case oid == 25 && textLiteral.MatchString(expr):
		v := `"` + strings.ReplaceAll(textLiteral.FindStringSubmatch(expr)[1], "''", "'") + `"`
		return &v
	}
	return nil
}

func (p *Param) gqlName(f *reflect.Function) string {
	inflect := f.Schema != nil && f.Schema.Directives.InflectNames
	return lcfirst(base(p.SQLName, inflect))
}

// addKeylessTypes adds the object type of each keyless relation a computed field returns, directly or through
// another keyless type's computed field: its columns and computed fields, without nodeId, the Node interface,
// a collection or mutations (pg_graphql's NodeType of a table without a primary key).
func (b *builder) addKeylessTypes(tables, keyless []*Table, computed map[*Table][]*Field) {
	isKeyless := map[*Table]bool{}
	for _, t := range keyless {
		isKeyless[t] = true
	}
	reached := map[*Table]bool{}
	var reach func(fields []*Field)
	reach = func(fields []*Field) {
		for _, f := range fields {
			if t := f.Function.Table; t != nil && isKeyless[t] && !reached[t] {
				reached[t] = true
				reach(computed[t])
			}
		}
	}
	for _, t := range tables {
		reach(computed[t])
	}
	for _, t := range keyless {
		if !reached[t] {
			b.omit(Omission{Reason: OmitNoPrimaryKey, Relation: t.Rel, Name: t.TypeName})
			continue
		}
		obj := &Type{Kind: Object, Name: t.TypeName, Role: RoleNode, Table: t,
			Description: t.Rel.Directives.Description, Hidden: b.hidden(t.Rel.Schema.OID)}
		obj.Fields = append(obj.Fields, b.columnFields(t)...)
		obj.Fields = append(obj.Fields, computed[t]...)
		b.add(obj)
	}
}
