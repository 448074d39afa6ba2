// Package client is a Go client for a pgreflect (or Supabase) project: GraphQL requests to /graphql/v1 and
// sign-in through /auth/v1 (ID-token and PKCE flows, sessions with refresh, the user, sign-out).
//
//	c := client.New("http://127.0.0.1:54321", anonKey)
//	session, err := c.Auth.SignInWithIDToken(ctx, client.IDToken{Provider: "google", Token: idToken, Nonce: rawNonce})
//	var out struct{ TodoCollection struct{ Edges []struct{ Node struct{ Task string } } } }
//	err = c.GraphQL(ctx, `{ todoCollection { edges { node { task } } } }`, nil, &out)
//
// After sign-in, GraphQL requests carry the user's access token (refreshed shortly before it expires), so row
// level security applies to the user. A Client is safe for concurrent use.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Client talks to one project.
type Client struct {
	baseURL string
	apiKey  string
	http    *http.Client
	// Auth signs users in and keeps their session.
	Auth *Auth
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the HTTP client (timeouts, transport).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// New returns a client for the project at baseURL (e.g. http://127.0.0.1:54321) using apiKey (the anon key
// for end-user programs).
func New(baseURL, apiKey string, opts ...Option) *Client {
	c := &Client{baseURL: strings.TrimRight(baseURL, "/"), apiKey: apiKey, http: &http.Client{Timeout: 30 * time.Second}}
	for _, o := range opts {
		o(c)
	}
	c.Auth = &Auth{c: c, now: time.Now}
	return c
}

// GraphQLError is one entry of a GraphQL response's errors.
type GraphQLError struct {
	Message string `json:"message"`
}

// GraphQLErrors is returned when the response carries errors; Data holds whatever data came with them.
type GraphQLErrors struct {
	Errors []GraphQLError
	Data   json.RawMessage
}

func (e *GraphQLErrors) Error() string {
	msgs := make([]string, len(e.Errors))
	for i, m := range e.Errors {
		msgs[i] = m.Message
	}
	return "graphql: " + strings.Join(msgs, "; ")
}

// HTTPError is a non-2xx answer that is not a GraphQL body (bad API key, bad token, oversized body, …).
type HTTPError struct {
	Status int
	Body   string
}

func (e *HTTPError) Error() string { return fmt.Sprintf("http %d: %s", e.Status, e.Body) }

// GraphQL runs query with variables (nil for none) and decodes data into out (nil to ignore). A response with
// errors yields *GraphQLErrors, after decoding whatever partial data came with them.
func (c *Client) GraphQL(ctx context.Context, query string, variables map[string]any, out any) error {
	body := map[string]any{"query": query}
	if variables != nil {
		body["variables"] = variables
	}
	token, err := c.Auth.accessToken(ctx)
	if err != nil {
		return err
	}
	raw, err := c.post(ctx, "/graphql/v1", body, token)
	if err != nil {
		return err
	}
	return decodeAnswer(raw, out)
}

// do sends a request with the project's headers; bearer defaults to the API key.
func (c *Client) do(ctx context.Context, method, path string, body any, bearer string) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+path, r)
	if err != nil {
		return nil, err
	}
	if bearer == "" {
		bearer = c.apiKey
	}
	req.Header.Set("apikey", c.apiKey)
	req.Header.Set("Authorization", "Bearer "+bearer)
	req.Header.Set("X-Client-Info", "pgreflect-go/1")
	req.Header.Set("X-Supabase-Api-Version", "2024-01-01")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return c.http.Do(req)
}

// post sends JSON and returns the body of a 2xx answer (GraphQL answers 200 with errors inside).
func (c *Client) post(ctx context.Context, path string, body any, bearer string) ([]byte, error) {
	resp, err := c.do(ctx, http.MethodPost, path, body, bearer)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, &HTTPError{Status: resp.StatusCode, Body: string(raw)}
	}
	return raw, nil
}

// sessionStore holds the signed-in session.
type sessionStore struct {
	mu      sync.Mutex
	session *Session
}
