package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/pgreflect/pgreflect/internal/schemadiff"
	"github.com/pgreflect/pgreflect/internal/sdl"
)

// errBreaking ends diff and check with exit status 1 once the report is written.
var errBreaking = errors.New("breaking changes")

// inputError is bad input to diff or check (an unreadable file, an unreachable database): exit status 2, so
// that CI tells it from a breaking change.
type inputError struct{ err error }

func (e *inputError) Error() string { return e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

// apiRoles are the roles diff and check compare when none is named.
var apiRoles = []string{"anon", "authenticated", "service_role"}

// roleList is a repeatable --role flag.
type roleList []string

// or is the roles named, else defaults.
func (r roleList) or(defaults []string) []string {
	if len(r) == 0 {
		return defaults
	}
	return r
}

func (r *roleList) String() string { return strings.Join(*r, ",") }
func (r *roleList) Set(v string) error {
	for _, role := range splitComma(v) {
		if !slices.Contains(*r, role) {
			*r = append(*r, role)
		}
	}
	return nil
}

func isDatabaseURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// parseInterspersed parses flags given before, between and after the positional arguments, which it returns.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, errUsage
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func runDiff(args []string, stdout, stderr io.Writer) error {
	var format string
	var roles roleList
	fs := newFlagSet("diff", stderr)
	sf := addSchemaFlags(fs, false)
	fs.Var(&roles, "role", "role whose schemas to compare when a side is a database; repeatable (default: anon, authenticated and service_role when both sides are databases, else anon)")
	fs.StringVar(&format, "format", "text", "report format: text, json or markdown (a pull-request comment)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: pgreflect diff OLD NEW [--role ROLE]... [--format text|json|markdown]")
		fmt.Fprintln(fs.Output(), "OLD and NEW are SDL files, introspection JSON files or database URLs. Exit status 1 when a change breaks clients, 2 on bad input.")
		fs.PrintDefaults()
	}
	sides, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(sides) != 2 {
		fmt.Fprintln(fs.Output(), "diff needs two arguments, OLD and NEW")
		fs.Usage()
		return errUsage
	}
	if !slices.Contains(schemadiff.Formats, format) {
		return &inputError{fmt.Errorf("unknown format %q: use text, json or markdown", format)}
	}
	databases := isDatabaseURL(sides[0]) && isDatabaseURL(sides[1])
	if !databases && (isDatabaseURL(sides[0]) || isDatabaseURL(sides[1])) && len(roles) > 1 {
		return &inputError{errors.New("a file is one role's schema: name one --role to compare it with the database")}
	}
	defaultRoles := []string{"anon"} // a file is one role's schema
	if databases {
		defaultRoles = apiRoles
	}
	ctx, cancel := context.WithTimeout(context.Background(), schemaCommandTimeout)
	defer cancel()
	old, err := openSide(ctx, sf, sides[0], stderr)
	if err != nil {
		return err
	}
	defer old.close()
	new, err := openSide(ctx, sf, sides[1], stderr)
	if err != nil {
		return err
	}
	defer new.close()
	if old.db == nil && new.db == nil {
		err := report(stdout, format, schemadiff.Compare(old.file, new.file))
		if err == nil || errors.Is(err, errBreaking) {
			filesOnlyNote(stdout, stderr, format)
		}
		return err
	}
	var changes []schemadiff.Change
	for _, role := range roles.or(defaultRoles) {
		o, err := old.load(ctx, role)
		if err != nil {
			return &inputError{err}
		}
		n, err := new.load(ctx, role)
		if err != nil {
			return &inputError{err}
		}
		changes = append(changes, withRole(schemadiff.Compare(o, n), role)...)
	}
	schemadiff.Sort(changes)
	return report(stdout, format, changes)
}

// filesOnlyNote says, after a report of two schema files, what only a comparison with a database finds
// (issue 22: a column made NOT NULL without a default passed as SAFE). It goes into a text or markdown report
// and to stderr beside JSON, which must stay one document.
func filesOnlyNote(stdout, stderr io.Writer, format string) {
	const note = "Both sides are schema files, so only what the SDL shows is compared. A database side sees more: " +
		"a column made NOT NULL without a default (inserts that omit it now fail, while the SDL only makes a " +
		"field non-null), the column, privilege or directive behind each change. Compare databases " +
		"(pgreflect diff OLD_DB_URL NEW_DB_URL) or a database with its snapshots (pgreflect check)."
	switch format {
	case "text":
		fmt.Fprintln(stdout, "Note: "+note)
	case "markdown":
		fmt.Fprintln(stdout, "\n> **Note:** "+note)
	default:
		fmt.Fprintln(stderr, "note: "+note)
	}
}

// withRole marks changes with the role they were found for.
func withRole(changes []schemadiff.Change, role string) []schemadiff.Change {
	for i := range changes {
		changes[i].Role = role
	}
	return changes
}

func report(stdout io.Writer, format string, changes []schemadiff.Change) error {
	if err := schemadiff.Write(stdout, format, changes); err != nil {
		return err
	}
	if schemadiff.Breaks(changes) {
		return errBreaking
	}
	return nil
}

// side is one argument of diff: a file read once, or a database read per role.
type side struct {
	file schemadiff.Side
	db   *dbSchemas
}

func openSide(ctx context.Context, sf *schemaFlags, arg string, stderr io.Writer) (*side, error) {
	if isDatabaseURL(arg) {
		db, err := sf.openInput(ctx, arg, stderr)
		if err != nil {
			return nil, err
		}
		return &side{db: db}, nil
	}
	s, err := loadSchemaFile(arg)
	if err != nil {
		return nil, &inputError{err}
	}
	return &side{file: schemadiff.Side{Schema: s}}, nil
}

func loadSchemaFile(path string) (*ast.Schema, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return sdl.Load(path, src)
}

func (s *side) load(ctx context.Context, role string) (schemadiff.Side, error) {
	if s.db == nil {
		return s.file, nil
	}
	return s.db.load(ctx, role)
}

func (s *side) close() {
	if s.db != nil {
		s.db.close()
	}
}
