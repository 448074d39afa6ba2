package auth

import (
	"context"
	"errors"
	"io/fs"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/pgtest"
)

func newStore(t *testing.T) (*Store, *pgxpool.Pool) {
	t.Helper()
	pool, err := pgxpool.New(t.Context(), pgtest.NewDB(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := Migrate(t.Context(), pool); err != nil {
		t.Fatal(err)
	}
	return NewStore(pool), pool
}

func count(t *testing.T, pool *pgxpool.Pool, q string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(t.Context(), q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func TestMigrateConcurrentlyAndTwice(t *testing.T) {
	pool, err := pgxpool.New(t.Context(), pgtest.NewDB(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = Migrate(context.Background(), pool) }()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("concurrent migrate: %v", err)
		}
	}
	if err := Migrate(t.Context(), pool); err != nil {
		t.Fatal(err)
	}
	files, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool, `select count(*) from auth.schema_migrations where version_id > 0`); n != len(files) || n < 2 {
		t.Errorf("applied migrations recorded: %d of %d", n, len(files))
	}
	for _, table := range []string{"users", "identities", "sessions", "refresh_tokens", "mfa_amr_claims", "flow_state", "audit_log_entries", "pgreflect_config"} {
		if n := count(t, pool, `select count(*) from pg_class c join pg_namespace n on n.oid = c.relnamespace
			where n.nspname = 'auth' and c.relname = $1 and c.relrowsecurity`, table); n != 1 {
			t.Errorf("auth.%s missing or without row level security", table)
		}
	}
}

var alice = ExternalIdentity{Provider: "google", Subject: "alice-sub", Email: "Alice@Example.com", EmailVerified: true,
	Data: map[string]any{"name": "Alice"}}

func TestSignInWritesEverything(t *testing.T) {
	s, pool := newStore(t)
	g, err := s.SignIn(t.Context(), alice, SignInPolicy{EnableSignup: true}, uuid.Nil)
	if err != nil {
		t.Fatal(err)
	}
	if g.User.Email != "alice@example.com" || g.User.EmailConfirmedAt == nil || g.User.Role != "authenticated" ||
		g.User.Aud != "authenticated" || len(g.User.Identities) != 1 || g.User.UserMetadata["name"] != "Alice" {
		t.Errorf("user %+v", g.User)
	}
	if len(g.Session.AMR) != 1 || g.Session.AMR[0].Method != "oauth" || g.Session.AAL != "aal1" || !ValidRefreshTokenFormat(g.RefreshToken) {
		t.Errorf("session %+v token %q", g.Session, g.RefreshToken)
	}
	if n := count(t, pool, `select count(*) from auth.audit_log_entries where payload->>'action' in ('login', 'user_signedup')`); n != 2 {
		t.Errorf("audit entries: %d", n)
	}
	// Signing in again updates the identity and keeps the user.
	again := alice
	again.Data = map[string]any{"name": "Alice B."}
	g2, err := s.SignIn(t.Context(), again, SignInPolicy{}, uuid.Nil) // signups off: known users still sign in
	if err != nil {
		t.Fatal(err)
	}
	if g2.User.ID != g.User.ID || g2.User.UserMetadata["name"] != "Alice B." || g2.Session.ID == g.Session.ID {
		t.Errorf("second sign-in: %+v", g2.User)
	}
	if _, err := s.SignIn(t.Context(), ExternalIdentity{Provider: "google", Subject: "bob", Email: "bob@example.com", EmailVerified: true},
		SignInPolicy{}, uuid.Nil); !errors.Is(err, ErrSignupDisabled) {
		t.Errorf("new user with signups off: %v", err)
	}
	if n := count(t, pool, `select count(*) from auth.users`); n != 1 {
		t.Errorf("users: %d", n)
	}
}

func TestFlowStateSingleUse(t *testing.T) {
	s, pool := newStore(t)
	ctx := t.Context()
	f := &FlowState{ID: uuid.New(), ProviderType: "google", CodeChallengeMethod: "plain", CodeChallenge: "c"}
	if err := s.CreateFlowState(ctx, f, 300*time.Second); err != nil {
		t.Fatal(err)
	}
	// Two callbacks race for the same state: exactly one gets a code.
	var wg sync.WaitGroup
	codes := make([]string, 2)
	errs := make([]error, 2)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], errs[i] = s.IssueAuthCode(ctx, f.ID, alice, SignInPolicy{EnableSignup: true}, ProviderTokens{AccessToken: "pat"})
		}()
	}
	wg.Wait()
	ok := 0
	for i := range codes {
		if errs[i] == nil {
			ok++
		} else if !errors.Is(errs[i], ErrFlowStateAlreadyUsed) {
			t.Errorf("racing callback: %v", errs[i])
		}
	}
	if ok != 1 {
		t.Fatalf("%d callbacks got a code", ok)
	}
	code := codes[0] + codes[1]
	verify := func(want string) func(string, string) bool {
		return func(method, challenge string) bool { return method == "plain" && challenge == want }
	}
	if _, _, err := s.ExchangeAuthCode(ctx, code, 300*time.Second, verify("other")); !errors.Is(err, ErrBadCodeVerifier) {
		t.Errorf("bad verifier: %v", err)
	}
	g, pt, err := s.ExchangeAuthCode(ctx, code, 300*time.Second, verify("c"))
	if err != nil || pt.AccessToken != "pat" || g.User.Email != "alice@example.com" {
		t.Fatalf("exchange: %v %+v", err, pt)
	}
	if _, _, err := s.ExchangeAuthCode(ctx, code, 300*time.Second, verify("c")); !errors.Is(err, ErrFlowStateNotFound) {
		t.Errorf("second exchange: %v", err)
	}
	// An implicit flow is consumed by its sign-in, once.
	f2 := &FlowState{ID: uuid.New(), ProviderType: "google"}
	if err := s.CreateFlowState(ctx, f2, 300*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SignIn(ctx, alice, SignInPolicy{EnableSignup: true}, f2.ID); err != nil {
		t.Fatal(err)
	}
	before := count(t, pool, `select count(*) from auth.sessions`)
	if _, err := s.SignIn(ctx, alice, SignInPolicy{EnableSignup: true}, f2.ID); !errors.Is(err, ErrFlowStateNotFound) {
		t.Errorf("replayed implicit flow: %v", err)
	}
	if count(t, pool, `select count(*) from auth.sessions`) != before {
		t.Errorf("a replayed implicit flow opened a session")
	}
}

