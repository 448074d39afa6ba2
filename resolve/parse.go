package resolve

import (
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
)

// parse parses the document and selects the operation.
func parse(query string, operationName string, rawVariables json.RawMessage) (*ast.QueryDocument, *ast.OperationDefinition, map[string]any, error) {
	doc, err := parser.ParseQuery(&ast.Source{Input: query})
	if err != nil {
		return nil, nil, nil, parseError(query, err)
	}
	if len(doc.Operations) == 0 && len(doc.Fragments) == 0 {
		return nil, nil, nil, emptyDocumentError(query)
	}
	variables := map[string]any{}
	if len(rawVariables) > 0 && string(rawVariables) != "null" {
		dec := json.NewDecoder(strings.NewReader(string(rawVariables)))
		dec.UseNumber()
		var v any
		// One value and nothing after it: a GET's variables parameter is not checked as a JSON body is.
		if err := dec.Decode(&v); err != nil || dec.Decode(new(any)) != io.EOF {
			return nil, nil, nil, errVariablesNotObject()
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, nil, nil, errVariablesNotObject()
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

func parseError(query string, err error) error {
	var ge *gqlerror.Error
	if errors.As(err, &ge) {
		line, col := 0, 0
		if len(ge.Locations) > 0 {
			line, col = ge.Locations[0].Line, ge.Locations[0].Column
		}
		return errParseAt(line, col, parseErrorDetail(ge.Message, textAt(query, line, col)))
	}
	return errParse(err)
}

// textAt is the query text from a 1-based line and column on ("" past the end).
func textAt(query string, line, col int) string {
	l, c := 1, 1
	for i, r := range query {
		if l == line && c == col {
			return query[i:]
		}
		if r == '\n' {
			l, c = l+1, 1
		} else {
			c++
		}
	}
	return ""
}

// emptyDocumentError is graphql-parser's error for a document without definitions.
func emptyDocumentError(query string) error {
	line, col := 1, 1
	for _, r := range query {
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return errParseAt(line, col, emptyDocumentDetail)
}

func selectOperation(doc *ast.QueryDocument, name string) (*ast.OperationDefinition, error) {
	ops := doc.Operations
	seen := map[string]bool{}
	for _, op := range ops {
		if op.Name == "" && len(ops) > 1 {
			return nil, errAnonymousNotAlone()
		}
		if op.Name != "" && seen[op.Name] {
			return nil, errDuplicateOperationName()
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
		return nil, errOperationNotFound()
	}
	return chosen, nil
}

const maxFragmentDepth = 50

// checkFragmentCycles rejects documents whose fragments spread each other in a cycle. Each fragment is
// explored once (depth-first with finished marks), so shared fragments cost nothing extra.
func checkFragmentCycles(doc *ast.QueryDocument) error {
	const (
		unvisited = iota
		active
		finished
	)
	state := map[string]int{}
	var visitSet func(set ast.SelectionSet, depth int) error
	visitFragment := func(name string, depth int) error {
		switch state[name] {
		case active:
			return errFragmentCycle()
		case finished:
			return nil
		}
		if depth > maxFragmentDepth {
			return errFragmentDepth(maxFragmentDepth)
		}
		f := doc.Fragments.ForName(name)
		if f == nil {
			return nil
		}
		state[name] = active
		if err := visitSet(f.SelectionSet, depth+1); err != nil {
			return err
		}
		state[name] = finished
		return nil
	}
	visitSet = func(set ast.SelectionSet, depth int) error {
		for _, s := range set {
			switch s := s.(type) {
			case *ast.Field:
				if err := visitSet(s.SelectionSet, depth); err != nil {
					return err
				}
			case *ast.InlineFragment:
				if err := visitSet(s.SelectionSet, depth); err != nil {
					return err
				}
			case *ast.FragmentSpread:
				if err := visitFragment(s.Name, depth); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, op := range doc.Operations {
		if err := visitSet(op.SelectionSet, 0); err != nil {
			return err
		}
	}
	for _, f := range doc.Fragments {
		if err := visitFragment(f.Name, 0); err != nil {
			return err
		}
	}
	return nil
}
