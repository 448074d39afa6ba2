package authapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/testidp"
)

func TestAdminListUsers(t *testing.T) {
	w := newWorld(t, nil)
	for i := range 3 {
		w.idTokenSignIn(testidp.User{Sub: fmt.Sprintf("admin-sub-%d", i), Email: fmt.Sprintf("user%d@example.com", i), EmailVerified: true})
	}

	r := w.api(http.MethodGet, "/admin/users?per_page=2", nil, w.service)
	if r.status != http.StatusOK {
		t.Fatalf("service_role: %d %s", r.status, r.raw)
	}
	var page struct {
		Users []struct {
			ID         string `json:"id"`
			Email      string `json:"email"`
			Identities []struct {
				ID       string `json:"id"`
				UserID   string `json:"user_id"`
				Provider string `json:"provider"`
				Email    string `json:"email"`
			} `json:"identities"`
		} `json:"users"`
		Aud string `json:"aud"`
	}
	if err := json.Unmarshal(r.raw, &page); err != nil {
		t.Fatal(err)
	}
	if page.Aud != "authenticated" || len(page.Users) != 2 {
		t.Fatalf("page 1: %s", r.raw)
	}
	// Newest first, each with its provider identity.
	if page.Users[0].Email != "user2@example.com" || page.Users[1].Email != "user1@example.com" {
		t.Errorf("order: %s, %s", page.Users[0].Email, page.Users[1].Email)
	}
	for _, u := range page.Users {
		if len(u.Identities) != 1 || u.Identities[0].Provider != "google" || u.Identities[0].UserID != u.ID ||
			!strings.HasPrefix(u.Identities[0].ID, "admin-sub-") || u.Identities[0].Email != u.Email {
			t.Errorf("identities of %s: %+v", u.Email, u.Identities)
		}
	}
	if got := r.header.Get("X-Total-Count"); got != "3" {
		t.Errorf("X-Total-Count %q", got)
	}
	link := r.header.Get("Link")
	if !strings.Contains(link, w.inst.apiURL+`/auth/v1/admin/users?page=2&per_page=2>; rel="next"`) ||
		!strings.Contains(link, `page=2&per_page=2>; rel="last"`) {
		t.Errorf("Link %q", link)
	}
	r = w.api(http.MethodGet, "/admin/users?page=2&per_page=2", nil, w.service)
	if err := json.Unmarshal(r.raw, &page); err != nil || len(page.Users) != 1 || page.Users[0].Email != "user0@example.com" {
		t.Errorf("page 2: %d %s", r.status, r.raw)
	}
	if strings.Contains(r.header.Get("Link"), `rel="next"`) {
		t.Errorf("the last page links to a next one: %q", r.header.Get("Link"))
	}
	r = w.api(http.MethodGet, "/admin/users?page=9", nil, w.service)
	if err := json.Unmarshal(r.raw, &page); r.status != http.StatusOK || err != nil || len(page.Users) != 0 || !strings.Contains(string(r.raw), `"users":[]`) {
		t.Errorf("past the end: %d %s", r.status, r.raw)
	}

	// Only the admin role: not anon, not a signed-in user, not a forged token, not without a token.
	session := w.idTokenSignIn(testidp.User{Sub: "admin-sub-0", Email: "user0@example.com", EmailVerified: true})
	forged, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"role": "service_role",
		"exp": time.Now().Add(time.Hour).Unix()}).SignedString([]byte("another-secret-with-at-least-32-characters"))
	wantError(t, "anon", w.api(http.MethodGet, "/admin/users", nil, w.anon), http.StatusForbidden, "not_admin", "User not allowed")
	wantError(t, "user", w.api(http.MethodGet, "/admin/users", nil, session.str("access_token")), http.StatusForbidden, "not_admin", "User not allowed")
	wantError(t, "forged", w.api(http.MethodGet, "/admin/users", nil, forged), http.StatusForbidden, "bad_jwt", "")
	r = w.do(http.MethodGet, w.inst.apiURL+"/auth/v1/admin/users", nil, map[string]string{"apikey": w.service, "X-Supabase-Api-Version": "2024-01-01"})
	wantError(t, "no bearer", r, http.StatusUnauthorized, "no_authorization", "")
	r = w.do(http.MethodGet, w.inst.apiURL+"/auth/v1/admin/users", nil, map[string]string{"Authorization": "Bearer " + w.service})
	if r.status != http.StatusUnauthorized {
		t.Errorf("without apikey: %d %s", r.status, r.raw)
	}
	for _, q := range []string{"page=0", "page=x", "per_page=0", "per_page=1001", "per_page=-1", "page=99999999999999999999"} {
		wantError(t, q, w.api(http.MethodGet, "/admin/users?"+q, nil, w.service), http.StatusBadRequest, "validation_failed", "")
	}
	if r := w.api(http.MethodPost, "/admin/users", map[string]any{"email": "x@example.com"}, w.service); r.status == http.StatusOK {
		t.Errorf("POST /admin/users: %d (read-only here)", r.status)
	}
}

// supabase-js's auth.admin.listUsers reads the users, and the next and last page from the Link header.
func TestSupabaseJSAdminListUsers(t *testing.T) {
	testenv.Node(t) // skips before any setup when Node is missing
	w := newWorld(t, nil)
	for i := range 3 {
		w.idTokenSignIn(testidp.User{Sub: fmt.Sprintf("js-sub-%d", i), Email: fmt.Sprintf("js%d@example.com", i), EmailVerified: true})
	}
	type page struct {
		Error      *jsError   `json:"error"`
		Emails     []string   `json:"emails"`
		Identities [][]string `json:"identities"`
		Aud        string     `json:"aud"`
		NextPage   *int       `json:"nextPage"`
		LastPage   int        `json:"lastPage"`
		Total      int        `json:"total"`
	}
	var out struct{ All, First, Second, Anon page }
	in := w.jsInput()
	in.ServiceKey = w.service
	runJS(t, "adminUsers", in, &out)

	if out.All.Error != nil || strings.Join(out.All.Emails, " ") != "js2@example.com js1@example.com js0@example.com" ||
		out.All.Aud != "authenticated" || out.All.Total != 3 || out.All.LastPage != 1 || out.All.NextPage != nil {
		t.Errorf("listUsers(): %+v", out.All)
	}
	if len(out.All.Identities) != 3 || len(out.All.Identities[0]) != 1 || out.All.Identities[0][0] != "google:js-sub-2" {
		t.Errorf("identities %v", out.All.Identities)
	}
	if out.First.Error != nil || len(out.First.Emails) != 2 || out.First.NextPage == nil || *out.First.NextPage != 2 ||
		out.First.LastPage != 2 || out.First.Total != 3 {
		t.Errorf("page 1 of 2: %+v", out.First)
	}
	if out.Second.Error != nil || strings.Join(out.Second.Emails, " ") != "js0@example.com" || out.Second.NextPage != nil ||
		out.Second.LastPage != 2 {
		t.Errorf("page 2 of 2: %+v", out.Second)
	}
	wantJSError(t, "listUsers with the anon key", out.Anon.Error, "AuthApiError", "not_admin", 403)
}
