package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/client"
	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/internal/obs"
	"github.com/pgreflect/pgreflect/pgtest"
)

// liveSchema is a table whose rows each user sees only of their own, through a policy written the way Supabase
// recommends ((select auth.uid()), which Postgres evaluates once per statement), with subscriptions on.
const liveSchema = `
create table todo (id bigserial primary key, owner uuid not null default auth.uid(), task text not null);
alter table todo enable row level security;
create policy own_rows on todo for select using (owner = (select auth.uid()));
create policy add_own_rows on todo for insert with check (owner = (select auth.uid()));
grant select, insert, update, delete on todo to authenticated;
grant usage on sequence todo_id_seq to authenticated;
comment on table todo is e'@graphql({"features": ["subscriptions"], "totalCount": {"enabled": true}})';
`

const todoSubscription = `subscription { todoCollection(orderBy: [{id: AscNullsLast}]) { edges { node { id owner task } } } }`

type todoAnswer struct {
	TodoCollection struct {
		Edges []struct {
			Node struct {
				ID    string `json:"id"`
				Owner string `json:"owner"`
				Task  string `json:"task"`
			} `json:"node"`
		} `json:"edges"`
	} `json:"todoCollection"`
}

// userClient is a Go client signed in as a new user (a token minted with the project's secret).
func (f *fixture) userClient(user uuid.UUID, exp time.Time) *client.Client {
	f.t.Helper()
	c := client.New(f.srv.URL, f.anon)
	c.Auth.SetSession(&client.Session{AccessToken: f.userToken(jwt.MapClaims{"sub": user.String(), "role": "authenticated",
		"exp": exp.Unix()}), ExpiresAt: exp.Unix(), TokenType: "bearer"})
	return c
}

func (f *fixture) subscribe(c *client.Client, query string) *client.Subscription {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sub, err := c.Subscribe(ctx, query, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { sub.Close() })
	return sub
}

func nextTodos(t testing.TB, sub *client.Subscription, within time.Duration) (todoAnswer, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	var a todoAnswer
	err := sub.Next(ctx, &a)
	return a, err
}

func TestLiveQueryPushesOnlyWhatEachUserMaySee(t *testing.T) {
	f := newFixture(t, liveSchema)
	alice, bob := uuid.New(), uuid.New()
	ctx := context.Background()
	if _, err := f.admin.Exec(ctx, `insert into todo (owner, task) values ($1, 'alice 1'), ($2, 'bob 1')`, alice, bob); err != nil {
		t.Fatal(err)
	}
	hour := time.Now().Add(time.Hour)
	subA := f.subscribe(f.userClient(alice, hour), todoSubscription)
	subB := f.subscribe(f.userClient(bob, hour), todoSubscription)
	for name, sub := range map[string]*client.Subscription{"alice 1": subA, "bob 1": subB} {
		a, err := nextTodos(t, sub, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.TodoCollection.Edges) != 1 || a.TodoCollection.Edges[0].Node.Task != name {
			t.Fatalf("first answer of %s's subscription: %+v", name, a)
		}
	}
	// Both subscriptions share one statement (same document and role): the cohort is refreshed in one round
	// trip, each user's evaluation under their own claims.
	if st := f.server.live.Stats(); st.Cohorts != 1 || st.Subscriptions != 2 {
		t.Fatalf("hub stats = %+v, want 1 cohort of 2", st)
	}
	if _, err := f.admin.Exec(ctx, `insert into todo (owner, task) values ($1, 'alice 2')`, alice); err != nil {
		t.Fatal(err)
	}
	a, err := nextTodos(t, subA, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.TodoCollection.Edges) != 2 || a.TodoCollection.Edges[1].Node.Task != "alice 2" {
		t.Fatalf("alice's answer after her insert: %+v", a)
	}
	// Bob's answer did not change: nothing is pushed to him.
	if b, err := nextTodos(t, subB, 2500*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("bob was pushed %+v (err %v) after a change he cannot see", b, err)
	}
}

