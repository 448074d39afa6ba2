package reflect

import (
	"fmt"
	"strings"
)

// Feature is an extension of pg_graphql's API (issue-tracker favourites such as upsert) that stays off until a
// comment directive, @graphql({"features": [...]}) on a schema or a table, or the server's setting turns it
// on, so that a database that does not ask for one answers exactly as pg_graphql does.
type Feature string

// The features pgreflect offers beyond pg_graphql; docs/extensions.md describes each.
const (
	FeatureUpsert        Feature = "upsert"
	FeatureNestedInsert  Feature = "nestedInsert"
	FeatureRelatedFilter Feature = "relatedFilter"
	FeatureRelatedOrder  Feature = "relatedOrder"
	FeatureDistinct      Feature = "distinct"
	FeatureComposite     Feature = "composite"
	FeatureExactPaging   Feature = "exactPaging"
	// FeatureSubscriptions adds the Subscription root: live queries over WebSocket and Server-Sent Events
	// (docs/subscriptions.md).
	FeatureSubscriptions Feature = "subscriptions"
)

// AllFeatures lists every feature in a stable order.
func AllFeatures() []Feature {
	return []Feature{FeatureUpsert, FeatureNestedInsert, FeatureRelatedFilter, FeatureRelatedOrder,
		FeatureDistinct, FeatureComposite, FeatureExactPaging, FeatureSubscriptions}
}

// ParseFeature checks a feature's name; the error lists the names there are, as serde's unknown-variant
// message does, because a typo in a directive would otherwise leave a feature silently off.
func ParseFeature(name string) (Feature, error) {
	for _, f := range AllFeatures() {
		if string(f) == name {
			return f, nil
		}
	}
	names := make([]string, 0, len(AllFeatures()))
	for _, f := range AllFeatures() {
		names = append(names, "`"+string(f)+"`")
	}
	return "", fmt.Errorf("unknown feature `%s`, expected one of %s", name, strings.Join(names, ", "))
}

// checkFeatures rejects unknown names in a directive's features list.
func checkFeatures(fs []Feature) error {
	for _, f := range fs {
		if _, err := ParseFeature(string(f)); err != nil {
			return &DirectiveError{Detail: err.Error()}
		}
	}
	return nil
}

func (d *SchemaDirectives) check() error   { return checkFeatures(d.Features) }
func (d *RelationDirectives) check() error { return checkFeatures(d.Features) }

// FeatureSet is a set of features.
type FeatureSet map[Feature]bool

// NewFeatureSet returns the set of the given features.
func NewFeatureSet(fs ...Feature) FeatureSet {
	s := FeatureSet{}
	for _, f := range fs {
		s[f] = true
	}
	return s
}

// Has reports whether f is in the set; a nil set has none.
func (s FeatureSet) Has(f Feature) bool { return s[f] }
