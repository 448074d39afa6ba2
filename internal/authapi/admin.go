package authapi

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/pgreflect/pgreflect/auth"
)

// adminRole is the one role Supabase's local stack sets in GOTRUE_JWT_ADMIN_ROLES.
const adminRole = "service_role"

// defaultPerPage and maxPerPage bound a page of GET /admin/users; Supabase Auth's default is 50.
const (
	defaultPerPage = 50
	maxPerPage     = 1000
)

// requireAdmin lets through a request whose Bearer token verifies and names the admin role, as Supabase Auth's
// admin routes do: the service_role key is such a token.
func (s *Service) requireAdmin(r *http.Request) error {
	token, ok := auth.BearerToken(r)
	if !ok {
		return newError(http.StatusUnauthorized, codeNoAuthorization, "This endpoint requires a valid Bearer token")
	}
	claims, err := s.opts.Keys.Verify(token)
	if err != nil {
		return newError(http.StatusForbidden, codeBadJWT, "invalid JWT: unable to parse or verify signature, "+
			strings.TrimPrefix(err.Error(), auth.ErrInvalidToken.Error()+": "))
	}
	if role, _ := claims["role"].(string); role != adminRole {
		return newError(http.StatusForbidden, codeNotAdmin, "User not allowed")
	}
	return nil
}

// adminUsers lists users with their identities (GET /admin/users?page=&per_page=), newest first, in Supabase
// Auth's shape: {"users": [...], "aud": "authenticated"} with X-Total-Count and Link headers.
func (s *Service) adminUsers(w http.ResponseWriter, r *http.Request) error {
	if err := s.requireAdmin(r); err != nil {
		return err
	}
	q := r.URL.Query()
	page, err := pageParam(q, "page", 1, 0)
	if err != nil {
		return err
	}
	perPage, err := pageParam(q, "per_page", defaultPerPage, maxPerPage)
	if err != nil {
		return err
	}
	if page > (1<<31)/perPage {
		return badRequest(codeValidationFailed, "Bad Pagination Parameters: page is too large")
	}
	users, total, err := s.store.Users(r.Context(), (page-1)*perPage, perPage)
	if err != nil {
		return err
	}
	setPaginationHeaders(w, r, s.opts.APIURL+"/auth/v1", page, perPage, total)
	if users == nil {
		users = []*auth.User{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"users": users, "aud": "authenticated"})
	return nil
}

// pageParam reads a positive integer query parameter; max 0 means unbounded.
func pageParam(q url.Values, name string, def, max int) (int, error) {
	raw := q.Get(name)
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || max > 0 && n > max {
		limit := ""
		if max > 0 {
			limit = fmt.Sprintf(" up to %d", max)
		}
		return 0, badRequest(codeValidationFailed, fmt.Sprintf("Bad Pagination Parameters: %s must be a positive integer%s", name, limit))
	}
	return n, nil
}

// setPaginationHeaders writes X-Total-Count and a Link header with the next page (when there is one) and the
// last page, on the public URL of the route.
func setPaginationHeaders(w http.ResponseWriter, r *http.Request, base string, page, perPage, total int) {
	last := max((total+perPage-1)/perPage, 1)
	link := func(p int, rel string) string {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(p))
		q.Set("per_page", strconv.Itoa(perPage))
		return fmt.Sprintf(`<%s%s?%s>; rel="%s"`, base, r.URL.Path, q.Encode(), rel)
	}
	var links []string
	if page < last {
		links = append(links, link(page+1, "next"))
	}
	links = append(links, link(last, "last"))
	w.Header().Set("Link", strings.Join(links, ", "))
	w.Header().Set("X-Total-Count", strconv.Itoa(total))
}
