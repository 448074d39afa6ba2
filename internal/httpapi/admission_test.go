package httpapi

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/pgreflect/pgreflect/internal/admission"
	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/pgtest"
)

// slowSchema has a function that holds its connection for two seconds, granted to every API role.
const slowSchema = `create table t(id int primary key); insert into t values (1);
	create function slow() returns int language sql stable as $$ select 1 from pg_sleep(2) $$;
	grant select on t to anon, service_role; grant execute on function slow() to anon, service_role;`

const (
	slowQuery     = `{"query": "{ slow }"}`
	cheapDocument = `{ tCollection { edges { node { id } } } }`
	cheapQuery    = `{"query": "` + cheapDocument + `"}`
	cheapData     = `{"data": {"tCollection": {"edges": [{"node": {"id": 1}}]}}}`
)

// knownCheap sends the cheap query with key until the server knows its operation to be cheap. The first
// request of a role loads its schema, and on a loaded machine it may hold its connection past the slow
// threshold: the operation would then count against the shares it is meant to pass.
func knownCheap(t *testing.T, f *fixture, key string) {
	t.Helper()
	op := f.server.costs.Operation(cheapDocument, "")
	testenv.Eventually(t, 10*time.Second, func() string {
		if status, body, _ := postGraphQL(t, f.srv.URL, key, cheapQuery); status != 200 || body != cheapData {
			return fmt.Sprintf("cheap request: %d %s", status, body)
		}
		if class := f.server.costs.Class(op); class != admission.Cheap {
			return fmt.Sprintf("the cheap query is %s", class)
		}
		return ""
	})
}

// startSlow sends n slow requests with key at once and returns a wait for their answers' statuses.
func startSlow(t *testing.T, f *fixture, key string, n int) func() []int {
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { statuses[i], _, _ = postGraphQL(t, f.srv.URL, key, slowQuery) })
	}
	time.Sleep(300 * time.Millisecond) // for them to take their connections
	return func() []int { wg.Wait(); return statuses }
}

// A request that gets no connection within the pool timeout, every connection being in use, is answered 503
// "Database busy" with the request id, instead of waiting as long as the slow requests run.
func TestPoolTimeoutIsBusy503(t *testing.T) {
	f := newFixtureOn(t, pgtest.NewDB(t), slowSchema, 2, Options{PoolShare: 1, PoolTimeout: 500 * time.Millisecond})
	postGraphQL(t, f.srv.URL, f.anon, cheapQuery) // the schema and roles loaded
	wait := startSlow(t, f, f.anon, 2)
	start := time.Now()
	status, body, id := postGraphQL(t, f.srv.URL, f.anon, cheapQuery)
	if elapsed := time.Since(start); elapsed > 1500*time.Millisecond {
		t.Errorf("answered after %s with a pool timeout of 500ms", elapsed)
	}
	if want := `{"data":null,"errors":[{"message":"Database busy: no connection free within 500ms (request id ` + id + `)"}]}`; status != 503 || body != want {
		t.Errorf("got %d %s\nwant 503 %s", status, body, want)
	}
	if got := wait(); got[0] != 200 || got[1] != 200 {
		t.Errorf("the slow requests: %v", got)
	}
}

// A client that gives up while its request waits for a connection costs nothing once one comes: its request
// gives the connection back at once, unanswered and without running, and the requests after it are served.
func TestClientGoneWhileWaitingGivesTheConnectionBack(t *testing.T) {
	f := newFixtureOn(t, pgtest.NewDB(t), slowSchema, 2, Options{PoolShare: 1, PoolTimeout: 5 * time.Second})
	postGraphQL(t, f.srv.URL, f.anon, cheapQuery)
	wait := startSlow(t, f, f.anon, 2)
	impatient := &http.Client{Timeout: 300 * time.Millisecond}
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/graphql/v1", strings.NewReader(`{"query": "{ slow }"}`))
	req.Header.Set("apikey", f.anon)
	if resp, err := impatient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("answered %d while every connection was in use", resp.StatusCode)
	}
	if got := wait(); got[0] != 200 || got[1] != 200 {
		t.Errorf("the slow requests: %v", got)
	}
	// Had the request of the client that left run its two seconds of statement on the connection it got, one
	// connection would be held that long.
	deadline := time.Now().Add(time.Second)
	for f.pool.Stat().AcquiredConns() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := f.pool.Stat().AcquiredConns(); n != 0 {
		t.Errorf("%d connections still held a second after the slow requests", n)
	}
	for range 2 {
		if status, body, _ := postGraphQL(t, f.srv.URL, f.anon, cheapQuery); status != 200 || body != cheapData {
			t.Errorf("after the client that left: %d %s", status, body)
		}
	}
}

