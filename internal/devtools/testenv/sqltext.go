package testenv

import (
	"fmt"
	"strings"
)

// SQLText is a statement as its golden file holds it: the SQL, then each bound parameter on a line of its own
// ($n = "value", a text array as ["a", NULL]). The goldens of sqlgen (hand-built plans) and of resolve (the
// plans it builds from GraphQL requests) are the same files, so both write them this one way.
func SQLText(sql string, args []any) string {
	var b strings.Builder
	b.WriteString(sql)
	b.WriteString("\n-- parameters\n")
	for i, a := range args {
		switch a := a.(type) {
		case []*string:
			parts := make([]string, len(a))
			for j, v := range a {
				if v == nil {
					parts[j] = "NULL"
				} else {
					parts[j] = fmt.Sprintf("%q", *v)
				}
			}
			fmt.Fprintf(&b, "$%d = [%s]\n", i+1, strings.Join(parts, ", "))
		default:
			fmt.Fprintf(&b, "$%d = %q\n", i+1, a)
		}
	}
	return b.String()
}