// TestLiveQueriesUnderLoadNeverLeakRows has many users subscribed to the same document while rows of all of
// them are written: every answer any of them receives holds only their own rows, and each ends up with all of
// their rows.
func TestLiveQueriesUnderLoadNeverLeakRows(t *testing.T) {
	// A page holds every row of a user (pg_graphql's default is 30).
	base := newFixture(t, liveSchema+`comment on schema public is e'@graphql({"max_rows": 1000})';`)
	// With the change feed: each commit refreshes the cohort, so answers are pushed while writes go on.
	f := base.secondServer(LiveLimits{}, true)
	ctx := context.Background()
	const users, writes = 50, 1500
	ids := make([]uuid.UUID, users)
	subs := make([]*client.Subscription, users)
	hour := time.Now().Add(time.Hour)
	for i := range ids {
		ids[i] = uuid.New()
		subs[i] = f.subscribe(f.userClient(ids[i], hour), todoSubscription)
	}
	want := make([]int, users)
	var leaks sync.Map
	var readers sync.WaitGroup
	done := make(chan struct{})
	counts := make([]int, users)
	var countsMu sync.Mutex
	for i, sub := range subs {
		readers.Go(func() {
			for {
				var a todoAnswer
				nctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
				err := sub.Next(nctx, &a)
				cancel()
				if err != nil {
					if errors.Is(err, context.DeadlineExceeded) {
						select {
						case <-done:
							return
						default:
							continue
						}
					}
					leaks.Store(fmt.Sprintf("user %d: %v", i, err), true)
					return
				}
				for _, e := range a.TodoCollection.Edges {
					if e.Node.Owner != ids[i].String() {
						leaks.Store(fmt.Sprintf("user %d saw row %s of %s", i, e.Node.ID, e.Node.Owner), true)
					}
				}
				countsMu.Lock()
				counts[i] = len(a.TodoCollection.Edges)
				countsMu.Unlock()
			}
		})
	}
	for w := range writes {
		u := rand.IntN(users)
		want[u]++
		if _, err := f.admin.Exec(ctx, `insert into todo (owner, task) values ($1, $2)`, ids[u], fmt.Sprint("task ", w)); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		countsMu.Lock()
		converged := fmt.Sprint(counts) == fmt.Sprint(want)
		countsMu.Unlock()
		if converged || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	close(done)
	readers.Wait()
	leaks.Range(func(k, _ any) bool { t.Error(k); return true })
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Fatalf("last answers hold %v rows per user, want %v", counts, want)
	}
}

// wsClient is a raw graphql-transport-ws connection, for the protocol's rules.
type wsClient struct {
	t    testing.TB
	conn *websocket.Conn
}

func (f *fixture) dialWS(protocols ...string) *wsClient {
	f.t.Helper()
	if protocols == nil {
		protocols = []string{wsProtocol}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(f.srv.URL, "http")+"/graphql/v1",
		&websocket.DialOptions{Subprotocols: protocols})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { conn.CloseNow() })
	return &wsClient{t: f.t, conn: conn}
}

func (c *wsClient) send(msg string) {
	c.t.Helper()
	if err := c.conn.Write(context.Background(), websocket.MessageText, []byte(msg)); err != nil {
		c.t.Fatal(err)
	}
}

// next reads the next message; a closed connection gives its close code and reason instead.
func (c *wsClient) next() (wsMessage, websocket.StatusCode, string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, b, err := c.conn.Read(ctx)
	if err != nil {
		var ce websocket.CloseError
		if errors.As(err, &ce) {
			return wsMessage{}, ce.Code, ce.Reason
		}
		c.t.Fatalf("read: %v", err)
	}
	var m wsMessage
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Fatalf("message %s: %v", b, err)
	}
	return m, 0, ""
}

func (c *wsClient) expectClose(code websocket.StatusCode, reason string) {
	c.t.Helper()
	for {
		m, got, why := c.next()
		if got == 0 {
			continue // messages before the close
		}
		if got != code || !strings.Contains(why, reason) {
			c.t.Fatalf("closed with %d %q, want %d %q (last message %+v)", got, why, code, reason, m)
		}
		return
	}
}

// message reads the next message, whatever its type; the connection must stay open.
func (c *wsClient) message() wsMessage {
	c.t.Helper()
	m, code, reason := c.next()
	if code != 0 {
		c.t.Fatalf("closed with %d %q, want a message", code, reason)
	}
	return m
}

func (c *wsClient) expect(typ string) wsMessage {
	c.t.Helper()
	m, code, reason := c.next()
	if code != 0 || m.Type != typ {
		c.t.Fatalf("got %+v (close %d %q), want a %s message", m, code, reason, typ)
	}
	return m
}

func (c *wsClient) init(payload string) {
	c.t.Helper()
	c.send(`{"type":"connection_init","payload":` + payload + `}`)
}

