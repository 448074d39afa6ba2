// Package lint finds what makes a generated GraphQL API invalid or surprising: enum labels that are not
// GraphQL names, fields that hide one another, relations that vanish behind a namesake, reserved names, keyless
// tables and views, and functions left out. Each finding names the database object, says why, and gives the
// comment directive (or the SQL) that fixes it.
//
// It reads the schema gqlschema builds for a role, the one the API answers with, and gqlschema's record of
// what it left out (Schema.Omitted), so the reasons are those of the code that took the decisions.
package lint

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pgreflect/pgreflect/gqlschema"
)

// Level says whether a finding breaks the API (Error) or only surprises its users (Warning).
type Level string

// The levels.
const (
	// Error: clients reject the schema, or a field answers something other than its name says.
	Error Level = "error"
	// Warning: a relation, column or function the database has and the API does not show.
	Warning Level = "warning"
)

// The rules, as findings name them.
const (
	RuleEnumLabel       = "enum-label"
	RuleDuplicateField  = "duplicate-field"
	RuleShadowed        = "shadowed-relation"
	RuleReservedName    = "reserved-name"
	RuleInvalidName     = "invalid-name"
	RuleNoPrimaryKey    = "no-primary-key"
	RuleFunctionLeftOut = "function-left-out"
)

// Finding is one problem of the generated API.
type Finding struct {
	Level Level  `json:"level"`
	Rule  string `json:"rule"`
	// Object is the database object at fault, as SQL names it: table public.film, type public.mpaa_rating.
	Object string `json:"object"`
	Reason string `json:"reason"`
	// Fix is the comment directive (or statement) to paste; empty when no statement fixes it.
	Fix string `json:"fix,omitempty"`
	// Roles are the API roles whose schema has the problem.
	Roles []string `json:"roles"`
}

// Schema lints the schema of one role.
func Schema(s *gqlschema.Schema) []Finding {
	var out []Finding
	out = append(out, enumLabels(s)...)
	out = append(out, duplicateFields(s)...)
	out = append(out, reservedNames(s)...)
	out = append(out, omissions(s)...)
	for i := range out {
		out[i].Roles = []string{s.Catalog.Role}
	}
	return out
}

// Merge joins the findings of several roles: one finding the roles share is listed once, with each role. The
// result is sorted: errors first, then by object and rule.
func Merge(perRole ...[]Finding) []Finding {
	var out []Finding
	index := map[string]int{}
	for _, findings := range perRole {
		for _, f := range findings {
			key := strings.Join([]string{string(f.Level), f.Rule, f.Object, f.Reason, f.Fix}, "\x00")
			if i, ok := index[key]; ok {
				for _, r := range f.Roles {
					if !slices.Contains(out[i].Roles, r) {
						out[i].Roles = append(out[i].Roles, r)
					}
				}
				continue
			}
			index[key] = len(out)
			f.Roles = slices.Clone(f.Roles)
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(levelRank(a.Level), levelRank(b.Level)), cmp.Compare(a.Object, b.Object),
			cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Reason, b.Reason))
	})
	return out
}

func levelRank(l Level) int {
	if l == Error {
		return 0
	}
	return 1
}

// Errors counts the findings of level Error.
func Errors(findings []Finding) int {
	n := 0
	for _, f := range findings {
		if f.Level == Error {
			n++
		}
	}
	return n
}

// WriteText prints findings for a terminal or a CI log: one block per finding, then a count.
func WriteText(w io.Writer, findings []Finding) error {
	var b strings.Builder
	for _, f := range findings {
		fmt.Fprintf(&b, "%s [%s] %s (%s)\n  %s\n", f.Level, f.Rule, f.Object, strings.Join(f.Roles, ", "), f.Reason)
		if f.Fix != "" {
			fmt.Fprintf(&b, "  fix: %s\n", strings.ReplaceAll(f.Fix, "\n", "\n       "))
		}
	}
	errors := Errors(findings)
	fmt.Fprintf(&b, "%d errors, %d warnings\n", errors, len(findings)-errors)
	_, err := io.WriteString(w, b.String())
	return err
}
