package authapi

import (
	"net"
	"net/url"
	"strings"

	"github.com/pgreflect/pgreflect/internal/dberr"
)

// validRedirect applies Supabase Auth's redirect allow-list rules to a redirect_to value:
//  1. empty or unparsable: rejected;
//  2. same scheme and host as site_url, and the same port unless the host is a loopback name: accepted;
//  3. a decimal-integer host is rejected; an IP-literal host is accepted exactly when it is loopback; an
//     http(s) host name with characters outside letters, digits, '-' and '.' is rejected;
//  4. otherwise the URL without its fragment must match one of the allow-list globs (separators '.' and '/').
func (st *settings) validRedirect(raw string) bool {
	// A URL the flow state cannot store (NUL, not UTF-8) is no URL to send anyone to.
	if raw == "" || strings.ContainsAny(raw, " \t\r\n\\") || !dberr.StorableText(raw) {
		return false
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Opaque != "" && u.Host == "" && (u.Scheme == "http" || u.Scheme == "https") {
		return false
	}
	scheme := strings.ToLower(u.Scheme)
	httpLike := scheme == "http" || scheme == "https"
	host := strings.ToLower(u.Hostname())
	if httpLike && host == "" {
		return false
	}
	if site, err := url.Parse(st.SiteURL); err == nil && site.Host != "" {
		if scheme == strings.ToLower(site.Scheme) && host == strings.ToLower(site.Hostname()) &&
			(loopbackName(host) || effectivePort(u) == effectivePort(site)) {
			return true
		}
	}
	if host != "" {
		if allDigits(host) {
			return false
		}
		if ip := net.ParseIP(host); ip != nil {
			return ip.IsLoopback()
		}
		if httpLike && !plainHostname(host) {
			return false
		}
	}
	withoutFragment, _, _ := strings.Cut(raw, "#")
	for i, g := range st.allowGlobs {
		if g.Match(withoutFragment) && (!httpLike || hostMatches(st.AllowList[i], u.Host)) {
			return true
		}
	}
	return false
}

// hostMatches checks an http(s) redirect's host against the host part of the allow-list entry that matched the
// whole URL. The glob runs over the raw text, where `*` also swallows a '?' that ends the host:
// "https://*.example.org/**" matches "https://evil?.example.org/", whose host is "evil" (found by
// FuzzValidRedirect).
func hostMatches(pattern, host string) bool {
	_, rest, ok := strings.Cut(pattern, "://")
	if !ok {
		return true // an entry without an authority ("**") allows any host, as it always did
	}
	authority, _, _ := strings.Cut(rest, "/")
	g, err := compileAllowGlob(authority)
	return err == nil && g.Match(host)
}

// redirectTarget picks the flow's redirect: redirect_to if allowed, else the Referer if allowed, else site_url.
func (st *settings) redirectTarget(redirectTo, referer string) string {
	if st.validRedirect(redirectTo) {
		return redirectTo
	}
	if st.validRedirect(referer) {
		return referer
	}
	return st.SiteURL
}

func loopbackName(host string) bool {
	switch host {
	case "localhost", "127.0.0.1", "::1", "0.0.0.0":
		return true
	}
	return strings.HasSuffix(host, ".localhost")
}

func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

func plainHostname(h string) bool {
	for _, c := range h {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}
