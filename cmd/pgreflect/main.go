// Command pgreflect serves a PostgreSQL database as a GraphQL API (compatible with Supabase's pg_graphql) with
// Supabase-Auth-compatible external-provider sign-in.
//
//	pgreflect start   a local project: its own PostgreSQL under --dir, set up, demo schema, keys, HTTP server
//	pgreflect serve   the HTTP server for an existing database
//	pgreflect setup   install roles, grants, event triggers and auth helpers into an existing database
//	pgreflect stop    stop a running `pgreflect start`
//	pgreflect status  show a local project's URLs and keys
//	pgreflect testidp serve a test OpenID Connect provider for local sign-in
//	pgreflect version print the version
//	pgreflect schema  print a role's GraphQL schema from a database
//	pgreflect diff    classify the changes between two schemas as breaking, dangerous or safe
//	pgreflect check   compare a database's schemas with committed snapshots
//	pgreflect lint    find what makes the API invalid or surprising
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"start", "start a local project (PostgreSQL, setup, demo schema, keys) and serve it", runStart},
		{"serve", "serve the API for an existing database", runServe},
		{"setup", "install pgreflect's roles, grants, event triggers and auth helpers into a database", runSetup},
		{"stop", "stop a running `pgreflect start`", runStop},
		{"status", "show a local project's URLs and keys", runStatus},
		{"testidp", "serve a test OpenID Connect provider for local sign-in", runTestIDP},
		{"version", "print the version", runVersion},
		{"schema", "print a role's GraphQL schema (SDL or introspection JSON) from a database", runSchema},
		{"diff", "classify the changes between two schemas (files or databases) as breaking, dangerous or safe", runDiff},
		{"check", "compare a database's schemas with committed snapshots, and the trusted documents with the schemas (CI)", runCheck},
		{"lint", "find what makes the GraphQL API invalid or surprising, with the directive that fixes each (CI)", runLint},
		{"documents", "push or list the trusted documents (Relay, graphql-codegen and Apollo manifests)", runDocuments},
	}
}

// errUsage marks an error already reported by the flag package (exit status 2).
var errUsage = errors.New("usage")

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version" || args[0] == "-v") {
		args = append([]string{"version"}, args[1:]...) // as git, docker and the Supabase CLI answer it
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(args[1:], stdout, stderr)
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errUsage):
			return 2
		case errors.Is(err, errBreaking), errors.Is(err, errLintErrors):
			return 1
		case errors.Is(err, errNotRunning):
			return 3
		case errors.As(err, new(*inputError)):
			fmt.Fprintf(stderr, "pgreflect %s: %v\n", c.name, err)
			return 2
		default:
			fmt.Fprintf(stderr, "pgreflect %s: %v\n", c.name, err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "pgreflect: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: pgreflect <command> [flags]")
	fmt.Fprintln(w)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-7s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run `pgreflect <command> -h` for the command's flags; `pgreflect --version` prints the version.")
}

// newFlagSet returns a flag set that reports errors to stderr and returns them instead of exiting.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("pgreflect "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args and rejects stray positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return errUsage
	}
	return nil
}

// flagSet reports whether the flag was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			found = true
		}
	})
	return found
}
