package reflect

import (
	"errors"
	"testing"
)

// FuzzDirective parses arbitrary comments as every kind of object's @graphql directive: a comment either
// decodes, or fails with one of the two errors pg_graphql reports (not JSON; JSON of the wrong shape), never
// with anything else and never with a panic.
func FuzzDirective(f *testing.F) {
	for _, seed := range []string{
		`@graphql({"inflect_names": true, "max_rows": 5})`,
		`@graphql({"name": "Other", "totalCount": {"enabled": true}, "aggregate": {"enabled": "true"}})`,
		`@graphql({"primary_key_columns": ["id"], "foreign_keys": [{"local_name": "a", "local_columns": ["x"], "foreign_name": "b", "foreign_schema": "public", "foreign_table": "t", "foreign_columns": ["id"]}]})`,
		`@graphql({"mappings": {"a": "B"}})`,
		`@graphql({"max_rows": -1})`,
		`@graphql({"name": 1.5e3})`,
		`@graphql({"inflect_names": true}) and @graphql(not json)`,
		`@graphql([1, 2])`,
		`@graphql({"name": "x"}})`,
		`no directive`,
		`@graphql()`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, comment string) {
		for _, dst := range []any{&SchemaDirectives{}, &RelationDirectives{}, &NameDirectives{}, &EnumDirectives{}} {
			err := parseDirective(&comment, dst)
			if err == nil {
				continue
			}
			var je *DirectiveJSONError
			var de *DirectiveError
			switch {
			case errors.As(err, &je):
			case errors.As(err, &de):
				if de.Detail == "" {
					t.Errorf("%q into %T: a directive error without detail", comment, dst)
				}
			default:
				t.Errorf("%q into %T: unexpected error %v", comment, dst, err)
			}
		}
	})
}