func TestWebSocketProtocolRules(t *testing.T) {
	f := newFixture(t, liveSchema)
	anonInit := fmt.Sprintf(`{"apikey":%q}`, f.anon)
	cases := []struct {
		name   string
		run    func(c *wsClient)
		code   websocket.StatusCode
		reason string
	}{
		{"no API key", func(c *wsClient) { c.init(`{}`) }, closeForbidden, "No API key found in request"},
		{"a wrong API key", func(c *wsClient) { c.init(`{"apikey":"nope"}`) }, closeForbidden, "Forbidden: "},
		{"a bad token", func(c *wsClient) {
			c.init(fmt.Sprintf(`{"apikey":%q,"Authorization":"Bearer not-a-jwt"}`, f.anon))
		}, closeForbidden, "Forbidden: "},
		{"an expired token under headers", func(c *wsClient) {
			tok := f.userToken(jwt.MapClaims{"sub": uuid.NewString(), "role": "authenticated", "exp": time.Now().Add(-time.Minute).Unix()})
			c.init(fmt.Sprintf(`{"headers":{"apikey":%q,"Authorization":"Bearer %s"}}`, f.anon, tok))
		}, closeForbidden, "Forbidden: "},
		{"subscribe before connection_init", func(c *wsClient) {
			c.send(`{"id":"1","type":"subscribe","payload":{"query":"subscription { todoCollection { totalCount } }"}}`)
		}, closeUnauthorized, "Unauthorized"},
		{"connection_init twice", func(c *wsClient) { c.init(anonInit); c.expect("connection_ack"); c.init(anonInit) },
			closeTooManyInits, "Too many initialisation requests"},
		{"a message that is not JSON", func(c *wsClient) { c.send(`hello`) }, closeBadRequest, "Invalid message received"},
		{"an unknown message type", func(c *wsClient) { c.init(anonInit); c.expect("connection_ack"); c.send(`{"type":"start"}`) },
			closeBadRequest, "Invalid message received"},
		{"a duplicate id", func(c *wsClient) {
			c.init(anonInit)
			c.expect("connection_ack")
			for range 2 {
				c.send(`{"id":"a","type":"subscribe","payload":{"query":"subscription { todoCollection { totalCount } }"}}`)
			}
		}, closeDuplicateID, "Subscriber for a already exists"},
		// A close frame holds a reason of 123 bytes at most: a longer one is cut, rather than no close sent.
		{"a duplicate id of 200 characters", func(c *wsClient) {
			c.init(anonInit)
			c.expect("connection_ack")
			for range 2 {
				c.send(`{"id":"` + strings.Repeat("é", 100) + `","type":"subscribe","payload":{"query":"subscription { todoCollection { totalCount } }"}}`)
			}
		}, closeDuplicateID, "Subscriber for " + strings.Repeat("é", 54)},
		{"no connection_init in time", func(c *wsClient) {}, closeInitTimeout, "Connection initialisation timeout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := f.dialWS()
			c.t = t
			tc.run(c)
			c.expectClose(tc.code, tc.reason)
		})
	}
	// A close comes after what was queued before it, even a message the writer had taken off the queue and not
	// yet written: the acknowledgement of an init sent together with a duplicate id arrives before the close.
	t.Run("the acknowledgement before a close", func(t *testing.T) {
		const sub = `{"id":"d","type":"subscribe","payload":{"query":"subscription { todoCollection { totalCount } }"}}`
		for range 30 {
			c := f.dialWS()
			c.t = t
			c.init(anonInit)
			c.send(sub)
			c.send(sub)
			c.expect("connection_ack")
			c.expectClose(closeDuplicateID, "Subscriber for d already exists")
		}
	})
	t.Run("another subprotocol", func(t *testing.T) {
		c := f.dialWS("graphql-ws", wsProtocol+"-not")
		c.t = t
		c.expectClose(closeBadProtocol, "Subprotocol not acceptable")
	})
}

// A handshake the WebSocket library refuses is answered in the API's error shape, with the library's status
// and reason.
func TestWebSocketHandshakeRefusals(t *testing.T) {
	f := newFixture(t, liveSchema)
	upgrade := map[string]string{"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13",
		"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol": wsProtocol}
	for _, c := range []struct {
		name    string
		headers map[string]string
		status  int
		message string
	}{
		{"an old protocol version", map[string]string{"Sec-WebSocket-Version": "8"}, 400, `unsupported WebSocket protocol version (only 13 is supported): \"8\"`},
		{"no key", map[string]string{"Sec-WebSocket-Key": ""}, 400, "WebSocket protocol violation: missing Sec-WebSocket-Key"},
		{"a key that is not 16 bytes", map[string]string{"Sec-WebSocket-Key": "c2hvcnQ="}, 400, "WebSocket protocol violation: invalid Sec-WebSocket-Key"},
		{"no Connection: Upgrade", map[string]string{"Connection": "keep-alive"}, 426, `WebSocket protocol violation: Connection header \"keep-alive\" does not contain Upgrade`},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, f.srv.URL+"/graphql/v1", nil)
			for _, h := range []map[string]string{upgrade, c.headers} {
				for k, v := range h {
					req.Header.Set(k, v)
				}
			}
			if c.headers["Sec-WebSocket-Key"] == "" {
				req.Header.Del("Sec-WebSocket-Key")
			}
			resp, err := testClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if want := `{"errors":[{"message":"` + c.message; resp.StatusCode != c.status || !strings.HasPrefix(string(body), want) ||
				resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("%d %s %s\nwant %d %s...", resp.StatusCode, resp.Header.Get("Content-Type"), body, c.status, want)
			}
		})
	}
	// The handshake still succeeds through the refusal's wrapper.
	c := f.dialWS()
	c.init(fmt.Sprintf(`{"apikey":%q}`, f.anon))
	c.expect("connection_ack")
}

