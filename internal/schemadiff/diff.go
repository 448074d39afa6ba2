// Package schemadiff compares two GraphQL schemas and classifies every change the way graphql-inspector does
// (BREAKING, DANGEROUS, SAFE), and, when a side was generated from a database, names the database object
// behind each change: the dropped column, the revoked privilege, the enum label, the foreign key, the
// comment directive.
package schemadiff

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/pgreflect/pgreflect/gqlschema"
)

// Level is how much a change can hurt existing clients.
type Level string

// The levels, graphql-inspector's, with NON_BREAKING called SAFE.
const (
	// Breaking changes make valid operations invalid.
	Breaking Level = "BREAKING"
	// Dangerous changes keep operations valid but may change what they do (a new enum value a client does
	// not handle, a changed default).
	Dangerous Level = "DANGEROUS"
	// Safe changes cannot affect existing operations.
	Safe Level = "SAFE"
)

func (l Level) rank() int {
	switch l {
	case Breaking:
		return 0
	case Dangerous:
		return 1
	}
	return 2
}

// Change is one difference between the old and the new schema.
type Change struct {
	Level Level `json:"level"`
	// Role is the database role whose schema changed, when the sides are databases.
	Role string `json:"role,omitempty"`
	// Path is the schema coordinate: Type, Type.field, Type.field(arg:) or Enum.VALUE.
	Path    string `json:"path"`
	Message string `json:"message"`
	// Reason names the database object behind the change, when a side is a database.
	Reason string `json:"reason,omitempty"`

	// what the change is about, for Explain: the type, field or input field, argument, enum value names
	kind                       changeKind
	typeName, field, arg, enum string
}

type changeKind int

const (
	typeRemoved changeKind = iota
	typeAdded
	typeKindChanged
	fieldRemoved
	fieldAdded
	fieldTypeChanged
	argRemoved
	argAdded
	argTypeChanged
	defaultChanged
	enumValueRemoved
	enumValueAdded
	interfaceRemoved
	interfaceAdded
	memberRemoved
	memberAdded
	rootChanged
	descriptionChanged
)

// Side is one schema of a comparison.
type Side struct {
	Schema *ast.Schema
	// Generated is the schema pgreflect generated, when the side is a database; it lets Explain name the
	// database objects behind a change.
	Generated *gqlschema.Schema
}

// Compare lists the changes from old to new, sorted by level (breaking first), then path.
func Compare(old, new Side) []Change {
	d := &differ{}
	d.roots(old.Schema, new.Schema)
	for _, name := range sortedTypeNames(old.Schema, new.Schema) {
		o, n := userType(old.Schema, name), userType(new.Schema, name)
		switch {
		case o == nil && n == nil:
		case n == nil:
			d.add(Breaking, typeRemoved, fmt.Sprintf("Type '%s' was removed", name), name, "", "", "")
		case o == nil:
			d.add(Safe, typeAdded, fmt.Sprintf("Type '%s' was added", name), name, "", "", "")
		case o.Kind != n.Kind:
			d.add(Breaking, typeKindChanged, fmt.Sprintf("'%s' kind changed from '%s' to '%s'", name, o.Kind, n.Kind), name, "", "", "")
		default:
			d.typ(o, n)
		}
	}
	for i := range d.changes {
		explain(&d.changes[i], old.Generated, new.Generated, old.Schema)
	}
	if old.Generated != nil && new.Generated != nil {
		d.changes = append(d.changes, requiredOnInsert(old.Generated, new.Generated)...)
	}
	Sort(d.changes)
	return d.changes
}

// Sort orders changes by level (breaking first), role, then path.
func Sort(changes []Change) {
	sort.SliceStable(changes, func(i, j int) bool {
		a, b := changes[i], changes[j]
		if a.Level != b.Level {
			return a.Level.rank() < b.Level.rank()
		}
		if a.Role != b.Role {
			return a.Role < b.Role
		}
		return a.Path < b.Path
	})
}

type differ struct{ changes []Change }

func (d *differ) add(level Level, kind changeKind, msg, typeName, field, arg, enum string) {
	path := typeName
	switch {
	case enum != "":
		path += "." + enum
	case arg != "":
		path += "." + field + "(" + arg + ":)"
	case field != "":
		path += "." + field
	}
	d.changes = append(d.changes, Change{Level: level, Path: path, Message: msg, kind: kind,
		typeName: typeName, field: field, arg: arg, enum: enum})
}