// One API key holds at most its share of the pool: the anon key's slow requests take two of the four
// connections, a third waits for one of them and is refused (429) when its wait passes the pool timeout,
// and the service_role key's cheap request is answered at once on a connection anon could not take.
func TestPoolShareKeepsConnectionsForOthers(t *testing.T) {
	f := newFixtureOn(t, pgtest.NewDB(t), slowSchema, 4, Options{PoolShare: 0.5, PoolTimeout: time.Second})
	postGraphQL(t, f.srv.URL, f.anon, cheapQuery)
	knownCheap(t, f, f.service)
	wait := startSlow(t, f, f.anon, 2)
	start := time.Now()
	status, body, id := postGraphQL(t, f.srv.URL, f.anon, slowQuery)
	if want := `{"data":null,"errors":[{"message":"Too many concurrent requests of this API key or token: at most 2 of them may use the database at once (request id ` + id + `)"}]}`; status != 429 || body != want {
		t.Errorf("a third slow anon request: %d %s\nwant 429 %s", status, body, want)
	}
	if elapsed := time.Since(start); elapsed < time.Second {
		t.Errorf("refused after %s, before the pool timeout of 1s", elapsed)
	}
	wait2 := startSlow(t, f, f.anon, 4) // as many as the pool has connections
	start = time.Now()
	status, body, _ = postGraphQL(t, f.srv.URL, f.service, cheapQuery)
	if elapsed := time.Since(start); elapsed > 500*time.Millisecond {
		t.Errorf("service_role's cheap request took %s while anon's slow ones ran", elapsed)
	}
	if status != 200 || body != cheapData {
		t.Errorf("service_role's cheap request: %d %s", status, body)
	}
	for _, got := range append(wait(), wait2()...) {
		if got != 200 && got != 429 {
			t.Errorf("slow anon requests: %v", got)
		}
	}
}

// A WebSocket's queries and an event stream's query count against their client's share as a POST's do, and
// wait no longer than PoolTimeout. Four slow queries on one anon socket take two of the four connections and
// two are refused with the share's message, while service_role's cheap request is answered at once and the
// socket stays open; a slow anon query asking for an event stream meanwhile is refused 429, before its stream
// starts, as a POST is.
func TestPoolShareCountsEveryTransport(t *testing.T) {
	f := newFixtureOn(t, pgtest.NewDB(t), slowSchema, 4, Options{PoolShare: 0.5, PoolTimeout: time.Second})
	postGraphQL(t, f.srv.URL, f.anon, cheapQuery)
	knownCheap(t, f, f.service)
	c := f.dialWS()
	c.init(fmt.Sprintf(`{"apikey":%q}`, f.anon))
	c.expect("connection_ack")
	for i := range 4 {
		c.send(fmt.Sprintf(`{"id":"slow%d","type":"subscribe","payload":{"query":"{ slow }"}}`, i))
	}
	time.Sleep(300 * time.Millisecond) // for them to take their connections
	start := time.Now()
	status, body, _ := postGraphQL(t, f.srv.URL, f.service, cheapQuery)
	if elapsed := time.Since(start); elapsed > 500*time.Millisecond {
		t.Errorf("service_role's cheap request took %s while anon's socket ran slow queries", elapsed)
	}
	if status != 200 || body != cheapData {
		t.Errorf("service_role's cheap request: %d %s", status, body)
	}
	const share = "Too many concurrent requests of this API key or token: at most 2 of them may use the database at once"
	status, event := f.eventStream(map[string]string{"apikey": f.anon}, slowQuery)
	if status != 429 || !strings.Contains(event, share) {
		t.Errorf("a slow anon query as an event stream: %d %s\nwant 429 %s", status, event, share)
	}
	answered, refused := 0, 0
	for answered+refused < 4 {
		m := c.message()
		switch m.Type {
		case "next":
			if string(m.Payload) != `{"data": {"slow": 1}}` {
				t.Errorf("answer of %s: %s", m.ID, m.Payload)
			}
			answered++
		case "error":
			if !strings.Contains(string(m.Payload), share) {
				t.Errorf("error of %s: %s", m.ID, m.Payload)
			}
			refused++
		}
	}
	if answered != 2 || refused != 2 {
		t.Errorf("the socket's slow queries: %d answered and %d refused, want 2 and 2", answered, refused)
	}
	c.send(`{"id":"after","type":"subscribe","payload":{"query":"{ tCollection { edges { node { id } } } }"}}`)
	for {
		if m := c.message(); m.ID == "after" {
			if m.Type != "next" || string(m.Payload) != cheapData {
				t.Errorf("a query after the refusals: %+v %s", m, m.Payload)
			}
			break
		}
	}
}

