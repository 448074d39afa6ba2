package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgreflect/pgreflect/resolve"
)

// loginConn is a connection of the login role's pool for the test.
func (d *db) loginConn(t *testing.T) *pgx.Conn {
	conn, err := d.pool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Release)
	return conn.Conn()
}

// refreshCohort refreshes one cohort of sessions on conn.
func refreshCohort(t *testing.T, conn *pgx.Conn, engine *resolve.Engine, query string, sessions []resolve.Session) resolve.LiveRefresh {
	t.Helper()
	r, err := engine.RefreshLive(context.Background(), conn, resolve.Request{Query: query}, sessions)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Answers) != len(sessions) {
		t.Fatalf("%d answers for %d sessions", len(r.Answers), len(sessions))
	}
	return r
}

// TestMultiplexedRefreshKeepsEachSubscribersRows refreshes many users in one statement under a policy whose
// `(select auth.uid())` Postgres evaluates once per execution: each answer holds its own user's rows and no
// other's, whatever the order of the users in the statement, with the query prepared on the connection and
// planned by EXECUTE (the unnamed mode).
func TestMultiplexedRefreshKeepsEachSubscribersRows(t *testing.T) {
	for _, mode := range []resolve.StatementMode{resolve.StatementsPrepared, resolve.StatementsUnnamed} {
		t.Run(mode.String(), func(t *testing.T) { testMultiplexedRefresh(t, mode) })
	}
}

func testMultiplexedRefresh(t *testing.T, mode resolve.StatementMode) {
	d := newDB(t)
	const users = 40
	owners := make([]string, users) // by the index written into the rows' bodies
	sessions := make([]resolve.Session, users)
	for i := range users {
		user := uuid.New()
		owners[i], sessions[i] = user.String(), userSession(user)
		// Users own 0, 1 or 2 rows: answers differ in length as well as in content.
		for n := range i % 3 {
			d.exec(t, `insert into note (owner, body) values ($1, $2)`, user, fmt.Sprintf("u%dn%d", i, n))
		}
	}
	engine := resolve.NewEngine(resolve.Options{StatementMode: mode})
	conn := d.loginConn(t)
	for round := range 3 {
		if round == 2 {
			// The same users in the opposite order: nothing of one execution may decide the next ones.
			slices.Reverse(sessions)
		}
		r := refreshCohort(t, conn, engine, noteSubscription, sessions)
		want := 1
		if round == 0 && mode == resolve.StatementsPrepared {
			want = users // the transactions of the first refresh on a connection prepare the query there
		}
		if r.Statements != want {
			t.Fatalf("round %d: %d statements for %d subscribers, want %d", round, r.Statements, users, want)
		}
		for i, a := range r.Answers {
			me := sessions[i].Claims["sub"]
			mine := slices.Index(owners, me.(string))
			rows := strings.Split(string(a.Body), `"body": "`)[1:]
			for _, body := range rows {
				var user, n int
				if _, err := fmt.Sscanf(body, "u%dn%d", &user, &n); err != nil {
					t.Fatalf("answer %d: %s", i, a.Body)
				}
				if user != mine {
					t.Fatalf("round %d: subscriber %s got user %s's row: %s", round, me, owners[user], a.Body)
				}
			}
			if len(rows) != mine%3 || a.Final {
				t.Fatalf("round %d: subscriber %d has %d rows (want %d), final %v: %s", round, mine, len(rows), mine%3, a.Final, a.Body)
			}
		}
	}
}

