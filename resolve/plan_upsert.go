package resolve

import (
	"slices"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/sqlgen"
)

// onConflict plans the onConflict argument of an insert (the upsert extension); nil when it is absent or
// null. The enums were coerced to SQL names: the constraint to its index's name, the columns to theirs.
func (r *request) onConflict(v any, t *gqlschema.Table) (*sqlgen.OnConflict, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, nil
	}
	name, _ := obj["constraint"].(string)
	oc := &sqlgen.OnConflict{}
	for _, k := range t.Rel.UniqueKeys {
		if k.Name == name {
			oc.Target = k.Columns
		}
	}
	if oc.Target == nil {
		return nil, errInvalidInput(t.TypeName + "Constraint")
	}
	cols, _ := obj["updateColumns"].([]any)
	oc.Update = []string{}
	for _, c := range cols {
		// A column listed twice is set once: Postgres rejects a second assignment.
		if !slices.Contains(oc.Update, c.(string)) {
			oc.Update = append(oc.Update, c.(string))
		}
	}
	if f, ok := obj["filter"].(map[string]any); ok {
		var err error
		if oc.Filter, err = r.filter(f, t); err != nil {
			return nil, err
		}
	}
	return oc, nil
}
