package httpapi

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// A backend killed in the middle of a request (a Postgres restart, a crash) is answered with the outage's one
// 503 shape and the request id; the reason (an address, "connection reset by peer") stays in the log.
func TestConnectionLostMidRequestIsOne503(t *testing.T) {
	f := newFixture(t, `create table t(id int primary key); insert into t values (1);
		create function slow(t) returns int language sql stable as $$ select 1 from pg_sleep(10) $$;
		grant select on t to anon; grant execute on function slow(t) to anon;`)
	killed := make(chan error, 1)
	go func() {
		ctx := context.Background()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			tag, err := f.admin.Exec(ctx, `select pg_terminate_backend(pid) from pg_stat_activity
				where usename = 'authenticator' and query like '%slow%' and state = 'active'`)
			if err != nil {
				killed <- err
				return
			}
			if tag.RowsAffected() > 0 {
				killed <- nil
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		killed <- context.DeadlineExceeded
	}()
	status, body, id := postGraphQL(t, f.srv.URL, f.anon, `{"query": "{ tCollection { edges { node { slow } } } }"}`)
	if err := <-killed; err != nil {
		t.Fatalf("terminating the backend: %v", err)
	}
	if want := `{"data":null,"errors":[{"message":"Database unavailable (request id ` + id + `)"}]}`; status != 503 || body != want {
		t.Errorf("got %d %s\nwant 503 %s", status, body, want)
	}
	if id == "" || !strings.Contains(f.logs.String(), id) {
		t.Errorf("request id %q not in the log", id)
	}
	if regexp.MustCompile(`127\.0\.0\.1|terminat|EOF|reset`).MatchString(body) {
		t.Errorf("internals in the answer: %s", body)
	}
	// The pool recovers: the next request is answered.
	if status, got := f.graphql(map[string]string{"apikey": f.anon}, `{ tCollection { edges { node { id } } } }`); status != 200 ||
		got != `{"data": {"tCollection": {"edges": [{"node": {"id": 1}}]}}}` {
		t.Errorf("after the outage: %d %s", status, got)
	}
}

// A costly filter is cut by the statement timeout while simple requests on the other connections stay fast.
func TestCostlyRegexCutWhileOthersAreServed(t *testing.T) {
	f := newFixture(t, `create table doc(id int primary key, body text);
		insert into doc select i, repeat('ab', 5000) from generate_series(1, 400) i;
		grant select on doc to anon;
		alter role anon set statement_timeout = '500ms';`)
	t.Cleanup(func() { _, _ = f.admin.Exec(context.Background(), `alter role anon reset statement_timeout`) })
	// The role setting is read with the schema; a schema change makes the server reload it.
	if _, err := f.admin.Exec(context.Background(), `comment on table doc is 'docs'`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	costly := `{ docCollection(filter: {body: {iregex: "^` + strings.Repeat("(a|b)*", 300) + `x"}}) { edges { node { id } } } }`
	var wg sync.WaitGroup
	answers := make([]string, 3)
	for i := range answers {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, answers[i] = f.graphql(map[string]string{"apikey": f.anon}, costly)
		}(i)
	}
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	status, got := f.graphql(map[string]string{"apikey": f.anon}, `{ docCollection(first: 1) { edges { node { id } } } }`)
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("a simple request took %s while costly ones ran", elapsed)
	}
	if status != 200 || got != `{"data": {"docCollection": {"edges": [{"node": {"id": 1}}]}}}` {
		t.Errorf("simple request: %d %s", status, got)
	}
	wg.Wait()
	for _, a := range answers {
		if a != `{"data": null, "errors": [{"message": "canceling statement due to statement timeout"}]}` {
			t.Errorf("costly request: %s", a)
		}
	}
}
