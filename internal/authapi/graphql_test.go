package authapi

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/internal/httpapi"
	"github.com/pgreflect/pgreflect/resolve"
	"github.com/pgreflect/pgreflect/testidp"
)

// TestSignedInUserSeesOwnRowsThroughGraphQL runs the whole server (GraphQL endpoint with the auth routes
// mounted): users sign in, write and read through /graphql/v1 with their access tokens, and row level security
// keyed on auth.uid() keeps their rows apart. It runs with HS256 tokens and with an ES256 signing key.
func TestSignedInUserSeesOwnRowsThroughGraphQL(t *testing.T) {
	w := newWorld(t, nil)
	if _, err := w.pool.Exec(t.Context(), `
		comment on schema public is '@graphql({"inflect_names": true})';
		create table public.todo (id serial primary key, user_id uuid not null default auth.uid(), task text not null);
		alter table public.todo enable row level security;
		create policy own on public.todo for all to authenticated using (auth.uid() = user_id) with check (auth.uid() = user_id);
		grant select, insert on public.todo to authenticated;
		grant usage on sequence public.todo_id_seq to authenticated`); err != nil {
		t.Fatal(err)
	}
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	jwk, _ := json.Marshal(jose.JSONWebKey{Key: ec, KeyID: "es-key"})
	esKeys, err := w.keys.WithSigningKeys([]byte("[" + string(jwk) + "]"))
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(w.pool.Config().ConnString())
	u.User = url.User("authenticator")
	login, err := pgxpool.New(t.Context(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(login.Close)

	for _, c := range []struct {
		name string
		alg  string
	}{{"hs256", "HS256"}, {"es256", "ES256"}} {
		t.Run(c.name, func(t *testing.T) {
			if c.alg == "ES256" {
				w.keys = esKeys
			}
			svc := w.start(nil).svc // an auth service with these keys; the full server below mounts it
			api, err := httpapi.New(t.Context(), httpapi.Options{Pool: login, Engine: resolve.NewEngine(resolve.Options{Pool: login}), Keys: w.keys, AnonKey: w.anon, ServiceRoleKey: w.service,
				Auth: svc.AuthHandler(), Management: svc.ManagementHandler()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(api.Close)
			srv := httptest.NewServer(api)
			t.Cleanup(srv.Close)
			anonHeaders := map[string]string{"apikey": w.anon, "X-Supabase-Api-Version": "2024-01-01"}
			signIn := func(sub, email string) string {
				t.Helper()
				r := w.do(http.MethodPost, srv.URL+"/auth/v1/token?grant_type=id_token", map[string]any{"provider": "google",
					"id_token": w.idp.MintIDToken(w.idp.Claims(testidp.User{Sub: sub + c.name, Email: c.name + email, EmailVerified: true}), testidp.MintOptions{})},
					anonHeaders)
				if r.status != http.StatusOK {
					t.Fatalf("sign-in through the server: %d %s", r.status, r.raw)
				}
				if alg := tokenHeader(t, r.str("access_token"))["alg"]; alg != c.alg {
					t.Fatalf("access token alg %s, want %s", alg, c.alg)
				}
				return r.str("access_token")
			}
			gql := func(token, query string) string {
				t.Helper()
				r := w.do(http.MethodPost, srv.URL+"/graphql/v1", map[string]string{"query": query},
					map[string]string{"apikey": w.anon, "Authorization": "Bearer " + token})
				if r.status != http.StatusOK {
					t.Fatalf("graphql: %d %s", r.status, r.raw)
				}
				return string(r.raw)
			}
			alice, bob := signIn("alice", "alice@example.com"), signIn("bob", "bob@example.com")
			for token, task := range map[string]string{alice: "alice's task", bob: "bob's task"} {
				if got := gql(token, `mutation { insertIntoTodoCollection(objects: [{task: "`+task+`"}]) { affectedCount } }`); got != `{"data": {"insertIntoTodoCollection": {"affectedCount": 1}}}` {
					t.Fatalf("insert: %s", got)
				}
			}
			read := `{ todoCollection { edges { node { task } } } }`
			if got := gql(alice, read); got != `{"data": {"todoCollection": {"edges": [{"node": {"task": "alice's task"}}]}}}` {
				t.Errorf("alice reads %s", got)
			}
			if got := gql(bob, read); got != `{"data": {"todoCollection": {"edges": [{"node": {"task": "bob's task"}}]}}}` {
				t.Errorf("bob reads %s", got)
			}
			if got := gql(w.anon, read); got != `{"data": {"todoCollection": {"edges": []}}}` {
				t.Errorf("anon reads %s", got)
			}
			if _, err := w.pool.Exec(t.Context(), `truncate public.todo`); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// tokenHeader returns the JOSE header of a JWT without verifying it.
func tokenHeader(t *testing.T, token string) map[string]any {
	t.Helper()
	tok, _, err := jwt.NewParser().ParseUnverified(token, jwt.MapClaims{})
	if err != nil {
		t.Fatalf("parse %q: %v", token, err)
	}
	return tok.Header
}