// TestMultiplexedRefreshIsolatesAFailingSubscriber has a policy that fails for one user only: the statement of
// the whole cohort fails, and the refresh falls back to a transaction per subscriber, which ends that user's
// subscription with the error a query gets and answers everyone else.
func TestMultiplexedRefreshIsolatesAFailingSubscriber(t *testing.T) {
	d := newDB(t)
	bad, good := uuid.New(), uuid.New()
	d.exec(t, `create policy fails_for_one on note as restrictive for select
		using (case when auth.uid() = '`+bad.String()+`' then body::int = 1 else true end)`)
	d.exec(t, `insert into note (owner, body) values ($1, 'bad''s'), ($2, 'good''s')`, bad, good)
	engine := resolve.NewEngine(resolve.Options{StatementMode: resolve.StatementsUnnamed})
	r := refreshCohort(t, d.loginConn(t), engine, noteSubscription, []resolve.Session{userSession(good), userSession(bad), userSession(uuid.New())})
	if r.Statements != 3 {
		t.Fatalf("%d statements: the fallback runs one per subscriber", r.Statements)
	}
	if a := r.Answers[0]; a.Final || !strings.Contains(string(a.Body), "good's") {
		t.Fatalf("the good user's answer: %s", a.Body)
	}
	if a := r.Answers[1]; !a.Final || !strings.Contains(string(a.Body), `"errors"`) || strings.Contains(string(a.Body), "good's") {
		t.Fatalf("the failing user's answer: final %v %s", a.Final, a.Body)
	}
	if a := r.Answers[2]; a.Final || !strings.Contains(string(a.Body), `"edges": []`) {
		t.Fatalf("a user without rows: %s", a.Body)
	}
}

// TestMultiplexedRefreshWithoutTheFunction serves a database whose setup predates live_refresh: refreshes still
// answer, one transaction per subscriber.
func TestMultiplexedRefreshWithoutTheFunction(t *testing.T) {
	d := newDB(t)
	user := uuid.New()
	d.exec(t, `insert into note (owner, body) values ($1, 'still here')`, user)
	d.exec(t, `drop function pgreflect.live_refresh(text[], text[], text[], text[])`)
	engine := resolve.NewEngine(resolve.Options{})
	conn := d.loginConn(t)
	for range 3 {
		r := refreshCohort(t, conn, engine, noteSubscription, []resolve.Session{userSession(user), userSession(uuid.New())})
		if r.Statements != 2 || !strings.Contains(string(r.Answers[0].Body), "still here") || strings.Contains(string(r.Answers[1].Body), "still here") {
			t.Fatalf("%d statements, answers %s / %s", r.Statements, r.Answers[0].Body, r.Answers[1].Body)
		}
	}
}

// TestLiveRefreshFunctionRefusesAPIRoles tries to use pgreflect.live_refresh from an API role: as anon directly,
// and through a security definer function, to reach service_role through the login role's memberships.
func TestLiveRefreshFunctionRefusesAPIRoles(t *testing.T) {
	d := newDB(t)
	ctx := context.Background()
	d.exec(t, `insert into note (owner, body) values ($1, 'secret')`, uuid.New())
	d.exec(t, `create function public.sneak() returns text[] language sql security definer as
		$$ select pgreflect.live_refresh(array['select string_agg(body, '','') from note'], null, array['{}'], array['service_role', 'public', '{}', '', '', '', '1']) $$`)
	d.exec(t, `grant execute on function public.sneak() to anon`)
	conn := d.loginConn(t)
	for _, attempt := range []string{
		`select pgreflect.live_refresh(array['select string_agg(body, '','') from note'], null, array['{}'], array['service_role', 'public', '{}', '', '', '', '1'])`,
		`select public.sneak()`,
	} {
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []*string
		_, err = tx.Exec(ctx, `set local role anon`)
		if err == nil {
			err = tx.QueryRow(ctx, attempt).Scan(&got)
		}
		_ = tx.Rollback(ctx)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
			t.Fatalf("%s as anon: %v %v", attempt, err, got)
		}
	}
}

