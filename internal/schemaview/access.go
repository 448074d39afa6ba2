package schemaview

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/reflect"
)

// Access is who may do what with each relation and function, and what that makes visible in GraphQL.
type Access struct {
	Roles     []Role           `json:"roles"`
	Relations []RelationAccess `json:"relations"`
	Functions []FunctionAccess `json:"functions"`
	// Flags counts the flags of every relation and function, by level.
	Flags map[string]int `json:"flags"`
}

// Role is an API role; BypassRLS roles see every row whatever the policies (Supabase's service_role).
type Role struct {
	Name      string `json:"name"`
	BypassRLS bool   `json:"bypassRLS"`
}

// RelationAccess is a table, view, materialized view or foreign table of the API's schemas.
type RelationAccess struct {
	Schema   string `json:"schema"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	RLS      bool   `json:"rls"`
	ForceRLS bool   `json:"forceRLS"`
	// SecurityInvoker: a view that reads its tables with the querying role's rights (and RLS).
	SecurityInvoker bool `json:"securityInvoker"`
	// Partition: a partition of a partitioned table.
	Partition bool                       `json:"partition"`
	Grants    map[string]TablePrivileges `json:"grants"`
	Policies  []Policy                   `json:"policies"`
	Columns   []ColumnAccess             `json:"columns"`
	// GraphQL is what each role's schema has of the relation.
	GraphQL map[string]RelationGraphQL `json:"graphql"`
	Flags   []Flag                     `json:"flags"`

	OID uint32 `json:"-"`
}

// TablePrivileges are a role's privileges on a relation.
type TablePrivileges struct {
	Select bool `json:"select"`
	Insert bool `json:"insert"`
	Update bool `json:"update"`
	Delete bool `json:"delete"`
}

// Policy is a row level security policy as Postgres stores it.
type Policy struct {
	Name       string   `json:"name"`
	Command    string   `json:"command"`
	Permissive bool     `json:"permissive"`
	Roles      []string `json:"roles"`
	Using      *string  `json:"using"`
	WithCheck  *string  `json:"withCheck"`
	// Columns are the columns of the relation its expressions read.
	Columns []string `json:"columns"`
}

// ColumnAccess is a column with each role's privileges and its GraphQL field.
type ColumnAccess struct {
	Name   string                      `json:"name"`
	Type   string                      `json:"type"`
	Grants map[string]ColumnPrivileges `json:"grants"`
	// Fields are the column's field name in each role's type; a role without one has no entry.
	Fields map[string]string `json:"fields"`
}

// ColumnPrivileges are a role's privileges on a column (the table's included).
type ColumnPrivileges struct {
	Select bool `json:"select"`
	Insert bool `json:"insert"`
	Update bool `json:"update"`
}

// RelationGraphQL is a relation in one role's schema: its type and root fields, or why it has none.
type RelationGraphQL struct {
	Type       string `json:"type,omitempty"`
	Collection string `json:"collection,omitempty"`
	ByPk       string `json:"byPk,omitempty"`
	Insert     string `json:"insert,omitempty"`
	Update     string `json:"update,omitempty"`
	Delete     string `json:"delete,omitempty"`
	// Missing says why the role has no type for the relation.
	Missing string `json:"missing,omitempty"`
}

// FunctionAccess is a function of the API's schemas.
type FunctionAccess struct {
	Schema          string          `json:"schema"`
	Name            string          `json:"name"`
	Arguments       string          `json:"arguments"`
	Returns         string          `json:"returns"`
	Volatility      string          `json:"volatility"`
	SecurityDefiner bool            `json:"securityDefiner"`
	Execute         map[string]bool `json:"execute"`
	// GraphQL is where each role's schema has the function (Query.x, Mutation.x, Type.x), or why not.
	GraphQL map[string]FunctionGraphQL `json:"graphql"`
	Flags   []Flag                     `json:"flags"`

	OID uint32 `json:"-"`
}

// FunctionGraphQL is a function in one role's schema.
type FunctionGraphQL struct {
	Field   string `json:"field,omitempty"`
	Missing string `json:"missing,omitempty"`
}

// Flag is a usual mistake of access control.
type Flag struct {
	Level   string `json:"level"` // error or warning
	Message string `json:"message"`
}

// rawAccess is access.sql's answer.
type rawAccess struct {
	Roles     []Role `json:"roles"`
	Relations []struct {
		RelationAccess
		OID uint32 `json:"oid"`
	} `json:"relations"`
	Functions []struct {
		FunctionAccess
		OID uint32 `json:"oid"`
	} `json:"functions"`
}

// Access reads the access rules and each role's schema.
func (v *View) Access(ctx context.Context) (*Access, error) {
	sides, path, err := v.load(ctx, v.o.Roles...)
	if err != nil {
		return nil, err
	}
	var doc string
	if err := v.o.Pool.QueryRow(ctx, accessQuery, path, v.o.Roles).Scan(&doc); err != nil {
		return nil, fmt.Errorf("access query: %w", err)
	}
	var raw rawAccess
	if err := json.Unmarshal([]byte(doc), &raw); err != nil {
		return nil, fmt.Errorf("decode access: %w", err)
	}
	out := &Access{Roles: raw.Roles, Relations: []RelationAccess{}, Functions: []FunctionAccess{}, Flags: map[string]int{}}
	for _, r := range raw.Relations {
		rel := r.RelationAccess
		rel.OID = r.OID
		rel.GraphQL = map[string]RelationGraphQL{}
		for _, role := range v.o.Roles {
			rel.GraphQL[role] = relationGraphQL(sides[role].Generated, &rel, role)
		}
		rel.Flags = relationFlags(&rel, out.Roles)
		out.Relations = append(out.Relations, rel)
	}
	for _, f := range raw.Functions {
		fn := f.FunctionAccess
		fn.OID = f.OID
		fn.GraphQL = map[string]FunctionGraphQL{}
		for _, role := range v.o.Roles {
			fn.GraphQL[role] = functionGraphQL(sides[role].Generated, fn.OID)
		}
		fn.Flags = functionFlags(&fn)
		out.Functions = append(out.Functions, fn)
	}
	for _, r := range out.Relations {
		for _, f := range r.Flags {
			out.Flags[f.Level]++
		}
	}
	for _, f := range out.Functions {
		for _, fl := range f.Flags {
			out.Flags[fl.Level]++
		}
	}
	return out, nil
}

// relationGraphQL is what role's schema has of rel, and fills in the fields of rel's columns for role.
func relationGraphQL(s *gqlschema.Schema, rel *RelationAccess, role string) RelationGraphQL {
	t := s.Tables[rel.OID]
	if t == nil {
		return RelationGraphQL{Missing: missingRelation(s, rel)}
	}
	out := RelationGraphQL{Type: t.TypeName}
	roots := slices.Clone(s.Query.Fields)
	if s.Mutation != nil {
		roots = append(roots, s.Mutation.Fields...)
	}
	for _, f := range roots {
		if f.Table != t || f.Function != nil {
			continue
		}
		switch f.Kind {
		case gqlschema.FieldCollection:
			out.Collection = f.Name
		case gqlschema.FieldByPk:
			out.ByPk = f.Name
		case gqlschema.FieldInsert:
			out.Insert = f.Name
		case gqlschema.FieldUpdate:
			out.Update = f.Name
		case gqlschema.FieldDelete:
			out.Delete = f.Name
		}
	}
	for i := range rel.Columns {
		if c := t.ColumnByName(rel.Columns[i].Name); c != nil {
			if rel.Columns[i].Fields == nil {
				rel.Columns[i].Fields = map[string]string{}
			}
			rel.Columns[i].Fields[role] = c.FieldName
		}
	}
	return out
}

// missingRelation says why a schema has no type for a relation.
func missingRelation(s *gqlschema.Schema, rel *RelationAccess) string {
	for _, o := range s.Omitted {
		if o.Relation != nil && o.Column == nil && o.Relation.OID == rel.OID {
			if o.Reason == gqlschema.OmitNameTaken && o.By != nil {
				return fmt.Sprintf("%s: %s.%s", o.Reason, o.By.Schema.Name, o.By.Name)
			}
			return o.Reason.String()
		}
	}
	if s.Catalog.RelationByOID(rel.OID) != nil {
		return "only the result of a computed field (no primary key)"
	}
	if !slices.ContainsFunc(s.Catalog.Schemas, func(sc *reflect.Schema) bool { return sc.Name == rel.Schema }) {
		return "no USAGE on schema " + rel.Schema
	}
	switch {
	case rel.Kind == "p":
		return `a partitioned table: the API shows its partitions, unless its comment says {"partitions": "hidden"}`
	case rel.Partition:
		return "a partition: its partitioned table is shown whole"
	}
	return "left out"
}

// functionGraphQL is where s has the function, or why it does not.
func functionGraphQL(s *gqlschema.Schema, oid uint32) FunctionGraphQL {
	for _, name := range slices.Sorted(maps.Keys(s.Types)) {
		t := s.Types[name]
		if t.Role != gqlschema.RoleQuery && t.Role != gqlschema.RoleMutation && t.Role != gqlschema.RoleNode {
			continue
		}
		for _, f := range t.Fields {
			if f.Function != nil && f.Function.SQL.OID == oid {
				return FunctionGraphQL{Field: t.Name + "." + f.Name}
			}
		}
	}
	for _, o := range s.Omitted {
		if o.Function != nil && o.Function.OID == oid {
			return FunctionGraphQL{Missing: o.Reason.String()}
		}
	}
	if !slices.ContainsFunc(s.Catalog.Functions, func(f *reflect.Function) bool { return f.OID == oid }) {
		return FunctionGraphQL{Missing: "no USAGE on its schema"}
	}
	return FunctionGraphQL{Missing: "left out"}
}

// relationFlags are the usual mistakes: RLS on with no policy, a table anon may use with RLS off, a view anon
// may read that bypasses the RLS of its tables, a column a policy reads that a role it applies to may not
// select.
func relationFlags(rel *RelationAccess, roles []Role) []Flag {
	flags := []Flag{}
	table := rel.Kind == "r" || rel.Kind == "p"
	var bypass []string
	for _, r := range roles {
		if r.BypassRLS {
			bypass = append(bypass, r.Name)
		}
	}
	if table && rel.RLS && len(rel.Policies) == 0 {
		msg := "row level security is on and there is no policy: no role sees or changes a row"
		if len(bypass) > 0 {
			msg += " (but the owner and " + strings.Join(bypass, ", ") + ", which bypass it)"
		}
		flags = append(flags, Flag{Level: "warning", Message: msg})
	}
	if g, ok := rel.Grants["anon"]; ok && table && !rel.RLS {
		var can []string
		for _, p := range []struct {
			name string
			on   bool
		}{{"read", g.Select}, {"insert", g.Insert}, {"update", g.Update}, {"delete", g.Delete}} {
			if p.on {
				can = append(can, p.name)
			}
		}
		if len(can) > 0 {
			flags = append(flags, Flag{Level: "error", Message: fmt.Sprintf("anon (anyone with the anon key) may %s "+
				"every row: row level security is off", strings.Join(can, ", "))})
		}
	}
	if g := rel.Grants["anon"]; rel.Kind == "v" && g.Select && !rel.SecurityInvoker {
		flags = append(flags, Flag{Level: "warning", Message: "anon may read this view, which reads its tables with its " +
			"owner's rights: their row level security does not apply (create it with security_invoker = true, PostgreSQL 15+)"})
	}
	if table && rel.RLS {
		for _, p := range rel.Policies {
			for _, col := range p.Columns {
				c := rel.column(col)
				if c == nil {
					continue
				}
				for _, role := range roles {
					if !appliesTo(p, role.Name) || role.BypassRLS || c.Grants[role.Name].Select || !rel.readable(role.Name) {
						continue
					}
					flags = append(flags, Flag{Level: "warning", Message: fmt.Sprintf("policy %q reads column %s, which %s "+
						"may not select: which rows %s gets depends on a value its API does not show", p.Name, col, role.Name, role.Name)})
				}
			}
		}
	}
	return flags
}

func (rel *RelationAccess) column(name string) *ColumnAccess {
	for i := range rel.Columns {
		if rel.Columns[i].Name == name {
			return &rel.Columns[i]
		}
	}
	return nil
}

// readable reports whether role may select some column of the relation.
func (rel *RelationAccess) readable(role string) bool {
	for _, c := range rel.Columns {
		if c.Grants[role].Select {
			return true
		}
	}
	return false
}

// appliesTo reports whether a policy names role, or public. (A policy for a role the API role is a member of
// applies too; the API roles are rarely members of others, and the page lists the policy's roles as stored.)
func appliesTo(p Policy, role string) bool {
	return slices.Contains(p.Roles, role) || slices.Contains(p.Roles, "public")
}

// functionFlags: a SECURITY DEFINER function in anon's API runs with its owner's rights for anyone.
func functionFlags(fn *FunctionAccess) []Flag {
	flags := []Flag{}
	if fn.SecurityDefiner && fn.Execute["anon"] && fn.GraphQL["anon"].Field != "" {
		flags = append(flags, Flag{Level: "warning", Message: fmt.Sprintf("SECURITY DEFINER and in anon's API as %s: "+
			"anyone with the anon key runs it with its owner's rights, past row level security", fn.GraphQL["anon"].Field)})
	}
	return flags
}
