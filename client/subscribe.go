package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Subscription is a live query: Next returns its answers, the first one at once and then each new one whenever
// the answer changes. It speaks graphql-transport-ws (the graphql-ws library's protocol) on one WebSocket of its
// own and, when the server asks it to try again (a restart, the database away, an expired token), reconnects
// with a fresh token and resubscribes: the next answer is then the whole current one.
type Subscription struct {
	c         *Client
	payload   map[string]any
	answers   chan subscriptionEvent
	cancel    context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
}

type subscriptionEvent struct {
	data json.RawMessage
	err  error
}

// SubscriptionClosedError is the server's reason for ending a subscription's connection for good.
type SubscriptionClosedError struct {
	Code   int
	Reason string
}

func (e *SubscriptionClosedError) Error() string {
	return fmt.Sprintf("subscription closed by the server: %d %s", e.Code, e.Reason)
}

// maxResubscribes bounds the reconnections in a row that have not produced an answer.
const maxResubscribes = 6

// Subscribe starts a subscription of query (a GraphQL subscription document) with variables (nil for none). It
// returns once the server acknowledged the connection; Close ends it.
func (c *Client) Subscribe(ctx context.Context, query string, variables map[string]any) (*Subscription, error) {
	payload := map[string]any{"query": query}
	if variables != nil {
		payload["variables"] = variables
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &Subscription{c: c, payload: payload, answers: make(chan subscriptionEvent, 16), cancel: cancel, done: make(chan struct{})}
	conn, err := s.connect(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	go s.run(runCtx, conn)
	return s, nil
}

// Next waits for the next answer and decodes its data into out (nil to ignore). An answer with errors yields
// *GraphQLErrors after decoding whatever data came with it; the end of the subscription yields io.EOF.
func (s *Subscription) Next(ctx context.Context, out any) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case ev, ok := <-s.answers:
		if !ok {
			return io.EOF
		}
		if ev.err != nil {
			return ev.err
		}
		return decodeAnswer(ev.data, out)
	}
}

// Close ends the subscription.
func (s *Subscription) Close() error {
	s.closeOnce.Do(func() {
		s.cancel()
		<-s.done
	})
	return nil
}

func decodeAnswer(raw json.RawMessage, out any) error {
	var resp struct {
		Data   json.RawMessage `json:"data"`
		Errors []GraphQLError  `json:"errors"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return fmt.Errorf("graphql: decode response: %w", err)
	}
	if out != nil && len(resp.Data) > 0 && string(resp.Data) != "null" {
		if err := json.Unmarshal(resp.Data, out); err != nil {
			return fmt.Errorf("graphql: decode data: %w", err)
		}
	}
	if len(resp.Errors) > 0 {
		return &GraphQLErrors{Errors: resp.Errors, Data: resp.Data}
	}
	return nil
}

type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// connect opens the WebSocket, authenticates with the API key and the session's (refreshed) access token,
// and subscribes.
func (s *Subscription) connect(ctx context.Context) (*websocket.Conn, error) {
	token, err := s.c.Auth.accessToken(ctx)
	if err != nil {
		return nil, err
	}
	if token == "" {
		token = s.c.apiKey
	}
	url := "ws" + strings.TrimPrefix(s.c.baseURL, "http") + "/graphql/v1"
	conn, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		return nil, fmt.Errorf("subscribe: %w", err)
	}
	conn.SetReadLimit(64 << 20)
	fail := func(err error) (*websocket.Conn, error) {
		conn.CloseNow()
		return nil, err
	}
	init, _ := json.Marshal(map[string]string{"apikey": s.c.apiKey, "Authorization": "Bearer " + token})
	if err := writeMessage(ctx, conn, wsMessage{Type: "connection_init", Payload: init}); err != nil {
		return fail(err)
	}
	var ack wsMessage
	if err := readMessage(ctx, conn, &ack); err != nil {
		return fail(err)
	}
	if ack.Type != "connection_ack" {
		return fail(fmt.Errorf("subscribe: expected connection_ack, got %q", ack.Type))
	}
	payload, _ := json.Marshal(s.payload)
	if err := writeMessage(ctx, conn, wsMessage{ID: "1", Type: "subscribe", Payload: payload}); err != nil {
		return fail(err)
	}
	return conn, nil
}

func writeMessage(ctx context.Context, conn *websocket.Conn, m wsMessage) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return conn.Write(ctx, websocket.MessageText, b)
}

func readMessage(ctx context.Context, conn *websocket.Conn, m *wsMessage) error {
	_, b, err := conn.Read(ctx)
	if err != nil {
		var ce websocket.CloseError
		if errors.As(err, &ce) {
			return &SubscriptionClosedError{Code: int(ce.Code), Reason: ce.Reason}
		}
		return err
	}
	return json.Unmarshal(b, m)
}

// resumable reports whether a closed connection may be opened again: the server restarting or going away, the
// database being unavailable (1013), or the token having expired (4403: a fresh one is sent).
func resumable(err error) bool {
	var closed *SubscriptionClosedError
	if !errors.As(err, &closed) {
		return true // the connection broke without a close frame
	}
	switch closed.Code {
	case 1001, 1006, 1012, 1013, 4403:
		return true
	}
	return false
}

// run reads the subscription's messages, reconnecting when the server allows it, until it completes, fails
// or is closed.
func (s *Subscription) run(ctx context.Context, conn *websocket.Conn) {
	defer close(s.done)
	defer close(s.answers)
	attempts := 0
	for {
		err := s.read(ctx, conn, &attempts)
		conn.CloseNow()
		if err == nil || ctx.Err() != nil {
			return
		}
		for {
			if attempts >= maxResubscribes || !resumable(err) {
				s.deliver(ctx, subscriptionEvent{err: err})
				return
			}
			wait := time.Duration(100<<attempts) * time.Millisecond
			attempts++
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			if conn, err = s.connect(ctx); err == nil {
				break
			}
		}
	}
}

// read delivers the messages of one connection; nil means the subscription ended (complete or error).
func (s *Subscription) read(ctx context.Context, conn *websocket.Conn, attempts *int) error {
	for {
		var m wsMessage
		if err := readMessage(ctx, conn, &m); err != nil {
			return err
		}
		switch m.Type {
		case "next":
			*attempts = 0
			if !s.deliver(ctx, subscriptionEvent{data: m.Payload}) {
				return nil
			}
		case "error":
			var errs []GraphQLError
			_ = json.Unmarshal(m.Payload, &errs)
			s.deliver(ctx, subscriptionEvent{err: &GraphQLErrors{Errors: errs}})
			return nil
		case "complete":
			return nil
		case "ping":
			if err := writeMessage(ctx, conn, wsMessage{Type: "pong"}); err != nil {
				return err
			}
		}
	}
}

func (s *Subscription) deliver(ctx context.Context, ev subscriptionEvent) bool {
	select {
	case s.answers <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}
