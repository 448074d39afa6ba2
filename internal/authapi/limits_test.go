package authapi

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/pgreflect/pgreflect/internal/config"
	"github.com/pgreflect/pgreflect/internal/obs"
)

// Past [auth.rate_limit], /token and /authorize answer 429 over_request_rate_limit to that client address, in
// both of Supabase Auth's error shapes, while another address and the other limits are untouched.
func TestRateLimits(t *testing.T) {
	w := newWorld(t, func(c *config.Auth) {
		c.RateLimit = config.RateLimit{TokenRefresh: 2, SignInSignUps: 3, Header: "X-Forwarded-For"}
	})
	refresh := func(client string, newShape bool) response {
		h := map[string]string{"apikey": w.anon, "X-Forwarded-For": "203.0.113.9, " + client}
		if newShape {
			h["X-Supabase-Api-Version"] = "2024-01-01"
		}
		return w.do(http.MethodPost, w.inst.apiURL+"/auth/v1/token?grant_type=refresh_token", map[string]string{"refresh_token": "abcdefghijkl"}, h)
	}
	for i := range 2 {
		if r := refresh("198.51.100.1", false); r.status != http.StatusBadRequest || r.str("error_code") != "refresh_token_not_found" {
			t.Fatalf("refresh %d within the limit: %d %s", i+1, r.status, r.raw)
		}
	}
	r := refresh("198.51.100.1", false)
	if r.status != http.StatusTooManyRequests || r.str("error_code") != "over_request_rate_limit" || r.str("msg") != "Request rate limit reached" ||
		r.body["code"] != float64(429) || r.header.Get("x-sb-error-code") != "over_request_rate_limit" {
		t.Errorf("refresh past the limit: %d %s", r.status, r.raw)
	}
	if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 || s > 300 {
		t.Errorf("Retry-After %q", r.header.Get("Retry-After"))
	}
	wantError(t, "refresh past the limit, 2024-01-01 shape", refresh("198.51.100.1", true), http.StatusTooManyRequests,
		"over_request_rate_limit", "Request rate limit reached")
	// Another address has its own count; the address is the entry the nearest proxy wrote, so a client that
	// puts a fresh address first gains nothing.
	if r := refresh("198.51.100.2", false); r.status != http.StatusBadRequest {
		t.Errorf("another client address: %d %s", r.status, r.raw)
	}
	// Sign-ins are counted apart from refreshes.
	r = w.api(http.MethodPost, "/token?grant_type=pkce", map[string]string{"auth_code": "x", "code_verifier": "y"}, "")
	if r.status == http.StatusTooManyRequests {
		t.Errorf("pkce grant refused by the refresh limit: %s", r.raw)
	}

	authorize := func() response {
		return w.do(http.MethodGet, w.inst.apiURL+"/auth/v1/authorize?provider=google", nil, nil)
	}
	for i := range 3 {
		if r := authorize(); r.status != http.StatusFound {
			t.Fatalf("authorize %d within the limit: %d %s", i+1, r.status, r.raw)
		}
	}
	if r := authorize(); r.status != http.StatusTooManyRequests || r.str("error_code") != "over_request_rate_limit" {
		t.Errorf("authorize past the limit: %d %s", r.status, r.raw)
	}
}

// A provider that cannot be reached is answered as Supabase Auth answers a provider it cannot set up (400
// validation_failed, "Unsupported provider: ..."), with the request id instead of the network error, which is
// logged under that id.
func TestUnreachableProvider(t *testing.T) {
	w := newWorld(t, func(c *config.Auth) {
		p := c.External["google"]
		p.URL = "http://127.0.0.1:1" // nothing listens on port 1
		c.External["google"] = p
	})
	for _, newShape := range []bool{false, true} {
		h := map[string]string{}
		if newShape {
			h["X-Supabase-Api-Version"] = "2024-01-01"
		}
		r := w.do(http.MethodGet, w.inst.apiURL+"/auth/v1/authorize?provider=google&redirect_to="+url.QueryEscape(tAppURL), nil, h)
		id := r.header.Get(obs.RequestIDHeader)
		msg := "Unsupported provider: provider unavailable (request id " + id + ")"
		if newShape {
			wantError(t, "2024-01-01 shape", r, http.StatusBadRequest, "validation_failed", msg)
		} else if r.status != http.StatusBadRequest || r.str("error_code") != "validation_failed" || r.str("msg") != msg {
			t.Errorf("unreachable provider: %d %s, want 400 validation_failed %q", r.status, r.raw, msg)
		}
		if id == "" || strings.Contains(string(r.raw), "127.0.0.1") || strings.Contains(string(r.raw), "refused") {
			t.Errorf("the answer shows internals or no id (%q): %s", id, r.raw)
		}
		var logged bool
		for _, l := range strings.Split(w.logs.String(), "\n") {
			if strings.Contains(l, `"request_id":"`+id+`"`) && strings.Contains(l, "connection refused") {
				logged = true
			}
		}
		if !logged {
			t.Errorf("the reason is not logged under %s:\n%s", id, w.logs.String())
		}
	}
}

// With the database gone, the auth routes answer one 503 in Supabase Auth's shape, carrying the request id as
// error_id, and log the reason under it.
func TestDatabaseUnavailable(t *testing.T) {
	w := newWorld(t, nil)
	w.pool.Close()
	r := w.do(http.MethodPost, w.inst.apiURL+"/auth/v1/token?grant_type=refresh_token", map[string]string{"refresh_token": "abcdefghijkl"},
		map[string]string{"apikey": w.anon})
	id := r.header.Get(obs.RequestIDHeader)
	if r.status != http.StatusServiceUnavailable || r.str("error_code") != "unexpected_failure" || r.str("msg") != "Database unavailable" ||
		id == "" || r.str("error_id") != id {
		t.Errorf("%d %s (request id %q)", r.status, r.raw, id)
	}
	if !strings.Contains(w.logs.String(), `"request_id":"`+id+`"`) || !strings.Contains(w.logs.String(), "closed pool") {
		t.Errorf("the reason is not logged under %s:\n%s", id, w.logs.String())
	}
}
