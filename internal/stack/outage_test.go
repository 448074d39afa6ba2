package stack_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pgreflect/pgreflect/client"
	"github.com/pgreflect/pgreflect/internal/stack"
	"github.com/pgreflect/pgreflect/pgtest"
	"github.com/pgreflect/pgreflect/stacktest"
	"github.com/pgreflect/pgreflect/testidp"
)

// The auth routes wait on their database under the request's budget too (most of the write timeout): with the
// database frozen, a token refresh is answered with the auth API's one 503 in time, not held.
func TestFrozenDatabaseAuthIs503InTime(t *testing.T) {
	cluster := pgtest.StartCluster(t)
	s := stacktest.New(t, stacktest.Options{DatabaseURL: cluster.URL("postgres"), SignIn: true,
		Limits: stack.Limits{WriteTimeout: 3 * time.Second}})
	claims := s.IDP.Claims(testidp.User{Sub: "sub-1", Email: "ada@example.com", EmailVerified: true})
	session, err := client.New(s.URL, s.Anon).Auth.SignInWithIDToken(context.Background(),
		client.IDToken{Provider: "google", Token: s.IDP.MintIDToken(claims, testidp.MintOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	pgtest.Freeze(t, cluster)
	start := time.Now()
	status, out, raw, err := send(http.MethodPost, s.URL+"/auth/v1/token?grant_type=refresh_token", s.Anon, "",
		map[string]any{"refresh_token": session.RefreshToken})
	if err != nil {
		t.Fatal(err)
	}
	// The budget is 2.7s of the 3s write timeout; 2s of slack for a loaded machine.
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("refresh answered after %s", elapsed)
	}
	if status != 503 || out["msg"] != "Database unavailable" || strings.Contains(string(raw), "timeout") {
		t.Errorf("refresh while the database is frozen: %d %s", status, raw)
	}
}
