package resolve

import (
	"encoding/json"
	"strconv"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/sqlgen"
)

// request is one GraphQL request being resolved against one schema.
type request struct {
	schema    *gqlschema.Schema
	doc       *ast.QueryDocument
	op        *ast.OperationDefinition
	variables map[string]any
	// limits bound the operation; zero fields take their defaults, so a request built without them is still
	// bounded.
	limits Limits
	// joinRecords lets to-one records be joined to the rows they belong to (sqlgen's Record.Joinable).
	joinRecords bool
	// server is what the statements may use of the schema's server (planning's jsonScalar, where it has it).
	server sqlgen.Server
	// introWorkers is planning's: how many goroutines write an introspection answer's types.
	introWorkers int
	// reads collects the relations planned over (what a live query depends on).
	reads readSet
}

// selection is a field after fragments, @skip/@include and merging are applied.
type selection struct {
	Key  string // response key: alias, else name
	Name string
	// Args holds argument values with variables substituted; an absent argument has no key. Values are
	// JSON-like: nil, bool, string, json.Number, []any, map[string]any.
	Args  map[string]any
	Field *ast.Field
	// sets are the selection sets of every merged occurrence of the field.
	sets []ast.SelectionSet
	// argErr is a failure to read an argument literal (e.g. "Invalid Int input"); like pg_graphql it fails the
	// field, not the request.
	argErr error
}

// absent marks a value whose variable was not provided and has no default.
type absentValue struct{}

var absent = absentValue{}

// collect flattens the operation's root selection set for the root type typeName: it applies @skip/@include,
// named fragment spreads and inline fragments whose type condition is typeName (or absent), and merges fields
// with the same key. It is where planning starts, so it first refuses an operation beyond the limits, before
// anything is expanded.
func (r *request) collect(set ast.SelectionSet, typeName string) ([]*selection, error) {
	if err := r.limits.checkDocument(r.doc, r.op); err != nil {
		return nil, err
	}
	var out []*selection
	c := &collection{byKey: map[string]*selection{}, visited: map[string]bool{}}
	if err := r.collectInto(set, typeName, &out, c); err != nil {
		return nil, err
	}
	return out, nil
}

// collection is the state of one collect: fields by response key, and the fragments already spread (a
// fragment spread twice at one level adds nothing, and skipping it keeps nested spreads from multiplying).
type collection struct {
	byKey   map[string]*selection
	visited map[string]bool
}

func (r *request) collectInto(set ast.SelectionSet, typeName string, out *[]*selection, c *collection) error {
	byKey := c.byKey
	for _, s := range set {
		var directives ast.DirectiveList
		switch s := s.(type) {
		case *ast.Field:
			directives = s.Directives
		case *ast.InlineFragment:
			directives = s.Directives
		case *ast.FragmentSpread:
			directives = s.Directives
		}
		include, err := r.included(directives)
		if err != nil {
			return err
		}
		if !include {
			continue
		}
		switch s := s.(type) {
		case *ast.Field:
			key := s.Alias
			if key == "" {
				key = s.Name
			}
			args, argErr := r.arguments(s.Arguments)
			if prev, ok := byKey[key]; ok {
				if prev.Name != s.Name {
					// pg_graphql names the later field first.
					return errFieldsDiffer(s.Name, prev.Name)
				}
				if !sameArguments(prev.Field.Arguments, s.Arguments) {
					return errFieldArgsDiffer(key)
				}
				prev.sets = append(prev.sets, s.SelectionSet)
				continue
			}
			sel := &selection{Key: key, Name: s.Name, Args: args, Field: s, sets: []ast.SelectionSet{s.SelectionSet}, argErr: argErr}
			byKey[key] = sel
			*out = append(*out, sel)
		case *ast.InlineFragment:
			if s.TypeCondition != "" && s.TypeCondition != typeName {
				continue
			}
			if err := r.collectInto(s.SelectionSet, typeName, out, c); err != nil {
				return err
			}
		case *ast.FragmentSpread:
			f := r.doc.Fragments.ForName(s.Name)
			if f == nil || f.TypeCondition != typeName {
				return errNoFragment(s.Name, typeName)
			}
			if c.visited[s.Name] {
				continue
			}
			c.visited[s.Name] = true
			if err := r.collectInto(f.SelectionSet, typeName, out, c); err != nil {
				return err
			}
		}
	}
	return nil
}