func (d *differ) roots(o, n *ast.Schema) {
	root := func(op string, a, b *ast.Definition) {
		switch {
		case a != nil && b == nil:
			d.add(Breaking, rootChanged, fmt.Sprintf("Schema %s root type '%s' was removed", op, a.Name), a.Name, "", "", "")
		case a == nil && b != nil:
			d.add(Safe, rootChanged, fmt.Sprintf("Schema %s root type '%s' was added", op, b.Name), b.Name, "", "", "")
		case a != nil && a.Name != b.Name:
			d.add(Breaking, rootChanged, fmt.Sprintf("Schema %s root type changed from '%s' to '%s'", op, a.Name, b.Name), b.Name, "", "", "")
		}
	}
	root("query", o.Query, n.Query)
	root("mutation", o.Mutation, n.Mutation)
	root("subscription", o.Subscription, n.Subscription)
}

// userType is the named type unless it is built in (the specification's scalars, the meta types).
func userType(s *ast.Schema, name string) *ast.Definition {
	t := s.Types[name]
	if t == nil || t.BuiltIn || strings.HasPrefix(name, "__") {
		return nil
	}
	return t
}

func sortedTypeNames(a, b *ast.Schema) []string {
	seen := map[string]bool{}
	var names []string
	for _, s := range []*ast.Schema{a, b} {
		for name := range s.Types {
			if !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	sort.Strings(names)
	return names
}

func kindWord(k ast.DefinitionKind) string {
	switch k {
	case ast.Object:
		return "object type"
	case ast.Interface:
		return "interface"
	case ast.InputObject:
		return "input object type"
	case ast.Enum:
		return "enum"
	case ast.Union:
		return "union"
	}
	return "scalar"
}

func (d *differ) typ(o, n *ast.Definition) {
	name := o.Name
	if o.Description != n.Description {
		d.add(Safe, descriptionChanged, fmt.Sprintf("Description of type '%s' changed", name), name, "", "", "")
	}
	switch o.Kind {
	case ast.Object, ast.Interface:
		d.outputFields(o, n)
		d.names(o.Interfaces, n.Interfaces, func(i string) {
			d.add(Breaking, interfaceRemoved, fmt.Sprintf("'%s' no longer implements interface '%s'", name, i), name, "", "", "")
		}, func(i string) {
			d.add(Dangerous, interfaceAdded, fmt.Sprintf("'%s' implements new interface '%s'", name, i), name, "", "", "")
		})
	case ast.InputObject:
		d.inputFields(o, n)
	case ast.Enum:
		var ov, nv []string
		for _, v := range o.EnumValues {
			ov = append(ov, v.Name)
		}
		for _, v := range n.EnumValues {
			nv = append(nv, v.Name)
		}
		d.names(ov, nv, func(v string) {
			d.add(Breaking, enumValueRemoved, fmt.Sprintf("Enum value '%s' was removed from enum '%s'", v, name), name, "", "", v)
		}, func(v string) {
			d.add(Dangerous, enumValueAdded, fmt.Sprintf("Enum value '%s' was added to enum '%s'", v, name), name, "", "", v)
		})
	case ast.Union:
		d.names(o.Types, n.Types, func(m string) {
			d.add(Breaking, memberRemoved, fmt.Sprintf("Member '%s' was removed from union '%s'", m, name), name, "", "", "")
		}, func(m string) {
			d.add(Dangerous, memberAdded, fmt.Sprintf("Member '%s' was added to union '%s'", m, name), name, "", "", "")
		})
	}
}

// names calls removed for the names only in a, then added for those only in b.
func (d *differ) names(a, b []string, removed, added func(string)) {
	for _, x := range a {
		if !slices.Contains(b, x) {
			removed(x)
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			added(x)
		}
	}
}

func (d *differ) outputFields(o, n *ast.Definition) {
	name, word := o.Name, kindWord(o.Kind)
	for _, of := range o.Fields {
		if strings.HasPrefix(of.Name, "__") {
			continue // the meta fields a parsed SDL document gains
		}
		nf := n.Fields.ForName(of.Name)
		if nf == nil {
			d.add(Breaking, fieldRemoved, fmt.Sprintf("Field '%s' was removed from %s '%s'", of.Name, word, name), name, of.Name, "", "")
			continue
		}
		if of.Type.String() != nf.Type.String() {
			level := Breaking
			if safeOutputChange(of.Type, nf.Type) {
				level = Safe
			}
			d.add(level, fieldTypeChanged, fmt.Sprintf("Field '%s.%s' changed type from '%s' to '%s'", name, of.Name, of.Type, nf.Type), name, of.Name, "", "")
		}
		if of.Description != nf.Description {
			d.add(Safe, descriptionChanged, fmt.Sprintf("Description of field '%s.%s' changed", name, of.Name), name, of.Name, "", "")
		}
		d.args(name, of, nf)
	}
	for _, nf := range n.Fields {
		if o.Fields.ForName(nf.Name) == nil && !strings.HasPrefix(nf.Name, "__") {
			d.add(Safe, fieldAdded, fmt.Sprintf("Field '%s' was added to %s '%s'", nf.Name, word, name), name, nf.Name, "", "")
		}
	}
}

func (d *differ) args(typeName string, of, nf *ast.FieldDefinition) {
	coord := typeName + "." + of.Name
	for _, oa := range of.Arguments {
		na := nf.Arguments.ForName(oa.Name)
		if na == nil {
			d.add(Breaking, argRemoved, fmt.Sprintf("Argument '%s' was removed from field '%s'", oa.Name, coord), typeName, of.Name, oa.Name, "")
			continue
		}
		d.inputValue(argTypeChanged, fmt.Sprintf("Argument '%s' on field '%s'", oa.Name, coord), typeName, of.Name, oa.Name,
			oa.Type, na.Type, oa.DefaultValue, na.DefaultValue)
	}
	for _, na := range nf.Arguments {
		if of.Arguments.ForName(na.Name) != nil {
			continue
		}
		if required(na.Type, na.DefaultValue) {
			d.add(Breaking, argAdded, fmt.Sprintf("Required argument '%s' was added to field '%s'", na.Name, coord), typeName, of.Name, na.Name, "")
		} else {
			d.add(Safe, argAdded, fmt.Sprintf("Argument '%s' was added to field '%s'", na.Name, coord), typeName, of.Name, na.Name, "")
		}
	}
}

func (d *differ) inputFields(o, n *ast.Definition) {
	name := o.Name
	for _, of := range o.Fields {
		nf := n.Fields.ForName(of.Name)
		if nf == nil {
			d.add(Breaking, fieldRemoved, fmt.Sprintf("Input field '%s' was removed from input object type '%s'", of.Name, name), name, of.Name, "", "")
			continue
		}
		d.inputValue(fieldTypeChanged, fmt.Sprintf("Input field '%s.%s'", name, of.Name), name, of.Name, "",
			of.Type, nf.Type, of.DefaultValue, nf.DefaultValue)
		if of.Description != nf.Description {
			d.add(Safe, descriptionChanged, fmt.Sprintf("Description of input field '%s.%s' changed", name, of.Name), name, of.Name, "", "")
		}
	}
	for _, nf := range n.Fields {
		if o.Fields.ForName(nf.Name) != nil {
			continue
		}
		if required(nf.Type, nf.DefaultValue) {
			d.add(Breaking, fieldAdded, fmt.Sprintf("Required input field '%s' was added to input object type '%s'", nf.Name, name), name, nf.Name, "", "")
		} else {
			d.add(Safe, fieldAdded, fmt.Sprintf("Input field '%s' was added to input object type '%s'", nf.Name, name), name, nf.Name, "", "")
		}
	}
}

// inputValue compares an argument or input field present on both sides.
func (d *differ) inputValue(kind changeKind, what, typeName, field, arg string, ot, nt *ast.Type, od, nd *ast.Value) {
	if ot.String() != nt.String() {
		level := Breaking
		if safeInputChange(ot, nt) {
			level = Safe
		}
		d.add(level, kind, fmt.Sprintf("%s changed type from '%s' to '%s'", what, ot, nt), typeName, field, arg, "")
	}
	if literal(od) != literal(nd) {
		d.add(Dangerous, defaultChanged, fmt.Sprintf("%s default value changed from '%s' to '%s'", what, literal(od), literal(nd)), typeName, field, arg, "")
	}
}

func literal(v *ast.Value) string {
	if v == nil {
		return "none"
	}
	return v.String()
}

func required(t *ast.Type, def *ast.Value) bool { return t.NonNull && def == nil }

// safeOutputChange: an output may become stricter (nullable to non-null, at any depth) and nothing else.
func safeOutputChange(o, n *ast.Type) bool {
	if o.NonNull && !n.NonNull {
		return false
	}
	if (o.Elem == nil) != (n.Elem == nil) {
		return false
	}
	if o.Elem != nil {
		return safeOutputChange(o.Elem, n.Elem)
	}
	return o.NamedType == n.NamedType
}

// safeInputChange: an input may become looser (non-null to nullable, at any depth) and nothing else.
func safeInputChange(o, n *ast.Type) bool {
	if !o.NonNull && n.NonNull {
		return false
	}
	if (o.Elem == nil) != (n.Elem == nil) {
		return false
	}
	if o.Elem != nil {
		return safeInputChange(o.Elem, n.Elem)
	}
	return o.NamedType == n.NamedType
}

// Breaks reports whether any change is breaking.
func Breaks(changes []Change) bool {
	for _, c := range changes {
		if c.Level == Breaking {
			return true
		}
	}
	return false
}

// ExitStatus is a CI check's status for changes: 1 when any breaks clients, else 0.
func ExitStatus(changes []Change) int {
	if Breaks(changes) {
		return 1
	}
	return 0
}
