package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/internal/documents"
)

// runDocuments is `pgreflect documents push|list`: the trusted documents of a database.
func runDocuments(args []string, stdout, stderr io.Writer) error {
	var dbURL string
	fs := newFlagSet("documents", stderr)
	fs.StringVar(&dbURL, "db-url", os.Getenv("PGREFLECT_DATABASE_URL"), "URL of the database, as the owner of pgreflect.trusted_documents (the role `pgreflect setup` ran as) or of schema auth (env PGREFLECT_DATABASE_URL)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: pgreflect documents push --db-url URL FILE|DIR...")
		fmt.Fprintln(fs.Output(), "       pgreflect documents list --db-url URL")
		fmt.Fprintln(fs.Output(), "push adds the trusted documents of manifests (Relay's persisted_queries.json, graphql-codegen's persisted-documents.json, Apollo's persisted-query manifest; every *.json under a DIR), all or none; list prints them as one manifest.")
		fs.PrintDefaults()
	}
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(positional) == 0 || positional[0] != "push" && positional[0] != "list" {
		fs.Usage()
		return errUsage
	}
	verb, paths := positional[0], positional[1:]
	if dbURL == "" {
		return &inputError{errors.New("--db-url is required (or PGREFLECT_DATABASE_URL)")}
	}
	if verb == "push" && len(paths) == 0 {
		return &inputError{errors.New("push needs a manifest file or directory")}
	}
	var docs []documents.Document
	for _, p := range paths {
		d, err := documents.Load(p)
		if err != nil {
			return &inputError{err}
		}
		docs = append(docs, d...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", redactURL(dbURL), err)
	}
	defer conn.Close(context.Background())
	if verb == "list" {
		all, err := documents.List(ctx, conn)
		if err != nil {
			return err
		}
		return documents.WriteManifest(stdout, all)
	}
	added, err := documents.Push(ctx, conn, docs)
	if err != nil {
		if errors.Is(err, documents.ErrIDReused) {
			return &inputError{err}
		}
		return err
	}
	fmt.Fprintf(stdout, "pushed %d documents, %d of them new\n", len(docs), added)
	return nil
}
