package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgreflect/pgreflect/internal/config"
	"github.com/pgreflect/pgreflect/internal/stacktest"
	"github.com/pgreflect/pgreflect/pgtest"
	"github.com/pgreflect/pgreflect/testidp"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

const appURL = "https://app.example.com/callback"

// newStack runs the whole server (GraphQL and sign-in with the test provider as "google") on a fresh database
// with a notes table under row level security.
func newStack(t *testing.T) *stacktest.Stack {
	t.Helper()
	return stacktest.New(t, stacktest.Options{
		SignIn: true,
		Configure: func(c *config.Auth) {
			c.SiteURL = "https://app.example.com"
			c.AdditionalRedirectURLs = []string{"https://app.example.com/**"}
		},
		Schema: `
		comment on schema public is '@graphql({"inflect_names": true})';
		create table note(id serial primary key, user_id uuid not null default auth.uid(), body text not null);
		alter table note enable row level security;
		create policy own on note for all to authenticated using (auth.uid() = user_id) with check (auth.uid() = user_id);
		grant all on note to authenticated; grant usage on sequence note_id_seq to authenticated;
		insert into note(user_id, body) values ('00000000-0000-0000-0000-0000000000ff', 'someone else');`,
	})
}

type notes struct {
	NoteCollection struct {
		Edges []struct{ Node struct{ Body string } }
	}
}

func TestIDTokenSessionAndGraphQL(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	c := New(s.URL, s.Anon)

	// Anonymous: RLS hides every note.
	var before notes
	if err := c.GraphQL(ctx, `{ noteCollection { edges { node { body } } } }`, nil, &before); err != nil {
		t.Fatal(err)
	}
	if len(before.NoteCollection.Edges) != 0 {
		t.Fatalf("anon sees %+v", before)
	}

	raw := "a-raw-nonce"
	sum := sha256.Sum256([]byte(raw))
	claims := s.IDP.Claims(testidp.User{Sub: "sub-1", Email: "ada@example.com", EmailVerified: true, Name: "Ada"})
	claims["nonce"] = hex.EncodeToString(sum[:])
	token := s.IDP.MintIDToken(claims, testidp.MintOptions{})
	if _, err := c.Auth.SignInWithIDToken(ctx, IDToken{Provider: "google", Token: token, Nonce: "wrong"}); err == nil {
		t.Fatal("a mismatched nonce signed in")
	} else if ae := (*AuthError)(nil); !errors.As(err, &ae) || ae.Status != 400 || ae.Message != "Nonces mismatch" {
		t.Fatalf("mismatched nonce: %v", err)
	}
	session, err := c.Auth.SignInWithIDToken(ctx, IDToken{Provider: "google", Token: token, Nonce: raw})
	if err != nil {
		t.Fatal(err)
	}
	if session.User == nil || session.User.Email != "ada@example.com" || session.RefreshToken == "" {
		t.Fatalf("session = %+v", session)
	}

	// Signed in: the user's insert and read go through RLS as the user.
	var inserted struct {
		InsertIntoNoteCollection struct{ AffectedCount int }
	}
	if err := c.GraphQL(ctx, `mutation($b: String!) { insertIntoNoteCollection(objects: [{body: $b}]) { affectedCount } }`,
		map[string]any{"b": "mine"}, &inserted); err != nil || inserted.InsertIntoNoteCollection.AffectedCount != 1 {
		t.Fatalf("insert: %+v %v", inserted, err)
	}
	var mine notes
	if err := c.GraphQL(ctx, `{ noteCollection { edges { node { body } } } }`, nil, &mine); err != nil {
		t.Fatal(err)
	}
	if len(mine.NoteCollection.Edges) != 1 || mine.NoteCollection.Edges[0].Node.Body != "mine" {
		t.Fatalf("user sees %+v", mine)
	}

	// A session near expiry is refreshed before the request; the old refresh token is spent.
	old := c.Auth.Session()
	near := *old
	near.ExpiresAt = time.Now().Add(30 * time.Second).Unix()
	c.Auth.SetSession(&near)
	user, err := c.Auth.User(ctx)
	if err != nil || user.Email != "ada@example.com" {
		t.Fatalf("user: %+v %v", user, err)
	}
	if c.Auth.Session().RefreshToken == old.RefreshToken {
		t.Fatal("the session was not refreshed")
	}

	// GraphQL errors come back typed, with partial data.
	err = c.GraphQL(ctx, `{ nope }`, nil, nil)
	var gerr *GraphQLErrors
	if !errors.As(err, &gerr) || gerr.Errors[0].Message != `Unknown field "nope" on type Query` {
		t.Fatalf("graphql error: %v", err)
	}

	if err := c.Auth.SignOut(ctx, "global"); err != nil {
		t.Fatal(err)
	}
	if c.Auth.Session() != nil {
		t.Fatal("session kept after sign-out")
	}
	// The logged-out session's access token no longer reaches /user.
	stale := New(s.URL, s.Anon)
	stale.Auth.SetSession(&near)
	if _, err := stale.Auth.User(ctx); err == nil {
		t.Fatal("a logged-out session still works")
	}
}

