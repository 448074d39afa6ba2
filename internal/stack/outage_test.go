package stack_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pgreflect/pgreflect/client"
	"github.com/pgreflect/pgreflect/internal/stack"
	"github.com/pgreflect/pgreflect/internal/stacktest"
	"github.com/pgreflect/pgreflect/pgtest"
	"github.com/pgreflect/pgreflect/testidp"
)

// The auth routes wait on their database under the request's budget too (most of the write timeout): with the
// database frozen, a token refresh is answered with the auth API's one 503 in time, not held; /ready checks the
// auth service's database beside the API's.
func TestFrozenDatabaseAuthIs503AndNotReady(t *testing.T) {
	cluster := pgtest.StartCluster(t)
	s := stacktest.New(t, stacktest.Options{DatabaseURL: cluster.URL("postgres"), SignIn: true,
		Limits: stack.Limits{WriteTimeout: 4 * time.Second}})
	claims := s.IDP.Claims(testidp.User{Sub: "sub-1", Email: "ada@example.com", EmailVerified: true})
	session, err := client.New(s.URL, s.Anon).Auth.SignInWithIDToken(context.Background(),
		client.IDToken{Provider: "google", Token: s.IDP.MintIDToken(claims, testidp.MintOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	ready := func() (int, string) {
		status, _, raw, err := send(http.MethodGet, s.URL+"/ready", "", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		return status, string(raw)
	}
	if status, body := ready(); status != 200 || body != `{"status":"ready","checks":{"auth":"ok","primary":"ok","roles":"ok"}}` {
		t.Errorf("/ready: %d %s", status, body)
	}
	pgtest.Freeze(t, cluster)
	start := time.Now()
	status, out, raw, err := send(http.MethodPost, s.URL+"/auth/v1/token?grant_type=refresh_token", s.Anon, "",
		map[string]any{"refresh_token": session.RefreshToken})
	if err != nil {
		t.Fatal(err)
	}
	// The budget is 3.6s of the 4s write timeout (above /ready's 3s); 1.4s of slack for a loaded machine.
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("refresh answered after %s", elapsed)
	}
	if status != 503 || out["msg"] != "Database unavailable" || strings.Contains(string(raw), "timeout") {
		t.Errorf("refresh while the database is frozen: %d %s", status, raw)
	}
	start = time.Now()
	if status, body := ready(); status != 503 || body != `{"status":"unavailable","checks":{"auth":"unavailable","primary":"unavailable","roles":"unavailable"}}` {
		t.Errorf("/ready while the database is frozen: %d %s", status, body)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("/ready answered after %s", elapsed)
	}
}
