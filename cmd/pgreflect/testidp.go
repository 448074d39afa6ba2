package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/pgreflect/pgreflect/testidp"
)

// runTestIDP serves the test OpenID Connect provider for local development: point
// [auth.external.google] url at it and sign in without a real Google project.
func runTestIDP(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("testidp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:54329", "address to listen on (the issuer is http://ADDR); with --workdir, [auth.external.google] url's")
	clientID := fs.String("client-id", "local-client", "the OAuth client ID to accept; with --workdir, [auth.external.google] client_id's first")
	secret := fs.String("client-secret", "local-secret", "the OAuth client secret to accept; with --workdir, [auth.external.google] secret")
	workdir := fs.String("workdir", "", "project root whose supabase/config.toml points [auth.external.google] at this provider: its url, client_id and secret are the defaults of --addr, --client-id and --client-secret")
	redirects := fs.String("redirect-uris", "", "comma-separated allowed redirect URIs (default: any)")
	interactive := fs.Bool("interactive", true, "show a consent page instead of consenting automatically")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		return errUsage
	}
	source := "--addr"
	if *workdir != "" {
		// One source of truth (issue 22): the project's config.toml says where its Google is, so the provider,
		// the project and the example pages cannot disagree about the port.
		google, file, err := configuredGoogle(*workdir, stderr)
		if err != nil {
			return err
		}
		if !flagSet(fs, "addr") {
			*addr, source = google.addr, "[auth.external.google] url of "+file
		}
		if !flagSet(fs, "client-id") && google.clientID != "" {
			*clientID = google.clientID
		}
		if !flagSet(fs, "client-secret") && google.secret != "" {
			*secret = google.secret
		}
	}
	// Listening first gives a clear error when the port is taken, before anything else starts.
	if err := portFreeAt(*addr); err != nil {
		return fmt.Errorf("cannot listen on %s (%s): %w; is a test provider already running? Stop it, or give another address with --addr and the same in [auth.external.google] url", *addr, source, err)
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

// googleConfig is the test provider's part of a project's [auth.external.google].
type googleConfig struct {
	addr, clientID, secret string
}

// configuredGoogle reads [auth.external.google] of workdir's supabase/config.toml, which must point url at an
// http address of this machine.
func configuredGoogle(workdir string, stderr io.Writer) (googleConfig, string, error) {
	cfg, _, err := loadConfig(workdir, "", stderr)
	if err != nil {
		return googleConfig{}, "", err
	}
	file := filepath.Join(workdir, "supabase", "config.toml")
	google := cfg.Auth.External["google"]
	u, err := url.Parse(google.URL)
	if google.URL == "" || err != nil || u.Scheme != "http" || u.Port() == "" || u.Path != "" && u.Path != "/" {
		return googleConfig{}, "", fmt.Errorf("%s: [auth.external.google] url must be the test provider's address, such as http://127.0.0.1:54329, not %q", file, google.URL)
	}
	out := googleConfig{addr: u.Host, secret: google.Secret}
	if ids := google.ClientIDs(); len(ids) > 0 {
		out.clientID = ids[0]
	}
	return out, file, nil
}