func TestWebSocketAnswersEveryOperation(t *testing.T) {
	f := newFixture(t, liveSchema+`create table plain (id int primary key);`)
	c := f.dialWS()
	c.init(fmt.Sprintf(`{"apikey":%q}`, f.anon))
	c.expect("connection_ack")
	c.send(`{"type":"ping"}`)
	c.expect("pong")
	// A query is answered once, as over HTTP, then completed.
	c.send(`{"id":"q","type":"subscribe","payload":{"query":"{ todoCollection { totalCount } }"}}`)
	if m := c.expect("next"); m.ID != "q" || string(m.Payload) != `{"data": {"todoCollection": {"totalCount": 0}}}` {
		t.Fatalf("query answer %+v %s", m, m.Payload)
	}
	c.expect("complete")
	// A document that does not validate ends with an error message, as graphql-ws servers answer.
	c.send(`{"id":"bad","type":"subscribe","payload":{"query":"subscription { todoCollection { nope } }"}}`)
	if m := c.expect("error"); m.ID != "bad" || !strings.Contains(strings.ToLower(string(m.Payload)), "unknown field") {
		t.Fatalf("validation error %+v %s", m, m.Payload)
	}
	// A table without the feature has no subscription field.
	c.send(`{"id":"plain","type":"subscribe","payload":{"query":"subscription { plainCollection { totalCount } }"}}`)
	if m := c.expect("error"); !strings.Contains(string(m.Payload), "plainCollection") {
		t.Fatalf("subscription of a table without the feature: %s", m.Payload)
	}
	c.send(`{"id":"two","type":"subscribe","payload":{"query":"subscription { a: todoCollection { totalCount } b: todoCollection { totalCount } }"}}`)
	if m := c.expect("error"); !strings.Contains(string(m.Payload), "exactly one top level field") {
		t.Fatalf("two root fields: %s", m.Payload)
	}
	// Over HTTP, a subscription is refused with pg_graphql's text.
	if _, body := f.graphql(map[string]string{"apikey": f.anon}, `subscription { todoCollection { totalCount } }`); !strings.Contains(body, "Subscriptions are not supported") {
		t.Fatalf("subscription over POST: %s", body)
	}
	// A subscription runs until the client completes it; afterwards the hub holds nothing.
	c.send(`{"id":"s","type":"subscribe","payload":{"query":"subscription { todoCollection { totalCount } }"}}`)
	if m := c.expect("next"); m.ID != "s" {
		t.Fatalf("first answer %+v", m)
	}
	c.send(`{"id":"s","type":"complete"}`)
	f.expectNoSubscriptions()
}

func TestWebSocketTokenExpiryEndsTheConnection(t *testing.T) {
	f := newFixture(t, liveSchema)
	user := uuid.New()
	soon := time.Now().Add(2 * time.Second)
	tok := f.userToken(jwt.MapClaims{"sub": user.String(), "role": "authenticated", "exp": soon.Unix()})
	c := f.dialWS()
	c.init(fmt.Sprintf(`{"apikey":%q,"Authorization":"Bearer %s"}`, f.anon, tok))
	c.expect("connection_ack")
	c.send(`{"id":"s","type":"subscribe","payload":{"query":"subscription { todoCollection { totalCount } }"}}`)
	c.expect("next")
	c.expectClose(closeForbidden, "Forbidden: JWT expired")
	f.expectNoSubscriptions()

	// A fresh token sent in a ping before expiry keeps the connection; one of another user is refused.
	c = f.dialWS()
	tok = f.userToken(jwt.MapClaims{"sub": user.String(), "role": "authenticated", "exp": time.Now().Add(2 * time.Second).Unix()})
	c.init(fmt.Sprintf(`{"apikey":%q,"Authorization":"Bearer %s"}`, f.anon, tok))
	c.expect("connection_ack")
	fresh := f.userToken(jwt.MapClaims{"sub": user.String(), "role": "authenticated", "exp": time.Now().Add(time.Hour).Unix()})
	c.send(fmt.Sprintf(`{"type":"ping","payload":{"Authorization":"Bearer %s"}}`, fresh))
	c.expect("pong")
	time.Sleep(3 * time.Second)
	c.send(`{"type":"ping"}`)
	c.expect("pong")
	other := f.userToken(jwt.MapClaims{"sub": uuid.NewString(), "role": "authenticated", "exp": time.Now().Add(time.Hour).Unix()})
	c.send(fmt.Sprintf(`{"type":"ping","payload":{"Authorization":"Bearer %s"}}`, other))
	c.expectClose(closeForbidden, "same role and user")
}

