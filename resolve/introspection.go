package resolve

import (
	"sort"

	"github.com/pgreflect/pgreflect/gqlschema"
)

// Introspection (contract 1.19): __schema and __type answer from the generated type system the way pg_graphql
// does, quirks included, so that tools built against pg_graphql (GraphiQL, graphql-codegen, Apollo) see the
// same schema:
//   - types are sorted by name and include the introspection meta types;
//   - types of schemas without introspection are hidden, and so is every field, argument and input field
//     whose type is hidden (the data fields keep working);
//   - Query.fields never lists __type or __schema;
//   - enumValues is [] for every non-enum type, interfaces is [] when there are none, isDeprecated is false;
//   - __typename inside a meta object answers what pg_graphql answers: the described type's, field's, input
//     value's or enum value's own name, "__schema" on __Schema and "__Directive" on __Directive;
//   - unknown fields get pg_graphql's messages, which differ per meta type.
//
// One deliberate difference: __Type.specifiedByURL answers null where pg_graphql fails the whole field
// (it declares the field but has no resolver for it); graphql-js asks for it with specifiedByUrl: true.

// introSchemaDescription is __Schema.description.
const introSchemaDescription = "Represents the GraphQL schema of the database"

// introspector resolves one __schema or __type root field.
type introspector struct {
	r *request
	// subs memoises collect: a selection's sub-selections are the same on every object it is resolved for,
	// and the standard introspection query resolves the same few selections thousands of times.
	subs map[introSubKey][]*selection
	// mutation is the Mutation type when introspection shows it (it has a visible field), else nil.
	mutation *gqlschema.Type
}

type introSubKey struct {
	sel      *selection
	typeName string
}

func newIntrospector(r *request) *introspector {
	in := &introspector{r: r, subs: map[introSubKey][]*selection{}}
	if m := r.schema.Mutation; m != nil && !m.Hidden && len(in.fields(m)) > 0 {
		in.mutation = m
	}
	return in
}

// resolveSchema resolves the __schema root field (the caller has checked that introspection is on).
func (r *request) resolveSchema(sel *selection) (any, error) {
	in := newIntrospector(r)
	subs, err := in.collect(sel, "__Schema")
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(subs))
	for _, s := range subs {
		var v any
		switch s.Name {
		case "description":
			v = introSchemaDescription
		case "types":
			v, err = in.typeList(s, in.typeNames())
		case "queryType":
			v, err = in.typeValue(s, gqlschema.Named(r.schema.Query.Name))
		case "mutationType":
			if in.mutation != nil {
				v, err = in.typeValue(s, gqlschema.Named(in.mutation.Name))
			}
		case "subscriptionType":
			v = nil
		case "directives":
			v, err = in.directiveList(s)
		case "__typename":
			v = "__schema" // pg_graphql answers the root field's name here
		default:
			return nil, gqlError("unknown field in __Schema: %s", s.Name)
		}
		if err != nil {
			return nil, err
		}
		out[s.Key] = v
	}
	return out, nil
}

// resolveType resolves the __type(name: String) root field: null for unknown and hidden types (the caller has
// checked that introspection is on).
func (r *request) resolveType(sel *selection) (any, error) {
	arg, ok := sel.Args["name"]
	if !ok || arg == nil {
		return nil, gqlError("no name found for __type")
	}
	name, ok := arg.(string)
	if !ok {
		return nil, gqlError("Invalid input for String(None) type")
	}
	in := newIntrospector(r)
	return in.typeValue(sel, gqlschema.Named(name))
}

// collect returns the sub-selections of sel for an object of the named meta type.
func (in *introspector) collect(sel *selection, typeName string) ([]*selection, error) {
	key := introSubKey{sel, typeName}
	if subs, ok := in.subs[key]; ok {
		return subs, nil
	}
	subs, err := in.r.children(sel, typeName)
	if err != nil {
		return nil, err
	}
	in.subs[key] = subs
	return subs, nil
}

// named returns the type introspection shows under that name, or nil when there is none or it is hidden.
func (in *introspector) named(name string) *gqlschema.Type {
	if t := metaTypes[name]; t != nil {
		return t
	}
	t := in.r.schema.Types[name]
	switch {
	case t == nil || t.Hidden:
		return nil
	case t == in.r.schema.Mutation:
		return in.mutation
	}
	return t
}

