package authapi

import (
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/pgreflect/pgreflect/internal/config"
)

// FuzzValidRedirect throws arbitrary redirect_to values at the allow-list. Whatever passes must be a URL
// whose http(s) host is one the configuration allows (the site, an allow-list entry, a loopback address):
// an open redirect hands the sign-in code to an attacker.
func FuzzValidRedirect(f *testing.F) {
	st, err := buildSettings(config.Auth{SiteURL: "https://site.example.com",
		AdditionalRedirectURLs: []string{"http://localhost:3000", "https://*.example.org/**", "myapp://**", "https://exact.example.net/cb"}}, nil)
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		"https://site.example.com/anything?x=1", "http://localhost:3000", "https://a.example.org/cb", "https://a.b.example.org/cb",
		"https://evil.com/?x=.example.org/", "https://exact.example.net/cb#frag", "myapp://login", "http://127.0.0.1:9999/x",
		"http://2130706433/", "https://evil.com\\@site.example.com/", "javascript:alert(1)", "//evil.com",
		"https://site.example.com.evil.com/", "https://a.example.org@evil.com/", "https://evil.com#.example.org/",
		"https://user:pw@a.example.org/x", "HTTPS://SITE.EXAMPLE.COM/", "http://[::1]:1/", "https://a.example.org:1@evil.com/",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !st.validRedirect(raw) {
			return
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("%q accepted but does not parse: %v", raw, err)
		}
		scheme := strings.ToLower(u.Scheme)
		if scheme != "http" && scheme != "https" {
			return
		}
		if host := strings.ToLower(u.Hostname()); !allowedHost(host) {
			t.Errorf("%q accepted: it leads to host %q", raw, host)
		}
	})
}

// allowedHost is the fuzz oracle: the hosts the configuration above lets a redirect go to. The glob's `*`
// matches the empty label too, so "https://.example.org/" passes (as in Supabase Auth, which matches with the
// same glob rules): that host is still example.org's, not an attacker's.
func allowedHost(h string) bool {
	switch h {
	case "site.example.com", "localhost", "exact.example.net":
		return true
	}
	if label, ok := strings.CutSuffix(h, ".example.org"); ok && !strings.ContainsAny(label, "./") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