func TestPKCEFlowThroughTheProvider(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	c := New(s.URL, s.Anon)
	authURL, verifier, err := c.Auth.AuthorizeURL("google", AuthorizeOptions{RedirectTo: appURL,
		QueryParams: map[string]string{"access_type": "offline", "prompt": "consent"}})
	if err != nil {
		t.Fatal(err)
	}
	// Follow the redirects as a browser would, stopping at the application's callback.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	next := authURL
	for i := 0; i < 5 && !strings.HasPrefix(next, appURL); i++ {
		resp, err := noFollow.Get(next)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 3 {
			t.Fatalf("%s answered %d", next, resp.StatusCode)
		}
		loc, _ := resp.Location()
		next = loc.String()
	}
	u, _ := url.Parse(next)
	code := u.Query().Get("code")
	if !strings.HasPrefix(next, appURL) || code == "" {
		t.Fatalf("ended at %s", next)
	}
	if _, err := c.Auth.ExchangeCode(ctx, code, verifier+"x"); err == nil {
		t.Fatal("a wrong verifier was accepted")
	}
	session, err := c.Auth.ExchangeCode(ctx, code, verifier)
	if err != nil {
		t.Fatal(err)
	}
	if session.ProviderToken == "" || session.ProviderRefreshToken == "" {
		t.Fatalf("provider tokens missing with offline access: %+v", session)
	}
	if _, err := c.Auth.ExchangeCode(ctx, code, verifier); err == nil {
		t.Fatal("a code was exchanged twice")
	}
}

func TestConcurrentRequestsRefreshOnce(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	var refreshes atomic.Int32
	counting := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Query().Get("grant_type") == "refresh_token" {
			refreshes.Add(1)
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	c := New(s.URL, s.Anon, WithHTTPClient(counting))
	claims := s.IDP.Claims(testidp.User{Sub: "sub-2", Email: "bob@example.com", EmailVerified: true})
	if _, err := c.Auth.SignInWithIDToken(ctx, IDToken{Provider: "google", Token: s.IDP.MintIDToken(claims, testidp.MintOptions{})}); err != nil {
		t.Fatal(err)
	}
	near := *c.Auth.Session()
	near.ExpiresAt = time.Now().Unix()
	c.Auth.SetSession(&near)
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		go func() { errs <- c.GraphQL(ctx, `{ noteCollection { edges { cursor } } }`, nil, nil) }()
	}
	for i := 0; i < 8; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := refreshes.Load(); n != 1 || c.Auth.Session().RefreshToken == near.RefreshToken {
		t.Fatalf("%d refreshes for 8 concurrent requests on an expired session, want 1", n)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