func (in *introspector) shows(ref *gqlschema.TypeRef) bool { return in.named(ref.NamedType()) != nil }

// typeNames lists every type introspection shows, sorted by name (bytewise, as pg_graphql sorts).
func (in *introspector) typeNames() []string {
	names := make([]string, 0, len(in.r.schema.Types)+len(metaTypes))
	for name := range metaTypes {
		names = append(names, name)
	}
	for name := range in.r.schema.Types {
		if metaTypes[name] == nil && in.named(name) != nil {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// fields are the fields introspection lists for an object or interface type.
func (in *introspector) fields(t *gqlschema.Type) []*gqlschema.Field {
	var out []*gqlschema.Field
	for _, f := range t.Fields {
		if f.Hidden || f.Name == "__type" || f.Name == "__schema" || !in.shows(f.Type) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// inputValues drops the arguments and input fields whose type is hidden.
func (in *introspector) inputValues(ivs []*gqlschema.InputValue) []*gqlschema.InputValue {
	var out []*gqlschema.InputValue
	for _, iv := range ivs {
		if in.shows(iv.Type) {
			out = append(out, iv)
		}
	}
	return out
}

func (in *introspector) typeList(sel *selection, names []string) (any, error) {
	out := make([]any, 0, len(names))
	for _, name := range names {
		if in.named(name) == nil {
			continue
		}
		v, err := in.typeValue(sel, gqlschema.Named(name))
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// typeValue resolves a __Type selection for ref, a named type or a LIST / NON_NULL wrapper; null for a
// named type introspection does not show.
func (in *introspector) typeValue(sel *selection, ref *gqlschema.TypeRef) (any, error) {
	var t *gqlschema.Type
	if ref.Kind == "" {
		if t = in.named(ref.Name); t == nil {
			return nil, nil
		}
	}
	subs, err := in.collect(sel, "__Type")
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(subs))
	for _, s := range subs {
		var v any
		switch s.Name {
		case "kind":
			if t != nil {
				v = string(t.Kind)
			} else {
				v = string(ref.Kind)
			}
		case "name":
			if t != nil {
				v = t.Name
			}
		case "description":
			if t != nil {
				v = introText(t.Description)
			}
		case "fields":
			if t != nil && (t.Kind == gqlschema.Object || t.Kind == gqlschema.Interface) {
				v, err = in.fieldList(s, in.fields(t))
			}
		case "interfaces":
			// pg_graphql answers [] rather than null, for every kind (GraphiQL breaks on null)
			var names []string
			if t != nil {
				names = t.Interfaces
			}
			v, err = in.typeList(s, names)
		case "possibleTypes":
			if t != nil && t.Kind == gqlschema.Interface {
				v, err = in.typeList(s, t.PossibleTypes)
			}
		case "enumValues":
			// [] rather than null for every kind but ENUM, as pg_graphql answers
			var values []*gqlschema.EnumValue
			if t != nil && t.Kind == gqlschema.Enum {
				values = t.EnumValues
			}
			v, err = in.enumValueList(s, values)
		case "inputFields":
			if t != nil && t.Kind == gqlschema.InputObject {
				v, err = in.inputValueList(s, in.inputValues(t.InputFields))
			}
		case "ofType":
			if ref.Kind != "" {
				v, err = in.typeValue(s, ref.OfType)
			}
		case "specifiedByURL":
			v = nil
		case "__typename":
			if t != nil {
				v = t.Name // pg_graphql answers the described type's name
			}
		default:
			return nil, gqlError("unknown field on __Type: %s", s.Name)
		}
		if err != nil {
			return nil, err
		}
		out[s.Key] = v
	}
	return out, nil
}

func (in *introspector) fieldList(sel *selection, fields []*gqlschema.Field) (any, error) {
	subs, err := in.collect(sel, "__Field")
	if err != nil {
		return nil, err
	}
	list := make([]any, 0, len(fields))
	for _, f := range fields {
		out := make(map[string]any, len(subs))
		for _, s := range subs {
			var v any
			switch s.Name {
			case "name":
				v = f.Name
			case "description":
				v = introText(f.Description)
			case "args":
				v, err = in.inputValueList(s, in.inputValues(f.Args))
			case "type":
				v, err = in.typeValue(s, f.Type)
			case "isDeprecated":
				v = false
			case "deprecationReason":
				v = nil
			case "__typename":
				v = f.Name // pg_graphql answers the field's own name
			default:
				return nil, gqlError("unknown field in __Field %s", s.Name)
			}
			if err != nil {
				return nil, err
			}
			out[s.Key] = v
		}
		list = append(list, out)
	}
	return list, nil
}

func (in *introspector) inputValueList(sel *selection, ivs []*gqlschema.InputValue) (any, error) {
	subs, err := in.collect(sel, "__InputValue")
	if err != nil {
		return nil, err
	}
	list := make([]any, 0, len(ivs))
	for _, iv := range ivs {
		out := make(map[string]any, len(subs))
		for _, s := range subs {
			var v any
			switch s.Name {
			case "name":
				v = iv.Name
			case "description":
				v = introText(iv.Description)
			case "type":
				v, err = in.typeValue(s, iv.Type)
			case "defaultValue":
				v = introText(iv.DefaultValue)
			case "isDeprecated":
				v = false
			case "deprecationReason":
				v = nil
			case "__typename":
				v = iv.Name // pg_graphql answers the input value's own name
			default:
				return nil, gqlError("unknown field in __InputValue: %s", s.Name)
			}
			if err != nil {
				return nil, err
			}
			out[s.Key] = v
		}
		list = append(list, out)
	}
	return list, nil
}

func (in *introspector) enumValueList(sel *selection, values []*gqlschema.EnumValue) (any, error) {
	subs, err := in.collect(sel, "__EnumValue")
	if err != nil {
		return nil, err
	}
	list := make([]any, 0, len(values))
	for _, ev := range values {
		out := make(map[string]any, len(subs))
		for _, s := range subs {
			var v any
			switch s.Name {
			case "name":
				v = ev.Name
			case "description":
				v = introText(ev.Description)
			case "isDeprecated":
				v = false
			case "deprecationReason":
				v = nil
			case "__typename":
				v = ev.Name // pg_graphql answers the value's own name
			default:
				return nil, gqlError("unknown field in __EnumValue: %s", s.Name)
			}
			out[s.Key] = v
		}
		list = append(list, out)
	}
	return list, nil
}

func (in *introspector) directiveList(sel *selection) (any, error) {
	subs, err := in.collect(sel, "__Directive")
	if err != nil {
		return nil, err
	}
	list := make([]any, 0, len(metaDirectives))
	for _, d := range metaDirectives {
		out := make(map[string]any, len(subs))
		for _, s := range subs {
			var v any
			switch s.Name {
			case "name":
				v = d.name
			case "description":
				v = d.description
			case "locations":
				locations := make([]any, len(d.locations))
				for i, l := range d.locations {
					locations[i] = l
				}
				v = locations
			case "args":
				v, err = in.inputValueList(s, d.args)
			case "isRepeatable":
				v = false
			case "__typename":
				v = "__Directive"
			default:
				return nil, gqlError("unknown field %s in __Directive", s.Name)
			}
			if err != nil {
				return nil, err
			}
			out[s.Key] = v
		}
		list = append(list, out)
	}
	return list, nil
}

// introText turns an optional text into a JSON-like value (a nil *string must become a nil interface).
func introText(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// The introspection meta types, as pg_graphql defines them (descriptions verbatim, including the literal
// backslash-n sequences of its __Type and __Directive descriptions; fields sorted by name). They are listed
// in __schema.types and answer __type like any other type. Built once, never modified.
var metaTypes = func() map[string]*gqlschema.Type {
	named, nonNull, list := gqlschema.Named, gqlschema.NonNullOf, gqlschema.ListOf
	text := func(s string) *string { return &s }
	field := func(name string, ref *gqlschema.TypeRef, description string, args ...*gqlschema.InputValue) *gqlschema.Field {
		f := &gqlschema.Field{Name: name, Type: ref, Args: args}
		if description != "" {
			f.Description = text(description)
		}
		return f
	}
	includeDeprecated := func() *gqlschema.InputValue {
		return &gqlschema.InputValue{Name: "includeDeprecated", Type: named("Boolean"), DefaultValue: text("false")}
	}
	listOf := func(name string) *gqlschema.TypeRef { return list(nonNull(named(name))) }
	str, boolean := named("String"), nonNull(named("Boolean"))
	enum := func(name, description string, values ...[2]string) *gqlschema.Type {
		t := &gqlschema.Type{Kind: gqlschema.Enum, Name: name, Description: text(description)}
		for _, v := range values {
			ev := &gqlschema.EnumValue{Name: v[0]}
			if v[1] != "" {
				ev.Description = text(v[1])
			}
			t.EnumValues = append(t.EnumValues, ev)
		}
		return t
	}
	types := []*gqlschema.Type{
		{Kind: gqlschema.Object, Name: "__Schema",
			Description: text("A GraphQL Schema defines the capabilities of a GraphQL server. It exposes all available types and directives on the server, as well as the entry points for query, mutation, and subscription operations."),
			Fields: []*gqlschema.Field{
				field("description", str, ""),
				field("directives", nonNull(listOf("__Directive")), "A list of all directives supported by this server.", includeDeprecated()),
				field("mutationType", named("__Type"), "If this server supports mutation, the type that mutation operations will be rooted at."),
				field("queryType", nonNull(named("__Type")), "The type that query operations will be rooted at."),
				field("subscriptionType", named("__Type"), "If this server support subscription, the type that subscription operations will be rooted at."),
				field("types", nonNull(listOf("__Type")), "A list of all types supported by this server."),
			}},
		{Kind: gqlschema.Object, Name: "__Type",
			Description: text("The fundamental unit of any GraphQL Schema is the type. There are many kinds of types in GraphQL as represented by the `__TypeKind` enum.\\n\\nDepending on the kind of a type, certain fields describe information about that type. Scalar types provide no information beyond a name, description and optional `specifiedByURL`, while Enum types provide their values. Object and Interface types provide the fields they describe. Abstract types, Union and Interface, provide the Object types possible at runtime. List and NonNull types compose other types "),
			Fields: []*gqlschema.Field{
				field("description", str, ""),
				field("enumValues", listOf("__EnumValue"), "", includeDeprecated()),
				field("fields", listOf("__Field"), "", includeDeprecated()),
				field("inputFields", listOf("__InputValue"), "", includeDeprecated()),
				field("interfaces", listOf("__Type"), ""),
				field("kind", nonNull(named("__TypeKind")), ""),
				field("name", str, ""),
				field("ofType", named("__Type"), ""),
				field("possibleTypes", listOf("__Type"), ""),
				field("specifiedByURL", str, ""),
			}},
		{Kind: gqlschema.Object, Name: "__Field",
			Description: text("Object and Interface types are described by a list of Fields, each of which has a name, potentially a list of arguments, and a return type."),
			Fields: []*gqlschema.Field{
				field("args", nonNull(listOf("__InputValue")), "", includeDeprecated()),
				field("deprecationReason", str, ""),
				field("description", str, ""),
				field("isDeprecated", boolean, ""),
				field("name", nonNull(named("String")), ""),
				field("type", nonNull(named("__Type")), ""),
			}},
		{Kind: gqlschema.Object, Name: "__InputValue",
			Description: text("Arguments provided to Fields or Directives and the input fields of an InputObject are represented as Input Values which describe their type and optionally a default value."),
			Fields: []*gqlschema.Field{
				field("defaultValue", str, "A GraphQL-formatted string representing the default value for this input value."),
				field("deprecationReason", str, ""),
				field("description", str, ""),
				field("isDeprecated", boolean, ""),
				field("name", nonNull(named("String")), ""),
				field("type", nonNull(named("__Type")), ""),
			}},
		{Kind: gqlschema.Object, Name: "__EnumValue",
			Description: text("One possible value for a given Enum. Enum values are unique values, not a placeholder for a string or numeric value. However an Enum value is returned in a JSON response as a string."),
			Fields: []*gqlschema.Field{
				field("deprecationReason", str, ""),
				field("description", str, ""),
				field("isDeprecated", boolean, ""),
				field("name", nonNull(named("String")), ""),
			}},
		{Kind: gqlschema.Object, Name: "__Directive",
			Description: text("A Directive provides a way to describe alternate runtime execution and type validation behavior in a GraphQL document.\\n\\nIn some cases, you need to provide options to alter GraphQL execution behavior in ways field arguments will not suffice, such as conditionally including or skipping a field. Directives provide this by describing additional information to the executor."),
			Fields: []*gqlschema.Field{
				field("args", nonNull(listOf("__InputValue")), "", includeDeprecated()),
				field("description", str, ""),
				field("isRepeatable", boolean, ""),
				field("locations", nonNull(listOf("__DirectiveLocation")), ""),
				field("name", nonNull(named("String")), ""),
			}},
		enum("__TypeKind", "An enum describing what kind of type a given `__Type` is.",
			[2]string{"SCALAR"}, [2]string{"OBJECT"}, [2]string{"INTERFACE"}, [2]string{"UNION"}, [2]string{"ENUM"},
			[2]string{"INPUT_OBJECT"}, [2]string{"LIST"}, [2]string{"NON_NULL"}),
		enum("__DirectiveLocation", "A Directive can be adjacent to many parts of the GraphQL language, a __DirectiveLocation describes one such possible adjacencies.",
			[2]string{"QUERY", "Location adjacent to a query operation."},
			[2]string{"MUTATION", "Location adjacent to a mutation operation."},
			[2]string{"SUBSCRIPTION", "Location adjacent to a subscription operation."},
			[2]string{"FIELD", "Location adjacent to a field."},
			[2]string{"FRAGMENT_DEFINITION", "Location adjacent to a fragment definition."},
			[2]string{"FRAGMENT_SPREAD", "Location adjacent to a fragment spread."},
			[2]string{"INLINE_FRAGMENT", "Location adjacent to an inline fragment."},
			[2]string{"VARIABLE_DEFINITION", "Location adjacent to a variable definition."},
			[2]string{"SCHEMA", "Location adjacent to a schema definition."},
			[2]string{"SCALAR", "Location adjacent to a scalar definition."},
			[2]string{"OBJECT", "Location adjacent to an object type definition."},
			[2]string{"FIELD_DEFINITION", "Location adjacent to a field definition."},
			[2]string{"ARGUMENT_DEFINITION", "Location adjacent to an argument definition."},
			[2]string{"INTERFACE", "Location adjacent to an interface definition."},
			[2]string{"UNION", "Location adjacent to a union definition."},
			[2]string{"ENUM", "Location adjacent to an enum definition."},
			[2]string{"ENUM_VALUE", "Location adjacent to an enum value definition."},
			[2]string{"INPUT_OBJECT", "Location adjacent to an input object type definition."},
			[2]string{"INPUT_FIELD_DEFINITION", "Location adjacent to an input object field definition."}),
	}
	out := make(map[string]*gqlschema.Type, len(types))
	for _, t := range types {
		out[t.Name] = t
	}
	return out
}()

// metaDirective is a directive __schema.directives lists.
type metaDirective struct {
	name, description string
	locations         []string
	args              []*gqlschema.InputValue
}

// metaDirectives are the directives pg_graphql executes and lists: @include and @skip (contract 1.19).
var metaDirectives = func() []metaDirective {
	ifArg := func(description string) []*gqlschema.InputValue {
		return []*gqlschema.InputValue{{Name: "if", Description: &description,
			Type: gqlschema.NonNullOf(gqlschema.Named("Boolean"))}}
	}
	locations := []string{"FIELD", "FRAGMENT_SPREAD", "INLINE_FRAGMENT"}
	return []metaDirective{
		{name: "include", description: "Directs the executor to include this field or fragment only when the `if` argument is true.",
			locations: locations, args: ifArg("Included when true")},
		{name: "skip", description: "Directs the executor to skip this field or fragment when the `if` argument is true.",
			locations: locations, args: ifArg("Skipped when true")},
	}
}()