// children collects the merged sub-selections of a field for an object of the named type.
func (r *request) children(sel *selection, typeName string) ([]*selection, error) {
	var out []*selection
	c := &collection{byKey: map[string]*selection{}, visited: map[string]bool{}}
	for _, set := range sel.sets {
		if err := r.collectInto(set, typeName, &out, c); err != nil {
			return nil, err
		}
	}
	for _, child := range out {
		if child.argErr != nil {
			return nil, child.argErr
		}
	}
	return out, nil
}

func sameArguments(a, b ast.ArgumentList) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Value.String() != b[i].Value.String() {
			return false
		}
	}
	return true
}

// included evaluates @skip and @include.
func (r *request) included(directives ast.DirectiveList) (bool, error) {
	for _, d := range directives {
		if d.Name != "skip" && d.Name != "include" {
			return false, errUnknownDirective(d.Name)
		}
		if len(d.Arguments) != 1 {
			return false, errDirectiveArguments(d.Name)
		}
		arg := d.Arguments[0]
		if arg.Name != "if" {
			return false, errDirectiveArgument(d.Name, arg.Name)
		}
		v, err := r.value(arg.Value)
		if err != nil {
			return false, err
		}
		b, ok := v.(bool)
		if !ok {
			return false, errDirectiveIf(d.Name)
		}
		if (d.Name == "skip") == b {
			return false, nil
		}
	}
	return true, nil
}

func (r *request) arguments(args ast.ArgumentList) (map[string]any, error) {
	out := map[string]any{}
	for _, a := range args {
		v, err := r.value(a.Value)
		if err != nil {
			return nil, err
		}
		if v != absent {
			out[a.Name] = v
		}
	}
	return out, nil
}

// value converts a literal to a JSON-like value, substituting variables; a variable that is neither provided
// nor defaulted yields absent, and object fields holding absent are dropped.
func (r *request) value(v *ast.Value) (any, error) {
	switch v.Kind {
	case ast.Variable:
		if val, ok := r.variables[v.Raw]; ok {
			return val, nil
		}
		if def := r.op.VariableDefinitions.ForName(v.Raw); def != nil && def.DefaultValue != nil {
			return r.value(def.DefaultValue)
		}
		return absent, nil
	case ast.IntValue:
		if _, err := strconv.ParseInt(v.Raw, 10, 64); err != nil {
			return nil, errIntLiteral()
		}
		return json.Number(v.Raw), nil
	case ast.FloatValue:
		return json.Number(v.Raw), nil
	case ast.StringValue, ast.BlockValue:
		return v.Raw, nil
	case ast.BooleanValue:
		return v.Raw == "true", nil
	case ast.NullValue:
		return nil, nil
	case ast.EnumValue:
		return enumLiteral(v.Raw), nil
	case ast.ListValue:
		out := make([]any, 0, len(v.Children))
		for _, c := range v.Children {
			cv, err := r.value(c.Value)
			if err != nil {
				return nil, err
			}
			if cv == absent {
				cv = nil
			}
			out = append(out, cv)
		}
		return out, nil
	case ast.ObjectValue:
		out := make(map[string]any, len(v.Children))
		for _, c := range v.Children {
			cv, err := r.value(c.Value)
			if err != nil {
				return nil, err
			}
			if cv != absent {
				out[c.Name] = cv
			}
		}
		return out, nil
	}
	return nil, errInvalidLiteral()
}

// enumLiteral is an unquoted enum value in a document; strings are accepted for enums too.
type enumLiteral string
