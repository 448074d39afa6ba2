package benchcmp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
)

// Rows decodes a response body and reduces it to its rows, so that answers of different dialects compare:
// pg_graphql's {"edges": [{"node": x}]} and PostGraphile's {"nodes": [x]} both become [x], and a mutation's
// rows (pg_graphql's {"records": [x]}, PostGraphile's {"blogPost": x}) become [x]. A body with errors, or
// without data, is an error.
func Rows(body []byte) (any, error) {
	var resp struct {
		Data   any `json:"data"`
		Errors any `json:"errors"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&resp); err != nil {
		return nil, fmt.Errorf("response is not JSON: %w: %.200s", err, body)
	}
	if resp.Errors != nil || resp.Data == nil {
		return nil, fmt.Errorf("response has errors or no data: %.300s", body)
	}
	return normalise(resp.Data), nil
}

func normalise(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if edges, ok := v["edges"].([]any); ok && len(v) == 1 {
			rows := make([]any, len(edges))
			for i, e := range edges {
				node, _ := e.(map[string]any)
				rows[i] = normalise(node["node"])
			}
			return rows
		}
		for _, key := range []string{"nodes", "records"} {
			if list, ok := v[key].([]any); ok && len(v) == 1 {
				return normalise(list)
			}
		}
		if row, ok := v["blogPost"]; ok && len(v) == 1 {
			return []any{normalise(row)}
		}
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = normalise(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = normalise(x)
		}
		return out
	default:
		return v
	}
}

// SameRows reports whether two response bodies hold the same rows, and if not, why.
func SameRows(a, b []byte) error {
	ra, err := Rows(a)
	if err != nil {
		return err
	}
	rb, err := Rows(b)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(ra, rb) {
		ja, _ := json.Marshal(ra)
		jb, _ := json.Marshal(rb)
		return fmt.Errorf("rows differ:\n%.600s\n%.600s", ja, jb)
	}
	return nil
}

// RowCount is the number of rows at the top level of an answer's first root field, to show that a check
// compared something.
func RowCount(body []byte) int {
	rows, err := Rows(body)
	if err != nil {
		return 0
	}
	if m, ok := rows.(map[string]any); ok {
		for _, v := range m {
			if list, ok := v.([]any); ok {
				return len(list)
			}
		}
	}
	return 0
}
