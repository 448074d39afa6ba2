package schemadiff

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// Formats are the report formats Write accepts.
var Formats = []string{"text", "json", "markdown"}

// Write reports changes in a format: text for people, json for tools, markdown for a pull-request comment.
func Write(w io.Writer, format string, changes []Change) error {
	switch format {
	case "text":
		return writeText(w, changes)
	case "json":
		return writeJSON(w, changes)
	case "markdown":
		return writeMarkdown(w, changes)
	}
	return fmt.Errorf("unknown format %q: use %s", format, strings.Join(Formats, ", "))
}

func counts(changes []Change) map[Level]int {
	n := map[Level]int{Breaking: 0, Dangerous: 0, Safe: 0}
	for _, c := range changes {
		n[c.Level]++
	}
	return n
}

func summary(changes []Change) string {
	if len(changes) == 0 {
		return "No changes."
	}
	n := counts(changes)
	return fmt.Sprintf("%d changes: %d breaking, %d dangerous, %d safe.", len(changes), n[Breaking], n[Dangerous], n[Safe])
}

func writeText(w io.Writer, changes []Change) error {
	var b strings.Builder
	for _, c := range changes {
		role := ""
		if c.Role != "" {
			role = "[" + c.Role + "] "
		}
		fmt.Fprintf(&b, "%-9s %s%s\n", c.Level, role, c.Message)
		if c.Reason != "" {
			fmt.Fprintf(&b, "%-9s   because: %s\n", "", c.Reason)
		}
	}
	b.WriteString(summary(changes) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeJSON(w io.Writer, changes []Change) error {
	if changes == nil {
		changes = []Change{}
	}
	n := counts(changes)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Breaking  int      `json:"breaking"`
		Dangerous int      `json:"dangerous"`
		Safe      int      `json:"safe"`
		Changes   []Change `json:"changes"`
	}{n[Breaking], n[Dangerous], n[Safe], changes})
}

func writeMarkdown(w io.Writer, changes []Change) error {
	var b strings.Builder
	b.WriteString("### GraphQL schema changes\n\n")
	if Breaks(changes) {
		b.WriteString("**This migration breaks the GraphQL API.** ")
	}
	b.WriteString(summary(changes) + "\n")
	if len(changes) > 0 {
		b.WriteString("\n| level | role | change | database object |\n|---|---|---|---|\n")
		for _, c := range changes {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", c.Level, cell(c.Role), cell(c.Message), cell(c.Reason))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cell escapes what would end a table cell or start markup.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;").Replace(s)
}

// SnapshotFile is where `pgreflect check --snapshot DIR` keeps a role's snapshot (and the console's Drift page
// reads it).
func SnapshotFile(dir, role string) string { return filepath.Join(dir, role+".graphql") }
