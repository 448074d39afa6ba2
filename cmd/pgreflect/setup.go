package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/dbsetup"
)

func runSetup(args []string, stdout, stderr io.Writer) error {
	var dbURL string
	var demo bool
	fs := newFlagSet("setup", stderr)
	fs.StringVar(&dbURL, "db-url", os.Getenv("PGREFLECT_DATABASE_URL"), "superuser URL of the database (env PGREFLECT_DATABASE_URL)")
	fs.BoolVar(&demo, "demo", false, "also load the demo schema into schema public")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: pgreflect setup --db-url SUPERUSER_URL")
		fmt.Fprintln(fs.Output(), "Creates the roles anon, authenticated, service_role and authenticator, the default grants of schema public, the schema-version event triggers and the auth.uid()/role()/email()/jwt() helpers the database lacks. Adds, never replaces or resets: existing roles, passwords, grants and helpers are kept. Safe to run again.")
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
	if demo {
		if err := dbsetup.LoadDemo(ctx, conn); err != nil {
			return err
		}
	}
	fmt.Fprintln(stdout, "The database is set up for pgreflect. Give the authenticator role a password (alter role authenticator password '...') and serve with its URL.")
	return nil
}