func TestExpiredFlowsLoseProviderTokens(t *testing.T) {
	s, pool := newStore(t)
	ctx := t.Context()
	f := &FlowState{ID: uuid.New(), ProviderType: "google", CodeChallengeMethod: "s256", CodeChallenge: "c"}
	if err := s.CreateFlowState(ctx, f, 300*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := s.IssueAuthCode(ctx, f.ID, alice, SignInPolicy{EnableSignup: true}, ProviderTokens{AccessToken: "a", RefreshToken: "r"}); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `update auth.flow_state set created_at = now() - interval '10 minutes'`); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateFlowState(ctx, &FlowState{ID: uuid.New(), ProviderType: "google"}, 300*time.Second); err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool, `select count(*) from auth.flow_state where provider_access_token is not null or provider_refresh_token is not null`); n != 0 {
		t.Errorf("expired flows still hold provider tokens: %d", n)
	}
	if _, err := pool.Exec(ctx, `update auth.flow_state set created_at = now() - interval '2 days' where id = $1`, f.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateFlowState(ctx, &FlowState{ID: uuid.New(), ProviderType: "google"}, 300*time.Second); err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool, `select count(*) from auth.flow_state where id = $1`, f.ID); n != 0 {
		t.Errorf("abandoned flow kept past retention")
	}
}

