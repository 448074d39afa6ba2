package resolve

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/pgreflect/pgreflect/gqlschema"
)

// clientError is an error whose message goes to the client verbatim.
type clientError struct{ msg string }

func (e *clientError) Error() string { return e.msg }

func gqlError(format string, args ...any) error {
	if len(args) == 0 {
		return &clientError{msg: format}
	}
	return &clientError{msg: fmt.Sprintf(format, args...)}
}

// request is one GraphQL request being resolved against one schema.
type request struct {
	schema    *gqlschema.Schema
	doc       *ast.QueryDocument
	op        *ast.OperationDefinition
	variables map[string]any
	fragments map[string]*ast.FragmentDefinition
	// fragmentDepth guards against runaway spreads (cycles are rejected up front).
	fragmentDepth int
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
}

// absent marks a value whose variable was not provided and has no default.
type absentValue struct{}

var absent = absentValue{}

// parse parses the document and selects the operation.
func parse(query string, operationName string, rawVariables json.RawMessage) (*ast.QueryDocument, *ast.OperationDefinition, map[string]any, error) {
	doc, err := parser.ParseQuery(&ast.Source{Input: query})
	if err != nil {
		return nil, nil, nil, parseError(err)
	}
	variables := map[string]any{}
	if len(rawVariables) > 0 && string(rawVariables) != "null" {
		dec := json.NewDecoder(strings.NewReader(string(rawVariables)))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, nil, nil, gqlError("variables must be an object")
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, nil, nil, gqlError("variables must be an object")
		}
		variables = obj
	}
	op, err := selectOperation(doc, operationName)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := checkFragmentCycles(doc); err != nil {
		return nil, nil, nil, err
	}
	return doc, op, variables, nil
}

func parseError(err error) error {
	var ge *gqlerror.Error
	if errors.As(err, &ge) {
		line, col := 0, 0
		if len(ge.Locations) > 0 {
			line, col = ge.Locations[0].Line, ge.Locations[0].Column
		}
		return gqlError("query parse error: Parse error at %d:%d\n%s\n", line, col, ge.Message)
	}
	return gqlError("query parse error: %s", err.Error())
}

func selectOperation(doc *ast.QueryDocument, name string) (*ast.OperationDefinition, error) {
	ops := doc.Operations
	seen := map[string]bool{}
	for _, op := range ops {
		if op.Name == "" && len(ops) > 1 {
			return nil, gqlError("Anonymous operations must be the only defined operation")
		}
		if op.Name != "" && seen[op.Name] {
			return nil, gqlError("Operation names must be unique")
		}
		seen[op.Name] = true
	}
	var chosen *ast.OperationDefinition
	switch {
	case len(ops) == 1 && (name == "" || ops[0].Name == name):
		chosen = ops[0]
	case name != "":
		chosen = ops.ForName(name)
	}
	if chosen == nil {
		return nil, gqlError("Operation not found")
	}
	if chosen.Operation == ast.Subscription {
		return nil, gqlError("Subscriptions are not supported")
	}
	return chosen, nil
}

const maxFragmentDepth = 50

// checkFragmentCycles rejects documents whose fragments spread each other in a cycle.
func checkFragmentCycles(doc *ast.QueryDocument) error {
	var visit func(set ast.SelectionSet, stack []string) error
	visit = func(set ast.SelectionSet, stack []string) error {
		if len(stack) > maxFragmentDepth {
			return gqlError("Fragment cycle depth is greater than %d", maxFragmentDepth)
		}
		for _, s := range set {
			switch s := s.(type) {
			case *ast.Field:
				if err := visit(s.SelectionSet, stack); err != nil {
					return err
				}
			case *ast.InlineFragment:
				if err := visit(s.SelectionSet, stack); err != nil {
					return err
				}
			case *ast.FragmentSpread:
				for _, name := range stack {
					if name == s.Name {
						return gqlError("Found a cycle between fragments")
					}
				}
				if f := doc.Fragments.ForName(s.Name); f != nil {
					if err := visit(f.SelectionSet, append(stack, s.Name)); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	for _, op := range doc.Operations {
		if err := visit(op.SelectionSet, nil); err != nil {
			return err
		}
	}
	for _, f := range doc.Fragments {
		if err := visit(f.SelectionSet, []string{f.Name}); err != nil {
			return err
		}
	}
	return nil
}

// collect flattens set for an object of the named type: it applies @skip/@include, named fragment spreads and
// inline fragments whose type condition is typeName (or absent), and merges fields with the same key.
func (r *request) collect(set ast.SelectionSet, typeName string) ([]*selection, error) {
	var out []*selection
	byKey := map[string]*selection{}
	if err := r.collectInto(set, typeName, &out, byKey); err != nil {
		return nil, err
	}
	return out, nil
}

func (r *request) collectInto(set ast.SelectionSet, typeName string, out *[]*selection, byKey map[string]*selection) error {
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
			args, err := r.arguments(s.Arguments)
			if err != nil {
				return err
			}
			if prev, ok := byKey[key]; ok {
				if prev.Name != s.Name {
					return gqlError("Fields `%s` and `%s` are different", prev.Name, s.Name)
				}
				if !sameArguments(prev.Field.Arguments, s.Arguments) {
					return gqlError("Two fields named `%s` have different arguments", key)
				}
				prev.sets = append(prev.sets, s.SelectionSet)
				continue
			}
			sel := &selection{Key: key, Name: s.Name, Args: args, Field: s, sets: []ast.SelectionSet{s.SelectionSet}}
			byKey[key] = sel
			*out = append(*out, sel)
		case *ast.InlineFragment:
			if s.TypeCondition != "" && s.TypeCondition != typeName {
				continue
			}
			if err := r.collectInto(s.SelectionSet, typeName, out, byKey); err != nil {
				return err
			}
		case *ast.FragmentSpread:
			f := r.doc.Fragments.ForName(s.Name)
			if f == nil || f.TypeCondition != typeName {
				return gqlError("no fragment named %s on type %s", s.Name, typeName)
			}
			if err := r.collectInto(f.SelectionSet, typeName, out, byKey); err != nil {
				return err
			}
		}
	}
	return nil
}

// children collects the merged sub-selections of a field for an object of the named type.
func (r *request) children(sel *selection, typeName string) ([]*selection, error) {
	var out []*selection
	byKey := map[string]*selection{}
	for _, set := range sel.sets {
		if err := r.collectInto(set, typeName, &out, byKey); err != nil {
			return nil, err
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
			return false, gqlError("Unknown directive %s", d.Name)
		}
		if len(d.Arguments) != 1 {
			if len(d.Arguments) == 0 {
				return false, gqlError(`Value for "if" in @%s directive is required`, d.Name)
			}
			return false, gqlError("Incorrect arguments to directive @%s", d.Name)
		}
		arg := d.Arguments[0]
		if arg.Name != "if" {
			return false, gqlError("Unknown argument to @%s: %s", d.Name, arg.Name)
		}
		v, err := r.value(arg.Value)
		if err != nil {
			return false, err
		}
		b, ok := v.(bool)
		if !ok {
			return false, gqlError(`Value for "if" in @%s directive is required`, d.Name)
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
			return nil, gqlError("Invalid Int input")
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
	return nil, gqlError("Invalid input")
}

// enumLiteral is an unquoted enum value in a document; strings are accepted for enums too.
type enumLiteral string
