package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/pgreflect/pgreflect/internal/lint"
)

// errLintErrors ends lint with exit status 1 once the report is written.
var errLintErrors = errors.New("lint errors")

func runLint(args []string, stdout, stderr io.Writer) error {
	var format string
	var roles roleList
	flags := newFlagSet("lint", stderr)
	sf := addSchemaFlags(flags, true)
	flags.Var(&roles, "role", "role whose schema to lint; repeatable (default: anon, authenticated and service_role)")
	flags.StringVar(&format, "format", "text", "report format: text or json")
	flags.Usage = func() {
		fmt.Fprintln(flags.Output(), "usage: pgreflect lint --db-url URL [--role ROLE]... [--format text|json]")
		fmt.Fprintln(flags.Output(), "Finds what makes the GraphQL API invalid or surprising, each with the object, the reason and the comment directive that fixes it. Exit status 1 when a finding is an error, 2 on bad input.")
		flags.PrintDefaults()
	}
	if err := parseFlags(flags, args); err != nil {
		return err
	}
	if format != "text" && format != "json" {
		return &inputError{fmt.Errorf("unknown format %q: use text or json", format)}
	}
	if sf.dbURL == "" {
		return &inputError{errors.New("--db-url (or PGREFLECT_DATABASE_URL) is required")}
	}
	ctx, db, done, err := sf.openDatabase(stderr)
	if err != nil {
		return err
	}
	defer done()
	var perRole [][]lint.Finding
	for _, role := range roles.or(apiRoles) {
		side, err := db.load(ctx, role)
		if err != nil {
			return &inputError{err}
		}
		perRole = append(perRole, lint.Schema(side.Generated))
	}
	findings := lint.Merge(perRole...)
	if format == "json" {
		if findings == nil {
			findings = []lint.Finding{} // an empty list, not null, for jq and friends
		}
		body, err := json.MarshalIndent(map[string]any{"findings": findings, "errors": lint.Errors(findings)}, "", "  ")
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(stdout, "%s\n", body); err != nil {
			return err
		}
	} else if err := lint.WriteText(stdout, findings); err != nil {
		return err
	}
	if lint.Errors(findings) > 0 {
		return errLintErrors
	}
	return nil
}