func TestLiveQueryEndsWhenItsFieldOrGrantGoes(t *testing.T) {
	f := newFixture(t, liveSchema)
	ctx := context.Background()
	user := uuid.New()
	sub := f.subscribe(f.userClient(user, time.Now().Add(time.Hour)), `subscription { todoCollection { edges { node { id task } } } }`)
	if _, err := nextTodos(t, sub, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := f.admin.Exec(ctx, `alter table todo drop column task`); err != nil {
		t.Fatal(err)
	}
	_, err := nextTodos(t, sub, 10*time.Second)
	var gerr *client.GraphQLErrors
	if !errors.As(err, &gerr) || !strings.Contains(gerr.Error(), "Unknown field") {
		t.Fatalf("after the column was dropped: %v", err)
	}

	sub = f.subscribe(f.userClient(user, time.Now().Add(time.Hour)), `subscription { todoCollection { edges { node { id } } } }`)
	if _, err := nextTodos(t, sub, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := f.admin.Exec(ctx, `revoke select on todo from authenticated`); err != nil {
		t.Fatal(err)
	}
	_, err = nextTodos(t, sub, 10*time.Second)
	if !errors.As(err, &gerr) {
		t.Fatalf("after select was revoked: %v", err)
	}
}

// A change of the API's search path (the management API's exposed schemas) ends the subscriptions open under
// the old one, over both transports, so that a schema taken out of the API is out of reach of them too; setting
// the same search path again ends nothing.
func TestSearchPathChangeEndsOpenSubscriptions(t *testing.T) {
	f := newFixture(t, liveSchema)
	user := uuid.New()
	token := f.userToken(jwt.MapClaims{"sub": user.String(), "role": "authenticated", "exp": time.Now().Add(time.Hour).Unix()})
	c := f.dialWS()
	c.init(fmt.Sprintf(`{"apikey":%q,"Authorization":"Bearer %s"}`, f.anon, token))
	c.expect("connection_ack")
	c.send(`{"id":"s","type":"subscribe","payload":{"query":"subscription { todoCollection { totalCount } }"}}`)
	c.expect("next")

	q := url.Values{"query": {`subscription { todoCollection { totalCount } }`}}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, f.srv.URL+"/graphql/v1?"+q.Encode(), nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("apikey", f.anon)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	streamed := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(resp.Body)
		streamed <- string(b)
	}()
	testenv.Eventually(t, 10*time.Second, func() string {
		if st := f.server.live.Stats(); st.Subscriptions != 2 {
			return fmt.Sprintf("the hub holds %+v, want both subscriptions", st)
		}
		return ""
	})

	f.server.SetSearchPath(f.server.searchPath())
	c.send(`{"type":"ping"}`)
	c.expect("pong")
	select {
	case body := <-streamed:
		t.Fatalf("the event stream ended when the search path was set to what it was: %q", body)
	case <-time.After(200 * time.Millisecond):
	}

	f.server.SetSearchPath([]string{"public", "extensions"})
	c.expectClose(closeTryAgainLater, wsReasonSearchPathChanged)
	select {
	case body := <-streamed:
		if strings.Contains(body, "event: complete") || !strings.Contains(body, "event: next") {
			t.Errorf("the event stream: %q, want its first answer and no complete (so that the client reconnects)", body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the event stream went on under the old search path")
	}
	f.expectNoSubscriptions()
}

// expectNoSubscriptions waits for the hub to have forgotten every subscription.
func (f *fixture) expectNoSubscriptions() {
	f.t.Helper()
	testenv.Eventually(f.t, 10*time.Second, func() string {
		if st := f.server.live.Stats(); st.Subscriptions != 0 || st.Cohorts != 0 {
			return fmt.Sprintf("hub still holds %+v", st)
		}
		return ""
	})
}

func TestEventStreamSubscription(t *testing.T) {
	f := newFixture(t, liveSchema)
	user := uuid.New()
	if _, err := f.admin.Exec(t.Context(), `insert into todo (owner, task) values ($1, 'mine'), ($2, 'theirs')`, user, uuid.New()); err != nil {
		t.Fatal(err)
	}
	token := f.userToken(jwt.MapClaims{"sub": user.String(), "role": "authenticated", "exp": time.Now().Add(2 * time.Second).Unix()})
	get := func(headers map[string]string) *http.Response {
		t.Helper()
		q := url.Values{"query": {`subscription { todoCollection { edges { node { task } } } }`}}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, f.srv.URL+"/graphql/v1?"+q.Encode(), nil)
		req.Header.Set("Accept", "text/event-stream")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	if resp := get(nil); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("an event stream without an API key: %d", resp.StatusCode)
	}
	resp := get(map[string]string{"apikey": f.anon, "Authorization": "Bearer " + token})
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("event stream answered %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	start := time.Now()
	body, err := io.ReadAll(resp.Body) // ends when the token expires
	if err != nil {
		t.Fatal(err)
	}
	want := "event: next\ndata: {\"data\": {\"todoCollection\": {\"edges\": [{\"node\": {\"task\": \"mine\"}}]}}}\n\n"
	if string(body) != want {
		t.Fatalf("stream %q, want %q", body, want)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the stream outlived its token by %s", d)
	}
	f.expectNoSubscriptions()
}

// A GET asking for an event stream changes nothing, as any GET: a mutation is refused with 405 and runs not. A
// browser's EventSource sends GETs, with the key in ?apikey= if need be, so a link could otherwise write. The
// same mutation over POST is answered as one event.
func TestEventStreamOverGETRunsNoMutation(t *testing.T) {
	f := newFixture(t, liveSchema)
	if _, err := f.admin.Exec(t.Context(), `insert into todo (owner, task) values (gen_random_uuid(), 'kept')`); err != nil {
		t.Fatal(err)
	}
	const mutation = `mutation { updatetodoCollection(set: {task: "changed"}, atMost: 10) { affectedCount } }`
	q := url.Values{"query": {mutation}, "apikey": {f.service}}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, f.srv.URL+"/graphql/v1?"+q.Encode(), nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(string(body), "GET requests may only run queries") {
		t.Errorf("a mutation over GET as an event stream: %d %s", resp.StatusCode, body)
	}
	var task string
	if err := f.admin.QueryRow(t.Context(), `select task from todo`).Scan(&task); err != nil || task != "kept" {
		t.Fatalf("after the GET the row holds %q (%v)", task, err)
	}
	status, event := f.eventStream(map[string]string{"apikey": f.service}, fmt.Sprintf(`{"query": %q}`, mutation))
	if status != http.StatusOK || !strings.Contains(event, `"affectedCount": 1`) {
		t.Errorf("the mutation over POST as an event stream: %d %s", status, event)
	}
}

// TestLiveQueryResumesAfterTheDatabaseWasLost cuts every connection of the server to the database, as a
// restart does: subscribers are told (1013, try again later), and a client that reconnects resumes with the
// current answer.
func TestLiveQueryResumesAfterTheDatabaseWasLost(t *testing.T) {
	f := newFixture(t, liveSchema)
	ctx := context.Background()
	user := uuid.New()
	token := f.userToken(jwt.MapClaims{"sub": user.String(), "role": "authenticated", "exp": time.Now().Add(time.Hour).Unix()})
	raw := f.dialWS()
	raw.init(fmt.Sprintf(`{"apikey":%q,"Authorization":"Bearer %s"}`, f.anon, token))
	raw.expect("connection_ack")
	raw.send(`{"id":"s","type":"subscribe","payload":{"query":"subscription { todoCollection { edges { node { task } } } }"}}`)
	raw.expect("next")
	sub := f.subscribe(f.userClient(user, time.Now().Add(time.Hour)), todoSubscription)
	if _, err := nextTodos(t, sub, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	// The database refuses new connections and loses the open ones, as while it restarts.
	var db string
	if err := f.admin.QueryRow(ctx, `select current_database()`).Scan(&db); err != nil {
		t.Fatal(err)
	}
	// A database cannot refuse connections from a session of its own.
	server, err := pgx.Connect(ctx, pgtest.ServerURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close(context.Background()) })
	allowConnections := func(allow bool) error {
		_, err := server.Exec(context.Background(), fmt.Sprintf(`alter database %q with allow_connections %v`, db, allow))
		return err
	}
	if err := allowConnections(false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = allowConnections(true) })
	if _, err := f.admin.Exec(ctx, `select pg_terminate_backend(pid) from pg_stat_activity
		where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`); err != nil {
		t.Fatal(err)
	}
	if _, err := f.admin.Exec(ctx, `insert into todo (owner, task) values ($1, 'after the outage')`, user); err != nil {
		t.Fatal(err)
	}
	raw.expectClose(closeTryAgainLater, "database unavailable")
	if err := allowConnections(true); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 15*time.Second, func() string {
		a, err := nextTodos(t, sub, time.Second)
		if err != nil {
			return err.Error()
		}
		if len(a.TodoCollection.Edges) != 1 || a.TodoCollection.Edges[0].Node.Task != "after the outage" {
			return fmt.Sprintf("answer %+v", a)
		}
		return ""
	})
}

// TestChangesReachSubscribersOfEveryInstance runs two servers on one database: a write through one reaches a
// subscriber of the other.
func TestChangesReachSubscribersOfEveryInstance(t *testing.T) {
	f := newFixture(t, liveSchema)
	second := f.secondServer(LiveLimits{}, false)
	user := uuid.New()
	c := f.userClient(user, time.Now().Add(time.Hour))
	sub := f.subscribe(c, todoSubscription)
	if _, err := nextTodos(t, sub, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	token := f.userToken(jwt.MapClaims{"sub": user.String(), "role": "authenticated", "exp": time.Now().Add(time.Hour).Unix()})
	status, body := second.graphql(map[string]string{"apikey": f.anon, "Authorization": "Bearer " + token},
		`mutation { insertIntotodoCollection(objects: [{task: "through the other instance"}]) { affectedCount } }`)
	if status != 200 || !strings.Contains(body, `"affectedCount": 1`) {
		t.Fatalf("insert through the second instance: %d %s", status, body)
	}
	a, err := nextTodos(t, sub, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.TodoCollection.Edges) != 1 || a.TodoCollection.Edges[0].Node.Task != "through the other instance" {
		t.Fatalf("pushed answer %+v", a)
	}
}

// TestPublishingATableReloadsNoSchema: the change feed adding a table to its publication (when a subscription
// first reads it) is no schema change, so the server reloads nothing; it still hears of the publication's
// changes, and adds a table taken out of it again.
func TestPublishingATableReloadsNoSchema(t *testing.T) {
	f := newFixture(t, liveSchema)
	f.changes, f.live = f.dbURL, LiveLimits{PollInterval: time.Hour} // only the feed can bring a change
	f.server, f.srv = f.start(obs.NewMetrics())
	reloads := func() string { return f.metricLines("pgreflect_schema_reloads_total") }
	before := reloads()
	published := func() string {
		var n int
		if err := f.admin.QueryRow(t.Context(), `select count(*) from pg_publication_tables where pubname = 'pgreflect_live' and tablename = 'todo'`).Scan(&n); err != nil {
			return err.Error()
		}
		if n != 1 {
			return "todo is not published"
		}
		return ""
	}
	user := uuid.New()
	sub := f.subscribe(f.userClient(user, time.Now().Add(time.Hour)), todoSubscription)
	if _, err := nextTodos(t, sub, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, published)
	if _, err := f.admin.Exec(t.Context(), `alter publication pgreflect_live drop table todo`); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, published)
	if _, err := f.admin.Exec(t.Context(), `insert into todo (owner, task) values ($1, 'decoded')`, user); err != nil {
		t.Fatal(err)
	}
	if a, err := nextTodos(t, sub, 10*time.Second); err != nil || len(a.TodoCollection.Edges) != 1 {
		t.Fatalf("after a write: %+v %v", a, err)
	}
	if after := reloads(); after != before {
		t.Errorf("schema reloaded: %q, then %q", before, after)
	}
}

func TestLiveMetrics(t *testing.T) {
	f := newFixtureWith(t, liveSchema, obs.NewMetrics())
	sub := f.subscribe(f.userClient(uuid.New(), time.Now().Add(time.Hour)), todoSubscription)
	if _, err := nextTodos(t, sub, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, func() string {
		req, _ := http.NewRequest(http.MethodGet, f.srv.URL+"/metrics", nil)
		req.Header.Set("apikey", f.service)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		for _, want := range []string{"pgreflect_live_subscriptions 1\n", "pgreflect_live_cohorts 1\n", "pgreflect_live_pushes_total 1\n",
			"pgreflect_live_refreshes_total ", "pgreflect_live_refresh_duration_seconds_count ", "pgreflect_live_dropped_consumers_total 0\n"} {
			if !strings.Contains(string(b), want) {
				return "metrics lack " + want
			}
		}
		return ""
	})
}

// TestSlowConsumerIsDroppedWithoutStallingOthers subscribes a client that never reads to an answer that grows
// with every write: once its socket and its queue are full it is disconnected, while a subscriber beside it
// keeps receiving every change.
func TestSlowConsumerIsDroppedWithoutStallingOthers(t *testing.T) {
	f := newFixture(t, liveSchema)
	g := f.secondServer(LiveLimits{PollInterval: 20 * time.Millisecond, SendQueue: 4, MaxMessageBytes: 60 << 20}, false)
	user := uuid.New()
	token := f.userToken(jwt.MapClaims{"sub": user.String(), "role": "authenticated", "exp": time.Now().Add(time.Hour).Unix()})
	slow := g.dialWS()
	slow.init(fmt.Sprintf(`{"apikey":%q,"Authorization":"Bearer %s"}`, f.anon, token))
	slow.expect("connection_ack")
	slow.send(`{"id":"s","type":"subscribe","payload":{"query":"subscription { todoCollection { edges { node { task } } } }"}}`)
	reader := g.subscribe(g.userClient(user, time.Now().Add(time.Hour)), todoSubscription)
	if _, err := nextTodos(t, reader, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	// Each write makes every answer 1 MiB longer: a few fill the socket's buffers (4 MiB of send buffer, the
	// receive window of a client that reads nothing), four more the send queue. Bounded by writes, not time:
	// under load each write takes seconds to reach the reader.
	big := strings.Repeat("x", 1<<20)
	const maxWrites = 40
	var i int
	for ; g.server.live.Stats().Subscriptions > 1; i++ {
		if i == maxWrites {
			t.Fatalf("the client that reads nothing was not dropped after %d writes", i)
		}
		if _, err := f.admin.Exec(t.Context(), `insert into todo (owner, task) values ($1, $2)`, user, fmt.Sprint(i, big)); err != nil {
			t.Fatal(err)
		}
		// The reader keeps up: it sees this write within a few refreshes.
		a, err := nextTodos(t, reader, 10*time.Second)
		for err == nil && len(a.TodoCollection.Edges) < i+1 {
			a, err = nextTodos(t, reader, 10*time.Second)
		}
		if err != nil {
			t.Fatalf("the reading subscriber stalled after write %d: %v", i, err)
		}
	}
	t.Logf("the client that reads nothing was dropped after %d writes", i)
}

func TestSubscriptionLimits(t *testing.T) {
	f := newFixture(t, liveSchema)
	g := f.secondServer(LiveLimits{PerConnection: 2, MaxMessageBytes: 120, KeepAlive: 200 * time.Millisecond}, false)
	user := uuid.New()
	if _, err := f.admin.Exec(t.Context(), `insert into todo (owner, task) values ($1, $2)`, user, strings.Repeat("long ", 40)); err != nil {
		t.Fatal(err)
	}
	token := f.userToken(jwt.MapClaims{"sub": user.String(), "role": "authenticated", "exp": time.Now().Add(time.Hour).Unix()})
	c := g.dialWS()
	c.init(fmt.Sprintf(`{"apikey":%q,"Authorization":"Bearer %s"}`, f.anon, token))
	c.expect("connection_ack")
	// An answer over the message limit ends its subscription with an error, and frees its place.
	c.send(`{"id":"big","type":"subscribe","payload":{"query":"subscription { todoCollection { edges { node { task } } } }"}}`)
	if m := c.expect("error"); m.ID != "big" || !strings.Contains(string(m.Payload), "answer exceeds 120 bytes") {
		t.Fatalf("oversized answer: %+v %s", m, m.Payload)
	}
	for _, id := range []string{"a", "b"} {
		c.send(`{"id":"` + id + `","type":"subscribe","payload":{"query":"subscription { todoCollection { edges { node { id } } } }"}}`)
		c.expect("next")
	}
	c.send(`{"id":"c","type":"subscribe","payload":{"query":"subscription { todoCollection { edges { node { id } } } }"}}`)
	if m := c.expect("error"); m.ID != "c" || !strings.Contains(string(m.Payload), "too many subscriptions on this connection (at most 2)") {
		t.Fatalf("a third subscription: %+v %s", m, m.Payload)
	}
	// A client that answers no WebSocket ping (it reads nothing) is disconnected after the keep-alive interval.
	time.Sleep(time.Second)
	c.expectClose(closeGoingAway, "keep-alive ping not answered")
}