// TestMultiplexedRefreshOfSeveralVariables refreshes cohorts of one document with different variables together:
// one statement, each subscriber under its own claims and its own cohort's variables.
func TestMultiplexedRefreshOfSeveralVariables(t *testing.T) {
	for _, mode := range []resolve.StatementMode{resolve.StatementsPrepared, resolve.StatementsUnnamed} {
		t.Run(mode.String(), func(t *testing.T) {
			d := newDB(t)
			const query = `subscription($body: String) { noteCollection(filter: {body: {eq: $body}}) { edges { node { body } } } }`
			alice, bob := uuid.New(), uuid.New()
			d.exec(t, `insert into note (owner, body) values ($1, 'red'), ($1, 'blue'), ($2, 'red'), ($2, 'blue')`, alice, bob)
			cohorts := []resolve.LiveCohort{
				{Request: resolve.Request{Query: query, Variables: json.RawMessage(`{"body": "red"}`)}, Sessions: []resolve.Session{userSession(alice), userSession(bob)}},
				{Request: resolve.Request{Query: query, Variables: json.RawMessage(`{"body": "blue"}`)}, Sessions: []resolve.Session{userSession(bob)}},
				{Request: resolve.Request{Query: query, Variables: json.RawMessage(`{"body": "green"}`)}, Sessions: []resolve.Session{userSession(alice)}},
			}
			engine := resolve.NewEngine(resolve.Options{StatementMode: mode})
			conn := d.loginConn(t)
			var r resolve.LiveRefreshes
			for round := range 2 {
				var err error
				if r, err = engine.RefreshLiveCohorts(context.Background(), conn, cohorts, ""); err != nil {
					t.Fatal(err)
				}
				want := 1
				if round == 0 && mode == resolve.StatementsPrepared {
					want = 4 // the first refresh on the connection prepares each query, a transaction per subscriber
				}
				if r.Statements != want {
					t.Fatalf("round %d: %d statements, want %d", round, r.Statements, want)
				}
			}
			// Each of alice's and bob's answers holds one row of their own (RLS) of the cohort's colour.
			for i, wantBody := range []string{"red", "blue", ""} {
				for j, a := range r.Cohorts[i].Answers {
					got := strings.Count(string(a.Body), `"body": "`)
					if wantBody == "" && got != 0 || wantBody != "" && (got != 1 || !strings.Contains(string(a.Body), `"body": "`+wantBody+`"`)) {
						t.Fatalf("cohort %d session %d: %s", i, j, a.Body)
					}
				}
			}
		})
	}
}

// TestHubRefreshesOneDocumentsCohortsTogether subscribes users to one document, each with variables of their own
// (a cohort each): a poll refreshes them together, one statement for all, and each still receives only what its
// claims and variables select.
func TestHubRefreshesOneDocumentsCohortsTogether(t *testing.T) {
	d := newDB(t)
	h := New(Options{Engine: resolve.NewEngine(resolve.Options{StatementMode: resolve.StatementsUnnamed}), Pool: d.pool,
		PollInterval: 50 * time.Millisecond})
	t.Cleanup(h.Close)
	const users = 20
	const query = `subscription($body: String) { noteCollection(filter: {body: {like: $body}}) { edges { node { body } } } }`
	recs := make([]*recorder, users)
	ids := make([]uuid.UUID, users)
	for i := range users {
		ids[i], recs[i] = uuid.New(), &recorder{}
		vars := json.RawMessage(fmt.Sprintf(`{"body": "note %d.%%"}`, i))
		if _, err := h.Subscribe(userSession(ids[i]), resolve.Request{Query: query, Variables: vars}, recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range recs {
		r.waitAnswer(t, 10*time.Second, `"edges": []`)
	}
	before := h.Stats()
	for i := range users {
		// Each user's own note, and one for the next user's variables that only the next user's claims could see.
		d.exec(t, `insert into note (owner, body) values ($1, $2), ($1, $3)`, ids[i], fmt.Sprintf("note %d.mine", i), fmt.Sprintf("note %d.theirs", (i+1)%users))
	}
	for i, r := range recs {
		r.waitAnswer(t, 10*time.Second, fmt.Sprintf(`"note %d.mine"`, i))
	}
	time.Sleep(200 * time.Millisecond)
	after := h.Stats()
	for i, r := range recs {
		got, _ := r.last()
		if strings.Count(got, `"body"`) != 1 {
			t.Fatalf("user %d: %s", i, got)
		}
	}
	refreshes, statements, evaluations := after.Refreshes-before.Refreshes, after.Statements-before.Statements, after.Evaluations-before.Evaluations
	if refreshes == 0 || statements != refreshes || evaluations < 2*refreshes {
		t.Fatalf("%d refreshes, %d statements, %d evaluations: the cohorts were not refreshed together", refreshes, statements, evaluations)
	}
}
