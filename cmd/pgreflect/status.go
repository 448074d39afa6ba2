package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/gqlschema"
	"github.com/pgreflect/pgreflect/internal/apisettings"
)

func runStatus(args []string, stdout, stderr io.Writer) error {
	var output string
	flags := newFlagSet("status", stderr)
	dir, workdir := addDirFlags(flags)
	flags.StringVar(&output, "o", "pretty", "output format: pretty or env (KEY=value lines)")
	flags.Usage = func() {
		fmt.Fprintln(flags.Output(), "usage: pgreflect status [--workdir DIR | --dir DIR] [-o env]")
		fmt.Fprintln(flags.Output(), "Prints the local project's URLs and keys (those of its last start when it is not running). Exit status: 0 when it runs, 3 when it does not, 1 when there is no project in DIR.")
		flags.PrintDefaults()
	}
	if err := parseFlags(flags, args); err != nil {
		return err
	}
	if output != "pretty" && output != "env" {
		return fmt.Errorf("unknown output format %q: use pretty or env", output)
	}
	abs, err := resolveProjectDir(*dir, *workdir)
	if err != nil {
		return err
	}
	env, err := readProjectEnv(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no project in %s: run `pgreflect start` with the same --workdir or --dir first", abs)
	}
	if err != nil {
		return err
	}
	pid, alive := readPID(abs)
	if output == "env" {
		for _, k := range envKeys {
			fmt.Fprintf(stdout, "%s=%s\n", k, env[k])
		}
		if !alive {
			fmt.Fprintf(stderr, "pgreflect is not running on %s; these are the values of its last start.\n", abs)
			return errNotRunning
		}
		return nil
	}
	if alive {
		fmt.Fprintf(stdout, "pgreflect is running (pid %d) on %s.\n\n", pid, abs)
	} else {
		fmt.Fprintf(stdout, "pgreflect is not running on %s; these are the values of its last start.\n\n", abs)
	}
	printProject(stdout, env)
	if !alive {
		return errNotRunning
	}
	printAPISettings(stdout, env["DB_URL"])
	return nil
}

// errNotRunning is status's answer when the project is not running, after it has printed it: exit status 3,
// as `systemctl status` and LSB init scripts answer for a program that is not running, so that scripts can
// test `pgreflect status` (1 is left for failures, such as a directory without a project).
var errNotRunning = errors.New("not running")

// printAPISettings shows the pg_graphql version the project follows and the newest this build offers (as
// pg_available_extensions shows installed_version and default_version), and the exposed schemas when the
// management API stored some: they beat supabase/config.toml's until reset, which a reader of the file would
// not guess.
func printAPISettings(w io.Writer, dbURL string) {
	installed := "unknown (database unreachable)"
	var stored apisettings.Stored
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if conn, err := pgx.Connect(ctx, dbURL); err == nil {
		if st, err := apisettings.Read(ctx, conn); err == nil {
			stored = st
			if st.GraphQLVersion != "" {
				installed = st.GraphQLVersion
			}
		}
		conn.Close(ctx)
	}
	fmt.Fprintf(w, "\npg_graphql version: %s (newest available: %s)\n", installed, gqlschema.NewestVersion)
	if stored.Schemas != nil {
		fmt.Fprintf(w, "Exposed schemas: %s (stored through the management API: they override [api] schemas of supabase/config.toml until reset)\n",
			strings.Join(stored.Schemas, ", "))
	}
}

// printProject prints a project's URLs and keys for people.
func printProject(w io.Writer, env map[string]string) {
	labels := map[string]string{
		"API_URL":          "API URL",
		"GRAPHQL_URL":      "GraphQL URL",
		"STUDIO_URL":       "Console (GraphiQL)",
		"DB_URL":           "DB URL",
		"PROJECT_REF":      "Project ref",
		"ANON_KEY":         "anon key",
		"SERVICE_ROLE_KEY": "service_role key",
		"JWT_SECRET":       "JWT secret",
		"MANAGEMENT_URL":   "Management URL",
		"MANAGEMENT_TOKEN": "Management token",
	}
	width := 0
	for _, l := range labels {
		width = max(width, len(l))
	}
	for _, k := range envKeys {
		fmt.Fprintf(w, "%*s: %s\n", width, labels[k], env[k])
	}
}