// With ShareByAddress one client address holds at most its share too, whatever keys it sends: 127.0.0.2's
// slow requests with two keys take two connections and its third waits, while 127.0.0.1 is answered at once.
func TestPoolShareByAddress(t *testing.T) {
	f := newFixtureOn(t, pgtest.NewDB(t), slowSchema, 4, Options{PoolShare: 0.5, ShareByAddress: true, PoolTimeout: time.Second})
	postGraphQL(t, f.srv.URL, f.anon, cheapQuery)
	knownCheap(t, f, f.service)
	from := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}).DialContext}}
	post := func(client *http.Client, key, body string) (int, string) {
		return sendWith(t, client, f.srv.URL, map[string]string{"apikey": key}, body)
	}
	var wg sync.WaitGroup
	for _, key := range []string{f.anon, f.service} {
		wg.Go(func() { post(from, key, slowQuery) })
	}
	time.Sleep(300 * time.Millisecond)
	if status, body := post(from, f.service, slowQuery); status != 429 || !strings.Contains(body, "Too many concurrent requests of this client address: at most 2") {
		t.Errorf("a third slow request from 127.0.0.2: %d %s", status, body)
	}
	start := time.Now()
	if status, body := post(testClient, f.service, cheapQuery); status != 200 || body != cheapData || time.Since(start) > 500*time.Millisecond {
		t.Errorf("a cheap request from 127.0.0.1: %d %s after %s", status, body, time.Since(start))
	}
	wg.Wait()
}

// With ShareByRole one role holds at most its share too, whatever tokens its requests carry: two users of role
// anon take two connections and a third user's request waits, then is refused.
func TestPoolShareByRole(t *testing.T) {
	f := newFixtureOn(t, pgtest.NewDB(t), slowSchema, 4, Options{PoolShare: 0.5, ShareByRole: true, PoolTimeout: time.Second})
	postGraphQL(t, f.srv.URL, f.anon, cheapQuery)
	user := func(sub string) map[string]string {
		return map[string]string{"apikey": f.anon, "Authorization": "Bearer " + f.userToken(jwt.MapClaims{"role": "anon", "sub": sub, "exp": time.Now().Add(time.Hour).Unix()})}
	}
	var wg sync.WaitGroup
	for _, sub := range []string{"a", "b"} {
		wg.Go(func() { sendWith(t, testClient, f.srv.URL, user(sub), slowQuery) })
	}
	time.Sleep(300 * time.Millisecond)
	if status, body := sendWith(t, testClient, f.srv.URL, user("c"), slowQuery); status != 429 || !strings.Contains(body, "Too many concurrent requests of this role: at most 2") {
		t.Errorf("a third user's slow request: %d %s", status, body)
	}
	wg.Wait()
}

