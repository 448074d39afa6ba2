// Package sdl prints and reads GraphQL schemas as SDL, the form a schema snapshot is committed in.
//
// A generated schema (gqlschema.Schema) is printed from its standard introspection answer, so that the SDL and
// the introspection JSON a client downloads always describe the same API:
//
//	text, err := sdl.Generate(ctx, schema) // deterministic SDL: types sorted by name, descriptions included
//
// The same ast.Schema form is read back from an SDL file (Parse) or from an introspection result (FromIntrospection,
// as written by `pgreflect schema --format json`, graphql-codegen or any GraphQL server), which is what schema diffs
// compare.
package sdl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/resolve"
)

// Generate prints the SDL of a generated schema: the types its introspection shows (every type when no exposed
// schema enables introspection), sorted by name, fields in the order introspection lists them, descriptions
// included. The output depends on nothing but the schema, so it is byte-identical across runs and reloads.
func Generate(ctx context.Context, s *gqlschema.Schema) ([]byte, error) {
	schema, err := FromSchema(ctx, s)
	if err != nil {
		return nil, err
	}
	return Print(schema), nil
}

// FromSchema converts a generated schema to gqlparser's form through its introspection answer.
func FromSchema(ctx context.Context, s *gqlschema.Schema) (*ast.Schema, error) {
	body, err := resolve.Introspect(ctx, s)
	if err != nil {
		return nil, err
	}
	return FromIntrospection(body)
}

// Print writes schema as SDL: built-in scalars and directives left out, types sorted by name.
func Print(schema *ast.Schema) []byte {
	var buf bytes.Buffer
	formatter.NewFormatter(&buf, formatter.WithIndent("  ")).FormatSchema(schema)
	return buf.Bytes()
}

// Parse reads an SDL document.
func Parse(name string, src []byte) (*ast.Schema, error) {
	schema, err := gqlparser.LoadSchema(&ast.Source{Name: name, Input: string(src)})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return schema, nil
}

// Load reads either form: an introspection result (a JSON object) or an SDL document.
func Load(name string, src []byte) (*ast.Schema, error) {
	if t := bytes.TrimSpace(src); len(t) > 0 && t[0] == '{' && json.Valid(t) {
		schema, err := FromIntrospection(t)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return schema, nil
	}
	return Parse(name, src)
}

type introspection struct {
	QueryType        *introName  `json:"queryType"`
	MutationType     *introName  `json:"mutationType"`
	SubscriptionType *introName  `json:"subscriptionType"`
	Types            []introType `json:"types"`
}

type introName struct {
	Name string `json:"name"`
}

type introType struct {
	Kind          string       `json:"kind"`
	Name          string       `json:"name"`
	Description   *string      `json:"description"`
	Fields        []introField `json:"fields"`
	InputFields   []introInput `json:"inputFields"`
	Interfaces    []introRef   `json:"interfaces"`
	EnumValues    []introEnum  `json:"enumValues"`
	PossibleTypes []introRef   `json:"possibleTypes"`
}

type introField struct {
	Name              string       `json:"name"`
	Description       *string      `json:"description"`
	Args              []introInput `json:"args"`
	Type              introRef     `json:"type"`
	IsDeprecated      bool         `json:"isDeprecated"`
	DeprecationReason *string      `json:"deprecationReason"`
}

type introInput struct {
	Name         string   `json:"name"`
	Description  *string  `json:"description"`
	Type         introRef `json:"type"`
	DefaultValue *string  `json:"defaultValue"`
}

type introEnum struct {
	Name              string  `json:"name"`
	Description       *string `json:"description"`
	IsDeprecated      bool    `json:"isDeprecated"`
	DeprecationReason *string `json:"deprecationReason"`
}

type introRef struct {
	Kind   string    `json:"kind"`
	Name   *string   `json:"name"`
	OfType *introRef `json:"ofType"`
}

// builtinScalars are the scalars the GraphQL specification defines; SDL does not declare them.
var builtinScalars = map[string]bool{"Int": true, "Float": true, "String": true, "Boolean": true, "ID": true}

// FromIntrospection reads an introspection result: the response body ({"data": {"__schema": …}}), its data
// ({"__schema": …}) or the __schema object itself. The meta types (__Type, …) are left out.
func FromIntrospection(body []byte) (*ast.Schema, error) {
	var wrapped struct {
		Data *struct {
			Schema *introspection `json:"__schema"`
		} `json:"data"`
		Schema *introspection `json:"__schema"`
	}
	if err := json.Unmarshal(body, &wrapped); err != nil {
		return nil, fmt.Errorf("introspection result: %w", err)
	}
	in := wrapped.Schema
	if wrapped.Data != nil && wrapped.Data.Schema != nil {
		in = wrapped.Data.Schema
	}
	if in == nil {
		var bare introspection
		if err := json.Unmarshal(body, &bare); err != nil || bare.QueryType == nil {
			return nil, errors.New("introspection result: no __schema with a queryType")
		}
		in = &bare
	}
	if in.QueryType == nil {
		return nil, errors.New("introspection result: no queryType")
	}
	s := &ast.Schema{Types: map[string]*ast.Definition{}, Directives: map[string]*ast.DirectiveDefinition{},
		PossibleTypes: map[string][]*ast.Definition{}, Implements: map[string][]*ast.Definition{}}
	for _, t := range in.Types {
		if strings.HasPrefix(t.Name, "__") {
			continue
		}
		def, err := definition(t)
		if err != nil {
			return nil, fmt.Errorf("introspection result: type %s: %w", t.Name, err)
		}
		s.Types[t.Name] = def
	}
	for _, def := range s.Types {
		for _, i := range def.Interfaces {
			if it := s.Types[i]; it != nil {
				s.AddImplements(def.Name, it)
				s.AddPossibleType(i, def)
			}
		}
	}
	root := func(n *introName) (*ast.Definition, error) {
		if n == nil {
			return nil, nil
		}
		if def := s.Types[n.Name]; def != nil {
			return def, nil
		}
		return nil, fmt.Errorf("introspection result: root type %s is not among the types", n.Name)
	}
	var err error
	if s.Query, err = root(in.QueryType); err != nil {
		return nil, err
	}
	if s.Mutation, err = root(in.MutationType); err != nil {
		return nil, err
	}
	if s.Subscription, err = root(in.SubscriptionType); err != nil {
		return nil, err
	}
	return s, nil
}

