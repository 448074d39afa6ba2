package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"syscall"

	"github.com/pgreflect/pgreflect/testidp"
)

// runTestIDP serves the test OpenID Connect provider for local development: point
// [auth.external.google] url at it and sign in without a real Google project.
func runTestIDP(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("testidp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:54329", "address to listen on (the issuer is http://ADDR)")
	clientID := fs.String("client-id", "local-client", "the OAuth client ID to accept")
	secret := fs.String("client-secret", "local-secret", "the OAuth client secret to accept")
	redirects := fs.String("redirect-uris", "", "comma-separated allowed redirect URIs (default: any)")
	interactive := fs.Bool("interactive", true, "show a consent page instead of consenting automatically")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		return errUsage
	}
	opts := testidp.Options{ClientID: *clientID, ClientSecret: *secret, Addr: *addr, Interactive: *interactive}
	if *redirects != "" {
		opts.RedirectURIs = strings.Split(*redirects, ",")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	s, err := testidp.New(opts)
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Fprintf(stdout, "test identity provider at %s (client id %s)\n", s.URL(), *clientID)
	fmt.Fprintf(stdout, "configure it in supabase/config.toml:\n\n[auth.external.google]\nenabled = true\nclient_id = %q\nsecret = %q\nurl = %q\n\n",
		*clientID, *secret, s.URL())
	fmt.Fprintf(stdout, "pages with the pre-built button or One Tap load %s/gsi/client instead of https://accounts.google.com/gsi/client\n", s.URL())
	<-ctx.Done()
	return nil
}