// sendWith posts body to /graphql/v1 of baseURL with headers through client; it may run in any goroutine.
func sendWith(t *testing.T, client *http.Client, baseURL string, headers map[string]string, body string) (int, string) {
	req, _ := http.NewRequest(http.MethodPost, baseURL+"/graphql/v1", strings.NewReader(body))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Cheap requests are not starved by slow ones of the same API key and role (every anonymous client sends
// the anon key): the slow operations hold at most their share of the pool, and cheap requests, which the
// clients' shares do not count, are answered on the rest while every slow request still runs. Twice: when
// the slow operation is new (its requests become slow as they pass the threshold) and when it is known.
func TestSlowOperationsLeaveConnectionsToCheapOnes(t *testing.T) {
	// Slow requests of six seconds: on a loaded machine the cheap ones still finish well before them.
	f := newFixtureOn(t, pgtest.NewDB(t), slowSchema+`create function slow_long() returns int language sql stable as
		$$ select 1 from pg_sleep(6) $$; grant execute on function slow_long() to anon;`, 4, Options{PoolShare: 0.75,
		SlowShare: 0.5, SlowThreshold: 100 * time.Millisecond, PoolTimeout: 10 * time.Second})
	knownCheap(t, f, f.anon)
	const slowLongQuery = `{"query": "{ slow_long }"}`
	slowOp := f.server.costs.Operation(`{ slow_long }`, "")
	for _, round := range []string{"a new slow operation", "a known slow operation"} {
		var slowAnswered atomic.Int32
		var wg sync.WaitGroup
		for range 4 { // as many as the pool has connections
			wg.Go(func() {
				if status, body := sendWith(t, testClient, f.srv.URL, map[string]string{"apikey": f.anon}, slowLongQuery); status != 200 || body != `{"data": {"slow_long": 1}}` {
					t.Errorf("%s: a slow request answered %d %s", round, status, body)
				}
				slowAnswered.Add(1)
			})
		}
		// Past the threshold, well before the six seconds of a slow request.
		testenv.Eventually(t, 4*time.Second, func() string {
			if got := f.server.costs.Class(slowOp); got != admission.Slow {
				return fmt.Sprintf("%s: the slow operation is %s once its requests passed the threshold", round, got)
			}
			if held := f.server.gates[0].limiter.Held(slowOperations); round == "a known slow operation" && held != 2 {
				return fmt.Sprintf("%s: %d slow requests hold connections, want the slow share, 2 of 4", round, held)
			}
			return ""
		})
		// Each of four cheap clients sends five requests one after another; all of them are answered while
		// the slow requests, all sent first, still run.
		var cheap sync.WaitGroup
		for range 4 {
			cheap.Go(func() {
				for range 5 {
					if status, body := sendWith(t, testClient, f.srv.URL, map[string]string{"apikey": f.anon}, cheapQuery); status != 200 || body != cheapData {
						t.Errorf("%s: cheap request: %d %s", round, status, body)
					}
				}
			})
		}
		cheap.Wait()
		if n := slowAnswered.Load(); n != 0 {
			t.Errorf("%s: the cheap requests were answered only after %d slow request(s) ended", round, n)
		}
		wg.Wait()
	}
}

// A slow request of an operation that is slow only now (a document never seen, or one that was cheap so far)
// is noted slow once it has held its connection for the threshold, and counts against the slow operations'
// share until it ends: a known slow operation sent meanwhile waits for it, and is refused with the busy 503
// when its wait passes the pool timeout.
func TestRequestBecomesSlowPastTheThreshold(t *testing.T) {
	f := newFixtureOn(t, pgtest.NewDB(t), slowSchema, 4, Options{PoolShare: 1, SlowShare: 0.25,
		SlowThreshold: 100 * time.Millisecond, PoolTimeout: time.Second})
	known := `{"query": "query Known { slow }"}`
	f.server.costs.Observe(f.server.costs.Operation(`query Known { slow }`, ""), 2*time.Second)
	fresh := f.server.costs.Operation(`{ slow }`, "")
	done := make(chan int, 1)
	go func() {
		status, _ := sendWith(t, testClient, f.srv.URL, map[string]string{"apikey": f.anon}, slowQuery)
		done <- status
	}()
	time.Sleep(400 * time.Millisecond)
	if got := f.server.costs.Class(fresh); got != admission.Slow {
		t.Errorf("a new operation holding its connection past the threshold is %s", got)
	}
	if got := f.server.gates[0].limiter.Held(slowOperations); got != 1 {
		t.Errorf("%d requests count against the slow operations, want the one past the threshold", got)
	}
	status, body, id := postGraphQL(t, f.srv.URL, f.service, known)
	if want := `{"data":null,"errors":[{"message":"Database busy: this operation is slow, and at most 1 slow requests may use the database at once (request id ` + id + `)"}]}`; status != 503 || body != want {
		t.Errorf("a known slow request while the slow share is taken: %d %s\nwant 503 %s", status, body, want)
	}
	if status := <-done; status != 200 {
		t.Errorf("the request that became slow: %d", status)
	}
	if got := f.server.gates[0].limiter.Held(slowOperations); got != 0 {
		t.Errorf("%d requests count against the slow operations after all ended", got)
	}
	if status, body, _ := postGraphQL(t, f.srv.URL, f.anon, cheapQuery); status != 200 || body != cheapData {
		t.Errorf("cheap request: %d %s", status, body)
	}
}