func definition(t introType) (*ast.Definition, error) {
	def := &ast.Definition{Kind: ast.DefinitionKind(t.Kind), Name: t.Name, Description: deref(t.Description),
		BuiltIn: t.Kind == "SCALAR" && builtinScalars[t.Name]}
	switch def.Kind {
	case ast.Scalar, ast.Object, ast.Interface, ast.Union, ast.Enum, ast.InputObject:
	default:
		return nil, fmt.Errorf("unknown kind %q", t.Kind)
	}
	for _, f := range t.Fields {
		typ, err := typeOf(f.Type)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		fd := &ast.FieldDefinition{Name: f.Name, Description: deref(f.Description), Type: typ}
		for _, a := range f.Args {
			arg, err := argument(a)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			fd.Arguments = append(fd.Arguments, arg)
		}
		if f.IsDeprecated {
			fd.Directives = append(fd.Directives, deprecated(f.DeprecationReason))
		}
		def.Fields = append(def.Fields, fd)
	}
	for _, a := range t.InputFields {
		arg, err := argument(a)
		if err != nil {
			return nil, err
		}
		def.Fields = append(def.Fields, &ast.FieldDefinition{Name: arg.Name, Description: arg.Description,
			Type: arg.Type, DefaultValue: arg.DefaultValue})
	}
	for _, e := range t.EnumValues {
		ev := &ast.EnumValueDefinition{Name: e.Name, Description: deref(e.Description)}
		if e.IsDeprecated {
			ev.Directives = append(ev.Directives, deprecated(e.DeprecationReason))
		}
		def.EnumValues = append(def.EnumValues, ev)
	}
	for _, i := range t.Interfaces {
		if i.Name != nil {
			def.Interfaces = append(def.Interfaces, *i.Name)
		}
	}
	for _, p := range t.PossibleTypes {
		if p.Name != nil && def.Kind == ast.Union {
			def.Types = append(def.Types, *p.Name)
		}
	}
	return def, nil
}

func argument(a introInput) (*ast.ArgumentDefinition, error) {
	typ, err := typeOf(a.Type)
	if err != nil {
		return nil, fmt.Errorf("input value %s: %w", a.Name, err)
	}
	arg := &ast.ArgumentDefinition{Name: a.Name, Description: deref(a.Description), Type: typ}
	if a.DefaultValue != nil {
		if arg.DefaultValue, err = literal(*a.DefaultValue); err != nil {
			return nil, fmt.Errorf("input value %s: default value: %w", a.Name, err)
		}
	}
	return arg, nil
}

// literal parses a GraphQL value literal, as introspection renders default values.
func literal(text string) (*ast.Value, error) {
	doc, err := parser.ParseQuery(&ast.Source{Input: "{f(v: " + text + ")}"})
	if err != nil {
		return nil, fmt.Errorf("%q is not a GraphQL literal", text)
	}
	f, ok := doc.Operations[0].SelectionSet[0].(*ast.Field)
	if !ok || len(f.Arguments) != 1 {
		return nil, fmt.Errorf("%q is not a GraphQL literal", text)
	}
	return f.Arguments[0].Value, nil
}

func typeOf(r introRef) (*ast.Type, error) {
	switch r.Kind {
	case "NON_NULL":
		if r.OfType == nil {
			return nil, errors.New("NON_NULL without ofType")
		}
		inner, err := typeOf(*r.OfType)
		if err != nil {
			return nil, err
		}
		inner.NonNull = true
		return inner, nil
	case "LIST":
		if r.OfType == nil {
			return nil, errors.New("LIST without ofType")
		}
		inner, err := typeOf(*r.OfType)
		if err != nil {
			return nil, err
		}
		return ast.ListType(inner, nil), nil
	}
	if r.Name == nil {
		return nil, errors.New("type reference without a name")
	}
	return ast.NamedType(*r.Name, nil), nil
}

func deprecated(reason *string) *ast.Directive {
	d := &ast.Directive{Name: "deprecated"}
	if reason != nil {
		d.Arguments = ast.ArgumentList{{Name: "reason", Value: &ast.Value{Kind: ast.StringValue, Raw: *reason}}}
	}
	return d
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
