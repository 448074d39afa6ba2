package resolve

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A role's statement_timeout comes back as ALTER ROLE stored it; the request's deadline is derived from it.
func TestParseTimeout(t *testing.T) {
	for in, want := range map[string]time.Duration{"8000": 8 * time.Second, "500ms": 500 * time.Millisecond,
		"8s": 8 * time.Second, "1.5min": 90 * time.Second, "2h": 2 * time.Hour, "0": 0, "250us": 250 * time.Microsecond} {
		if got, ok := parseTimeout(in); !ok || got != want {
			t.Errorf("parseTimeout(%q) = %s, %v; want %s", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "fast", "5 fortnights", "-1s"} {
		if got, ok := parseTimeout(bad); ok {
			t.Errorf("parseTimeout(%q) = %s, want not ok", bad, got)
		}
	}
}

// A failure that is neither the client's nor an outage is reported to the server as ErrInternal, with no body
// that could pass for a GraphQL answer; ExecuteAs gives the internal error's text.
func TestAnswerReportsAnInternalFailure(t *testing.T) {
	d := newTestDB(t, `create table t(id int primary key);`)
	// Claims that cannot be encoded for request.jwt.claims stand in for a bug.
	s := Session{Role: "service_role", Claims: map[string]any{"role": "service_role", "bad": make(chan int)}, SearchPath: []string{"public"}}
	body, err := d.engine.Answer(context.Background(), d.conn, s, Request{Query: `{ tCollection { edges { node { id } } } }`})
	if !errors.Is(err, ErrInternal) || body != nil {
		t.Errorf("Answer: %s, %v; want no body and ErrInternal", body, err)
	}
	if got := string(d.engine.ExecuteAs(context.Background(), d.conn, s, Request{Query: `{ __typename }`})); got != `{"errors": [{"message": "Internal server error"}]}` {
		t.Errorf("ExecuteAs: %s", got)
	}
}

// The request's deadline bounds its statements on the connection's socket (setSocketDeadline), and only
// them: the connection a request leaves is not cut when that deadline passes later.
func TestAnswerDeadlineEndsWithTheRequest(t *testing.T) {
	d := newTestDB(t, `create table t(id int primary key); insert into t values (1);`)
	s := Session{Role: "service_role", Claims: map[string]any{"role": "service_role"}, SearchPath: []string{"public"}}
	req := Request{Query: `{ tCollection { edges { node { id } } } }`}
	const want = `{"data": {"tCollection": {"edges": [{"node": {"id": 1}}]}}}`
	if body, err := d.engine.Answer(context.Background(), d.conn, s, req); err != nil || string(body) != want {
		t.Fatalf("Answer: %s, %v", body, err) // the schema loaded, so that the request below is one round trip
	}
	deadline := time.Now().Add(time.Second)
	if body, err := d.engine.Answer(WithDeadline(context.Background(), deadline), d.conn, s, req); err != nil || string(body) != want {
		t.Fatalf("Answer with a deadline: %s, %v", body, err)
	}
	time.Sleep(time.Until(deadline) + 100*time.Millisecond)
	var one int
	if err := d.conn.QueryRow(context.Background(), "select 1").Scan(&one); err != nil || one != 1 {
		t.Errorf("the connection after the request's deadline: %d, %v", one, err)
	}
}