func TestConcurrentRefreshIsConsistent(t *testing.T) {
	s, pool := newStore(t)
	ctx := t.Context()
	g, err := s.SignIn(ctx, alice, SignInPolicy{EnableSignup: true}, uuid.Nil)
	if err != nil {
		t.Fatal(err)
	}
	policy := RefreshPolicy{Rotation: true}
	var wg sync.WaitGroup
	results := make([]*Grant, 5)
	errs := make([]error, 5)
	for i := range results {
		wg.Add(1)
		go func() { defer wg.Done(); results[i], errs[i] = s.Refresh(ctx, g.RefreshToken, policy) }()
	}
	wg.Wait()
	// Every racer gets the same new token (one rotates, the others see the parent of the live token).
	var token string
	for i := range results {
		if errs[i] != nil {
			t.Fatalf("racer %d: %v", i, errs[i])
		}
		if token == "" {
			token = results[i].RefreshToken
		} else if results[i].RefreshToken != token {
			t.Errorf("racers got different tokens: %s %s", token, results[i].RefreshToken)
		}
	}
	if n := count(t, pool, `select count(*) from auth.refresh_tokens where not revoked`); n != 1 {
		t.Errorf("live refresh tokens: %d", n)
	}
	if _, err := s.Refresh(ctx, "zzzzzzzzzzzz", policy); !errors.Is(err, ErrRefreshTokenNotFound) {
		t.Errorf("unknown token: %v", err)
	}
	// Rotation off: an old token may be reused without revoking anything.
	next, err := s.Refresh(ctx, token, RefreshPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Refresh(ctx, g.RefreshToken, RefreshPolicy{}); err != nil {
		t.Errorf("reuse with rotation off: %v", err)
	}
	if _, err := s.Refresh(ctx, next.RefreshToken, RefreshPolicy{}); err != nil {
		t.Errorf("live token with rotation off: %v", err)
	}
}

func TestPreAccountTakeoverIsBlocked(t *testing.T) {
	s, pool := newStore(t)
	ctx := t.Context()
	policy := SignInPolicy{EnableSignup: true}
	// The attacker registers the victim's address at a provider that does not verify it.
	attacker := ExternalIdentity{Provider: "sloppy", Subject: "attacker", Email: "victim@example.com", Data: map[string]any{"name": "Mallory"}}
	if _, err := s.SignIn(ctx, attacker, policy, uuid.Nil); !errors.Is(err, ErrEmailNeedsVerification) {
		t.Fatalf("unverified sign-up: %v", err)
	}
	// A second unverified registration of the same address (another account, no email) must not make the
	// address ambiguous for its owner.
	if _, err := s.SignIn(ctx, ExternalIdentity{Provider: "sloppy", Subject: "attacker-2", Email: "victim@example.com"}, policy, uuid.Nil); !errors.Is(err, ErrEmailNeedsVerification) {
		t.Fatalf("second unverified sign-up: %v", err)
	}
	// The owner signs in with a verified email: the account is theirs alone.
	victim := ExternalIdentity{Provider: "google", Subject: "victim", Email: "victim@example.com", EmailVerified: true, Data: map[string]any{"name": "Victor"}}
	g, err := s.SignIn(ctx, victim, policy, uuid.Nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.User.Identities) != 1 || g.User.Identities[0].Provider != "google" || g.User.UserMetadata["name"] != "Victor" ||
		g.User.EmailConfirmedAt == nil || g.User.AppMetadata["providers"].([]any)[0] != "google" {
		t.Errorf("owner's account: %+v", g.User)
	}
	if n := count(t, pool, `select count(*) from auth.identities where provider_id = 'attacker'`); n != 0 {
		t.Errorf("the attacker's identity survived")
	}
	// The attacker's provider cannot sign into it any more: it gets a fresh, still unverified account.
	if _, err := s.SignIn(ctx, attacker, policy, uuid.Nil); !errors.Is(err, ErrEmailNeedsVerification) {
		t.Fatalf("attacker again: %v", err)
	}
	if n := count(t, pool, `select count(*) from auth.identities where user_id = $1`, g.User.ID); n != 1 {
		t.Errorf("the owner's account has %d identities", n)
	}
}
