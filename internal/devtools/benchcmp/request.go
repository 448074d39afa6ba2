package benchcmp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/pgreflect/pgreflect/auth"
)

// Target is a contender's GraphQL endpoint.
type Target struct {
	Name string
	URL  string
	// Dialect selects the documents the target is sent.
	Dialect Dialect
}

// Request is one prepared HTTP request: built once, sent many times.
type Request struct {
	Body   []byte
	Header http.Header
}

// Tokens signs the JWTs of the comparison: the anon API key, and a user access token per account as
// Supabase Auth issues them (role authenticated, audience authenticated, sub the user id).
type Tokens struct {
	Keys    *auth.Keys
	AnonKey string
	// UserID maps an account to its user's id (benchdata.UserID).
	UserID func(account int) (string, error)
}

// User signs the access token of account's user.
func (t Tokens) User(account int) (string, error) {
	sub, err := t.UserID(account)
	if err != nil {
		return "", err
	}
	now := time.Now()
	return t.Keys.Sign(jwt.MapClaims{
		"sub": sub, "role": "authenticated", "aud": "authenticated",
		"iat": now.Unix(), "exp": now.Add(4 * time.Hour).Unix(),
	})
}

// Serves reports whether the target is asked q: PostGraphile is not asked what it has no dialect for (the
// extensions of issue 12 without a plugin), so those queries compare pgreflect with the ceiling only.
func (t Target) Serves(q Query) bool { return q.Document(t.Dialect) != "" }

// Request builds variant v of q for the target. Every contender gets the apikey header (PostGraphile ignores
// it); a user's request adds the bearer token, an anon request has none (pgreflect and the ceiling then use
// the API key's role, PostGraphile its default role).
func (t Target) Request(q Query, v int, tokens Tokens) (Request, error) {
	vars, account := q.Variant(v)
	body, err := Body(q.Document(t.Dialect), q.Name, vars)
	if err != nil {
		return Request{}, err
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("apikey", tokens.AnonKey)
	if q.As == AsUser {
		tok, err := tokens.User(account)
		if err != nil {
			return Request{}, err
		}
		h.Set("Authorization", "Bearer "+tok)
	}
	return Request{Body: body, Header: h}, nil
}

// Do sends one request and returns the body of a 200 answer.
func (t Target) Do(ctx context.Context, client *http.Client, r Request) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(r.Body))
	if err != nil {
		return nil, err
	}
	req.Header = r.Header
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return body, fmt.Errorf("%s: HTTP %d: %.300s", t.Name, resp.StatusCode, body)
	}
	return body, nil
}
