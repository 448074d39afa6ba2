package reflect

import (
	"errors"
	"strings"
	"testing"
)

func TestFeatureDirectives(t *testing.T) {
	comment := `@graphql({"name": "Post", "features": ["upsert", "nestedInsert"]})`
	var d RelationDirectives
	if err := parseDirective(&comment, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Features) != 2 || d.Features[0] != FeatureUpsert || d.Features[1] != FeatureNestedInsert || d.Name != "Post" {
		t.Errorf("directives = %+v", d)
	}
	for comment, want := range map[string]string{
		`@graphql({"features": ["upsrt"]})`: "unknown feature `upsrt`, expected one of `upsert`, `nestedInsert`",
		`@graphql({"features": "upsert"})`:  "invalid type: string \"upsert\", expected a sequence",
		`@graphql({"features": [1]})`:       "invalid type: integer `1`, expected a string",
	} {
		var s SchemaDirectives
		err := parseDirective(&comment, &s)
		var de *DirectiveError
		if !errors.As(err, &de) || !strings.Contains(de.Detail, want) {
			t.Errorf("%s: err = %v, want a directive error containing %q", comment, err, want)
		}
	}
}
