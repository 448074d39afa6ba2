package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/pgreflect/pgreflect/internal/schemadiff"
	"github.com/pgreflect/pgreflect/sdl"
)

// snapshotFile is where check keeps a role's snapshot.
func snapshotFile(dir, role string) string { return filepath.Join(dir, role+".graphql") }

func runCheck(args []string, stdout, stderr io.Writer) error {
	var dir, format string
	var update bool
	var roles roleList
	flags := newFlagSet("check", stderr)
	sf := addSchemaFlags(flags, true)
	flags.StringVar(&dir, "snapshot", "", "directory of the snapshots, one ROLE.graphql file per role")
	flags.Var(&roles, "role", "role to check; repeatable (default: anon, authenticated and service_role)")
	flags.BoolVar(&update, "update", false, "rewrite the snapshots from the database instead of checking them")
	flags.StringVar(&format, "format", "text", "report format: text, json or markdown (a pull-request comment)")
	flags.Usage = func() {
		fmt.Fprintln(flags.Output(), "usage: pgreflect check --db-url URL --snapshot DIR [--role ROLE]... [--update] [--format text|json|markdown]")
		fmt.Fprintln(flags.Output(), "Compares each role's schema with its snapshot. Exit status 1 when a change breaks clients, 2 on bad input.")
		flags.PrintDefaults()
	}
	if err := parseFlags(flags, args); err != nil {
		return err
	}
	if !slices.Contains(schemadiff.Formats, format) {
		return &inputError{fmt.Errorf("unknown format %q: use text, json or markdown", format)}
	}
	if sf.dbURL == "" || dir == "" {
		return &inputError{errors.New("--db-url (or PGREFLECT_DATABASE_URL) and --snapshot are required")}
	}
	if len(roles) == 0 {
		roles = apiRoles
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db, err := sf.open(ctx, sf.dbURL, stderr)
	if err != nil {
		return &inputError{err}
	}
	defer db.close()
	if update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return &inputError{err}
		}
	}
	var changes []schemadiff.Change
	for _, role := range roles {
		current, err := db.load(ctx, role)
		if err != nil {
			return &inputError{err}
		}
		path := snapshotFile(dir, role)
		if update {
			if err := os.WriteFile(path, sdl.Print(current.Schema), 0o644); err != nil {
				return &inputError{err}
			}
			fmt.Fprintf(stdout, "wrote %s\n", path)
			continue
		}
		snapshot, err := loadSchemaFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return &inputError{fmt.Errorf("no snapshot of role %s in %s: run with --update to write it", role, dir)}
		}
		if err != nil {
			return &inputError{err}
		}
		changes = append(changes, withRole(schemadiff.Compare(schemadiff.Side{Schema: snapshot}, current), role)...)
	}
	if update {
		return nil
	}
	schemadiff.Sort(changes)
	return report(stdout, format, changes)
}
