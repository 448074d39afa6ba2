package resolve

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/pgreflect/pgreflect/gqlschema"
)

// coerce checks a JSON-like value against an input type and normalises it: scalars become their SQL text
// (Int stays a json.Number, Boolean a bool), enum values become SQL labels, a single value given for a list
// becomes a one-element list. Errors carry pg_graphql's messages.
func (r *request) coerce(v any, t *gqlschema.TypeRef) (any, error) { return r.coerceMax(v, t, 0) }

// coerceMax is coerce for a value whose strings are limited to maxLen bytes (varchar(n) columns; 0 = no
// limit). The limit is the column's: it reaches the operators of the column's filter and its input fields, as
// pg_graphql's String(Some(n)) scalar does.
func (r *request) coerceMax(v any, t *gqlschema.TypeRef, maxLen int) (any, error) {
	if t.Kind == gqlschema.NonNull {
		if v == nil {
			return nil, errInvalidInput("NonNull")
		}
		return r.coerceMax(v, t.OfType, maxLen)
	}
	if v == nil {
		return nil, nil
	}
	if t.Kind == gqlschema.List {
		list, ok := v.([]any)
		if !ok {
			list = []any{v}
		}
		out := make([]any, len(list))
		for i, e := range list {
			c, err := r.coerceMax(e, t.OfType, maxLen)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	named := r.schema.Types[t.Name]
	if named == nil {
		return nil, errUnknownInputType(t.Name)
	}
	switch named.Kind {
	case gqlschema.Enum:
		return coerceEnum(v, named)
	case gqlschema.InputObject:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, errInvalidInput(named.Name)
		}
		var extra []string
		for k := range obj {
			if inputField(named, k) == nil {
				extra = append(extra, k)
			}
		}
		if len(extra) > 0 {
			sort.Strings(extra)
			return nil, errExtraInputKeys(named.Name, extra)
		}
		out := make(map[string]any, len(obj))
		for _, f := range named.InputFields {
			fv, present := obj[f.Name]
			if !present {
				continue
			}
			fieldMax := maxLen
			if f.Column != nil {
				fieldMax = f.Column.Type.MaxLength
			}
			c, err := r.coerceMax(fv, f.Type, fieldMax)
			if err != nil {
				return nil, err
			}
			out[f.Name] = c
		}
		return out, nil
	}
	return coerceScalar(v, named.Name, maxLen)
}

func inputField(t *gqlschema.Type, name string) *gqlschema.InputValue {
	for _, f := range t.InputFields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

func coerceEnum(v any, t *gqlschema.Type) (any, error) {
	var name string
	switch v := v.(type) {
	case enumLiteral:
		name = string(v)
	case string:
		name = v
	default:
		return nil, errInvalidInput(t.Name)
	}
	for _, ev := range t.EnumValues {
		if ev.Name == name {
			if ev.SQL != "" {
				return ev.SQL, nil
			}
			return enumLiteral(ev.Name), nil
		}
	}
	return nil, errInvalidInput(t.Name)
}

func coerceScalar(v any, scalar string, maxLen int) (any, error) {
	switch scalar {
	case "Int":
		n, ok := v.(json.Number)
		if !ok {
			return nil, errInvalidInput(scalar)
		}
		// Any 64-bit integer passes, as in pg_graphql; Postgres reports values out of the column's range.
		if _, err := strconv.ParseInt(string(n), 10, 64); err != nil {
			return nil, errInvalidInput(scalar)
		}
		return n, nil
	case "Float":
		n, ok := v.(json.Number)
		if !ok {
			return nil, errInvalidInput(scalar)
		}
		return string(n), nil
	case "BigInt":
		switch v := v.(type) {
		case json.Number:
			// Any number passes, as in pg_graphql: Postgres rejects one that is not an integer.
			return string(v), nil
		case string:
			return v, nil
		}
		return nil, errInvalidInput(scalar)
	case "BigFloat":
		s, ok := v.(string)
		if !ok {
			return nil, errBigFloatNotString()
		}
		return s, nil
	case "Boolean":
		b, ok := v.(bool)
		if !ok {
			return nil, errInvalidInput(scalar)
		}
		return b, nil
	case "Opaque":
		switch v := v.(type) {
		case string:
			return v, nil
		case enumLiteral:
			return string(v), nil
		case bool:
			return strconv.FormatBool(v), nil
		case json.Number:
			return string(v), nil
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, errInvalidInput(scalar)
		}
		return string(b), nil
	case "String":
		s, ok := v.(string)
		if !ok {
			return nil, errInvalidString(maxLen)
		}
		if err := checkLength(&s, maxLen); err != nil {
			return nil, err
		}
		return s, nil
	}
	// ID, UUID, JSON, Cursor, Date, Time, Datetime: strings.
	s, ok := v.(string)
	if !ok {
		return nil, errInvalidInput(scalar)
	}
	return s, nil
}

// sqlText renders a coerced scalar as the text bound for SQL.
func sqlText(v any) *string {
	var s string
	switch v := v.(type) {
	case nil:
		return nil
	case string:
		s = v
	case json.Number:
		s = string(v)
	case bool:
		s = strconv.FormatBool(v)
	case enumLiteral:
		s = string(v)
	default:
		s = fmt.Sprint(v)
	}
	return &s
}

// checkLength enforces varchar(n) limits on input (pg_graphql counts bytes).
func checkLength(v *string, max int) error {
	if v != nil && max > 0 && len(*v) > max {
		return errStringTooLong(max)
	}
	return nil
}
