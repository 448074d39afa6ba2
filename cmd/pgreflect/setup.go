package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/internal/dbsetup"
)

func runSetup(args []string, stdout, stderr io.Writer) error {
	var dbURL string
	var demo, grantExisting bool
	fs := newFlagSet("setup", stderr)
	fs.StringVar(&dbURL, "db-url", os.Getenv("PGREFLECT_DATABASE_URL"), "superuser URL of the database (env PGREFLECT_DATABASE_URL)")
	fs.BoolVar(&demo, "demo", false, "also load the demo schema into schema public")
	fs.BoolVar(&grantExisting, "grant-existing", false, "also grant anon, authenticated and service_role every privilege on the tables, views, sequences and routines that already exist in schema public (Supabase's default; without row level security the anon key may then write them), and print what it granted")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: pgreflect setup --db-url SUPERUSER_URL")
		fmt.Fprintln(fs.Output(), "Creates the roles anon, authenticated, service_role and authenticator, the default grants of schema public for new objects (existing ones only with --grant-existing), the schema-version event triggers and the auth.uid()/role()/email()/jwt() helpers the database lacks. Adds, never replaces or resets: existing roles, passwords, grants and helpers are kept. Safe to run again.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if dbURL == "" {
		return errors.New("--db-url is required")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("connect to the database: %w", err)
	}
	defer conn.Close(context.Background())
	if err := dbsetup.Apply(ctx, conn); err != nil {
		return err
	}
	warnForeignHelpers(ctx, conn, stderr)
	if err := existingGrants(ctx, conn, grantExisting, stdout, stderr); err != nil {
		return err
	}
	if demo {
		if err := dbsetup.LoadDemo(ctx, conn); err != nil {
			return err
		}
	}
	hasPassword, err := dbsetup.HasPassword(ctx, conn, "authenticator")
	if err != nil {
		return err
	}
	if hasPassword {
		// Issue 22: the hint to set one was followed on a `pgreflect start` cluster, cutting its server off.
		fmt.Fprintln(stdout, "The database is set up for pgreflect. The role authenticator has a password already, which servers of this PostgreSQL (a `pgreflect start`, say) may be logging in with: serve with it; changing it cuts them off until they are given the new one.")
		return nil
	}
	fmt.Fprintln(stdout, "The database is set up for pgreflect. Give the authenticator role a password (alter role authenticator password '...') and serve with its URL.")
	return nil
}

// existingGrants grants the objects that exist in schema public to the API roles when asked, printing each;
// otherwise it names those the API roles cannot use, and how to grant them.
func existingGrants(ctx context.Context, conn *pgx.Conn, grant bool, stdout, stderr io.Writer) error {
	if grant {
		granted, err := dbsetup.GrantExisting(ctx, conn)
		if err != nil {
			return err
		}
		if len(granted) == 0 {
			fmt.Fprintln(stdout, "--grant-existing: anon, authenticated and service_role had every privilege on the existing objects of schema public already.")
			return nil
		}
		fmt.Fprintln(stdout, "Granted anon, authenticated and service_role every privilege on these existing objects of schema public:")
		for _, o := range granted {
			fmt.Fprintln(stdout, "  "+o)
		}
		return nil
	}
	ungranted, err := dbsetup.Ungranted(ctx, conn)
	if err != nil {
		return err
	}
	if len(ungranted) > 0 {
		fmt.Fprintf(stderr, "note: nothing was granted on the objects that already exist in schema public; anon, authenticated or service_role lack privileges on %d of them (%s): grant each role what it needs, or run `pgreflect setup --grant-existing` to grant them everything as Supabase does (docs/existing-database.md)\n",
			len(ungranted), abbreviate(ungranted, 5))
	}
	return nil
}

// warnAnonWritable names the tables of the API's search path that the anon key can write with row level
// security off.
func warnAnonWritable(ctx context.Context, conn *pgx.Conn, searchPath []string, stderr io.Writer) {
	tables, err := dbsetup.AnonWritableWithoutRLS(ctx, conn, searchPath)
	if err != nil {
		fmt.Fprintln(stderr, "warning:", err)
		return
	}
	if len(tables) > 0 {
		fmt.Fprintf(stderr, "warning: row level security is off on %s, which the anon role may write: anyone with the anon key can insert, change or delete their rows; enable row level security with policies, or revoke insert, update, delete and truncate from anon (docs/existing-database.md)\n",
			strings.Join(tables, ", "))
	}
}

// abbreviate joins the first n items and says how many more there are.
func abbreviate(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}
