package live

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/pgtest"
	"github.com/pgreflect/pgreflect/resolve"
)

func TestMain(m *testing.M) {
	if url := os.Getenv(feedChildEnv); url != "" {
		runFeedChild(url) // the process TestFeedLeavesNoSlotWhenKilled kills
		return
	}
	os.Exit(pgtest.Main(m))
}

const schema = `
create table note (id bigserial primary key, owner uuid not null, body text not null);
create index on note (owner);
alter table note enable row level security;
create policy own_rows on note for select using (owner = (select auth.uid()));
grant select on note to authenticated;
comment on table note is e'@graphql({"features": ["subscriptions"]})';
`

const noteSubscription = `subscription { noteCollection { edges { node { body } } } }`

// db is a test database with pgreflect's setup, the schema, a superuser connection and a pool of the login role.
type db struct {
	url   string // superuser
	admin *pgx.Conn
	pool  *pgxpool.Pool
}

func newDB(t *testing.T) *db { return newDBFor(t) }

func newDBFor(t testing.TB) *db {
	t.Helper()
	u, admin := testenv.SetupDB(t, schema)
	return &db{url: u, admin: admin, pool: testenv.LoginPool(t, u)}
}

func (d *db) hub(t *testing.T, poll time.Duration) *Hub {
	h := New(Options{Engine: resolve.NewEngine(resolve.Options{}), Pool: d.pool, PollInterval: poll})
	t.Cleanup(h.Close)
	return h
}

func (d *db) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := d.admin.Exec(context.Background(), sql, args...); err != nil {
		t.Fatal(err)
	}
}

func requireLogicalDecoding(t *testing.T, d *db) {
	t.Helper()
	var level string
	if err := d.admin.QueryRow(context.Background(), "show wal_level").Scan(&level); err != nil {
		t.Fatal(err)
	}
	if level != "logical" {
		t.Skipf("the test server's wal_level is %s; logical decoding needs logical", level)
	}
}

// recorder is a Sink that keeps what it is sent.
type recorder struct {
	mu          sync.Mutex
	answers     []string
	ends        []string
	unavailable int
}

func (r *recorder) Next(body []byte) {
	r.mu.Lock()
	r.answers = append(r.answers, string(body))
	r.mu.Unlock()
}
func (r *recorder) End(body []byte) {
	r.mu.Lock()
	r.ends = append(r.ends, string(body))
	r.mu.Unlock()
}
func (r *recorder) Unavailable() { r.mu.Lock(); r.unavailable++; r.mu.Unlock() }

func (r *recorder) last() (string, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.answers) == 0 {
		return "", 0
	}
	return r.answers[len(r.answers)-1], len(r.answers)
}

// waitAnswer waits for an answer that contains want.
func (r *recorder) waitAnswer(t *testing.T, within time.Duration, want string) {
	t.Helper()
	testenv.Eventually(t, within, func() string {
		if got, _ := r.last(); !strings.Contains(got, want) {
			return fmt.Sprintf("last answer %q lacks %q", got, want)
		}
		return ""
	})
}

func userSession(user uuid.UUID) resolve.Session {
	return resolve.Session{Role: "authenticated", Claims: map[string]any{"sub": user.String(), "role": "authenticated"},
		SearchPath: []string{"public"}}
}

// runFeed runs h's change feed on the database of url until the test ends.
func runFeed(t *testing.T, h *Hub, url string) {
	ctx, cancel := context.WithCancel(context.Background())
	var feed sync.WaitGroup
	feed.Go(func() { h.RunFeed(ctx, FeedOptions{URL: url}) })
	t.Cleanup(func() { cancel(); feed.Wait() })
}

// subscribe subscribes user to query and waits for a first answer holding want.
func subscribe(t *testing.T, h *Hub, user uuid.UUID, query, want string) *recorder {
	t.Helper()
	rec := &recorder{}
	if _, err := h.Subscribe(userSession(user), resolve.Request{Query: query}, rec); err != nil {
		t.Fatal(err)
	}
	rec.waitAnswer(t, 10*time.Second, want)
	return rec
}

func TestPollingRefreshesWithoutAFeed(t *testing.T) {
	d := newDB(t)
	h := d.hub(t, 100*time.Millisecond)
	user := uuid.New()
	rec := &recorder{}
	if _, err := h.Subscribe(userSession(user), resolve.Request{Query: noteSubscription}, rec); err != nil {
		t.Fatal(err)
	}
	rec.waitAnswer(t, 5*time.Second, `"edges": []`)
	d.exec(t, `insert into note (owner, body) values ($1, 'polled')`, user)
	rec.waitAnswer(t, 5*time.Second, `"polled"`)
}

// TestFeedRefreshesOnCommit runs the hub with a poll interval far longer than the test: only the change feed
// can bring the new answer.
func TestFeedRefreshesOnCommit(t *testing.T) {
	d := newDB(t)
	requireLogicalDecoding(t, d)
	h := d.hub(t, time.Hour)
	runFeed(t, h, d.url)
	user, other := uuid.New(), uuid.New()
	rec := subscribe(t, h, user, noteSubscription, `"edges": []`)
	waitNoteFollowed(t, d, h)
	for i := range 3 {
		d.exec(t, `insert into note (owner, body) values ($1, $2)`, user, fmt.Sprint("decoded ", i))
		rec.waitAnswer(t, 5*time.Second, fmt.Sprintf(`"decoded %d"`, i))
	}
	// A change another user's row does not alter this user's answer: refreshed, nothing pushed.
	_, before := rec.last()
	d.exec(t, `insert into note (owner, body) values ($1, 'not yours')`, other)
	time.Sleep(500 * time.Millisecond)
	if got, n := rec.last(); n != before || strings.Contains(got, "not yours") {
		t.Fatalf("after another user's insert: %d answers (was %d), last %s", n, before, got)
	}
	// Updates and deletes are followed too.
	d.exec(t, `update note set body = 'edited' where body = 'decoded 0'`)
	rec.waitAnswer(t, 5*time.Second, `"edited"`)
	d.exec(t, `delete from note where body = 'edited'`)
	testenv.Eventually(t, 5*time.Second, func() string {
		if got, _ := rec.last(); strings.Contains(got, "edited") {
			return "the deleted row is still in the last answer"
		}
		return ""
	})
}

// waitNoteFollowed waits until the feed has added note to the publication and follows the cohort of
// noteSubscription.
func waitNoteFollowed(t *testing.T, d *db, h *Hub) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, func() string {
		var n int
		if err := d.admin.QueryRow(t.Context(), `select count(*) from pg_publication_tables where pubname = $1 and tablename = 'note'`, Publication).Scan(&n); err != nil {
			return err.Error()
		}
		h.mu.Lock()
		followed := h.followedLocked(h.cohorts[cohortKey{role: "authenticated", searchPath: "public", query: noteSubscription}])
		h.mu.Unlock()
		if n != 1 || !followed {
			return fmt.Sprintf("note published %d times, followed %v", n, followed)
		}
		return ""
	})
}

// A table dropped and created again under its name is another table, which the publication does not hold: after
// the schema change the feed reads the publication again and adds it, so the subscription goes on following it
// (the poll interval is longer than the test).
func TestFeedFollowsATableCreatedAgain(t *testing.T) {
	d := newDB(t)
	requireLogicalDecoding(t, d)
	h := d.hub(t, time.Hour)
	runFeed(t, h, d.url)
	user := uuid.New()
	rec := subscribe(t, h, user, noteSubscription, `"edges": []`)
	waitNoteFollowed(t, d, h)

	d.exec(t, `drop table note;`+schema)
	h.opts.Engine.Invalidate() // what the server's schema watch does, engine and hub
	h.Invalidate()
	waitNoteFollowed(t, d, h)
	for i := range 2 {
		d.exec(t, `insert into note (owner, body) values ($1, $2)`, user, fmt.Sprint("in the new table ", i))
		rec.waitAnswer(t, 5*time.Second, fmt.Sprintf(`"in the new table %d"`, i))
	}
}

// announcements counts what a schema watch tells the hub, as the server's watch tells it.
type announcements struct {
	h                                 *Hub
	schemaChanges, publicationChanges atomic.Int32
}

func (a *announcements) Invalidate()          { a.schemaChanges.Add(1); a.h.Invalidate() }
func (a *announcements) PublicationsChanged() { a.publicationChanges.Add(1); a.h.PublicationsChanged() }

// The feed adding a table to its publication is no schema change: servers would read the catalog again and
// rebuild every role's schema for each table a subscription reads first (a second at 5,000 tables), and every
// subscription would be refreshed. The hub is told of the publication's change all the same, and adds a table
// taken out of it again (the poll interval is longer than the test).
func TestThePublicationsChangesAreNoSchemaChange(t *testing.T) {
	d := newDB(t)
	requireLogicalDecoding(t, d)
	h := d.hub(t, time.Hour)
	runFeed(t, h, d.url)
	told := &announcements{h: h}
	watch := resolve.NewEngine(resolve.Options{Pool: d.pool})
	if err := watch.Start(t.Context(), resolve.WatchOptions{Also: told}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(watch.Close)
	started := told.schemaChanges.Load() // the watch's own at its start

	user := uuid.New()
	rec := subscribe(t, h, user, noteSubscription, `"edges": []`)
	waitNoteFollowed(t, d, h)
	testenv.Eventually(t, 5*time.Second, func() string {
		if told.publicationChanges.Load() == 0 {
			return "the feed's addition of note was not announced"
		}
		return ""
	})
	d.exec(t, `alter publication pgreflect_live drop table note`)
	waitNoteFollowed(t, d, h)
	d.exec(t, `insert into note (owner, body) values ($1, 'published again')`, user)
	rec.waitAnswer(t, 5*time.Second, `"published again"`)
	if n := told.schemaChanges.Load(); n != started {
		t.Errorf("%d schema changes announced, want none", n-started)
	}
}

// The feed returns only once its replication backend has gone and its slot with it, even when it was stopped
// while the backend was creating the slot, which waits for the transactions running then: a caller that drops
// the database next (the tests' clean-up) found the slot there, in use.
func TestFeedEndsAfterItsReplicationBackend(t *testing.T) {
	d := newDB(t)
	requireLogicalDecoding(t, d)
	ctx := t.Context()
	running, err := d.admin.Begin(ctx) // a transaction with an xid: creating a slot waits for it
	if err != nil {
		t.Fatal(err)
	}
	if _, err := running.Exec(ctx, `insert into note (owner, body) values (gen_random_uuid(), 'running')`); err != nil {
		_ = running.Rollback(context.Background())
		t.Fatal(err)
	}
	other, err := pgx.Connect(ctx, d.url)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(context.Background())
	walsenders := func() int {
		t.Helper()
		var n int
		if err := other.QueryRow(ctx, `select count(*) from pg_stat_activity where application_name = 'pgreflect live'
			and backend_type = 'walsender' and datname = current_database()`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	h := d.hub(t, time.Hour)
	feedCtx, stop := context.WithCancel(ctx)
	ended := make(chan struct{})
	go func() { h.RunFeed(feedCtx, FeedOptions{URL: d.url}); close(ended) }()
	testenv.Eventually(t, 10*time.Second, func() string {
		var waiting bool
		if err := other.QueryRow(ctx, `select exists (select from pg_stat_activity where application_name = 'pgreflect live'
			and backend_type = 'walsender' and wait_event_type = 'Lock' and datname = current_database())`).Scan(&waiting); err != nil || !waiting {
			return fmt.Sprintf("the feed's backend is not waiting to create its slot (%v)", err)
		}
		return ""
	})
	stop()
	// The transaction ends a second later, or when the feed returns: whichever comes first.
	rolledBack := make(chan struct{})
	go func() {
		defer close(rolledBack)
		select {
		case <-ended:
		case <-time.After(time.Second):
		}
		_ = running.Rollback(context.Background())
	}()
	defer func() { <-rolledBack }()
	select {
	case <-ended:
	case <-time.After(15 * time.Second):
		t.Fatal("the feed did not return")
	}
	if n := walsenders(); n != 0 {
		t.Errorf("the feed returned with %d replication backends of its own still there", n)
	}
	var slots int
	if err := other.QueryRow(ctx, `select count(*) from pg_replication_slots where slot_name like 'pgreflect_live_%'`).Scan(&slots); err != nil || slots != 0 {
		t.Errorf("the feed returned with %d slots (%v)", slots, err)
	}
}

// waitFollowedAndIdle waits until the feed follows the cohort of query (the authenticated role's) and no refresh of
// it is under way or due: the next change the feed reports is refreshed with its position, on a replica.
func waitFollowedAndIdle(t *testing.T, h *Hub, query string) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, func() string {
		h.mu.Lock()
		defer h.mu.Unlock()
		c := h.cohorts[cohortKey{role: "authenticated", searchPath: "public", query: query}]
		switch {
		case c == nil || !h.followedLocked(c):
			return "the feed does not follow the subscription's table yet"
		case c.dirty || c.busy || c.queued:
			// The refresh that follows the table's publication (its position unknown: on the primary).
			return "the cohort is being refreshed"
		}
		return ""
	})
}

// A replica's engine reloads its schemas only once the replica has replayed a schema change. Until then a
// subscription written for the new schema fails to validate there: the primary answers that refresh, and the
// subscription goes on. The replica here is the primary itself with an engine of its own that is never told of
// the change, as a replica's engine is not until it has replayed it.
func TestAReplicasOldSchemaEndsNoSubscription(t *testing.T) {
	d := newDB(t)
	requireLogicalDecoding(t, d)
	primary, behind := resolve.NewEngine(resolve.Options{}), resolve.NewEngine(resolve.Options{})
	h := New(Options{Engine: primary, Pool: d.pool, PollInterval: time.Hour, Replicas: []Source{{Pool: d.pool, Engine: behind}}})
	t.Cleanup(h.Close)
	runFeed(t, h, d.url)
	user := uuid.New()
	rec := subscribe(t, h, user, noteSubscription, `"edges": []`)
	waitFollowedAndIdle(t, h, noteSubscription)
	d.exec(t, `insert into note (owner, body) values ($1, 'before')`, user)
	rec.waitAnswer(t, 10*time.Second, `"before"`)
	if n := h.Stats().ReplicaRefreshes; n < 1 {
		t.Fatalf("%d refreshes on the replica: its engine has no schema to be behind with", n)
	}

	d.exec(t, `alter table note add column extra text not null default 'new'`)
	primary.Invalidate() // what the server's schema watch does; the replica's engine waits for the replay
	h.Invalidate()
	const withExtra = `subscription { noteCollection { edges { node { body extra } } } }`
	rec2 := subscribe(t, h, user, withExtra, `"before"`)
	waitFollowedAndIdle(t, h, withExtra)
	d.exec(t, `insert into note (owner, body) values ($1, 'after')`, user)
	rec2.waitAnswer(t, 10*time.Second, `"after"`)
	rec2.mu.Lock()
	defer rec2.mu.Unlock()
	if len(rec2.ends) != 0 {
		t.Fatalf("the subscription was ended: %q", rec2.ends)
	}
}

// A refresh that a schema change overtook may have run the old schema's statement on the changed tables (a
// column renamed under a name directive: the document still holds, the old statement fails). Its failure ends
// no subscription: the cohort is refreshed again under the new schema. A failure that no change overtook ends
// the subscription. The refresh is played here step by step, its answer given.
func TestAFailureOvertakenByASchemaChangeEndsNoSubscription(t *testing.T) {
	d := newDB(t)
	h := d.hub(t, time.Hour)
	rec := subscribe(t, h, uuid.New(), noteSubscription, `"edges": []`)
	failed := resolve.LiveRefresh{Answers: []resolve.LiveAnswer{{Body: []byte(`{"data": null, "errors": [{"message": "column t1.body does not exist"}]}`), Final: true}}}
	refresh := func(overtaken bool) {
		t.Helper()
		h.mu.Lock()
		c := h.cohorts[cohortKey{role: "authenticated", searchPath: "public", query: noteSubscription}]
		if c == nil || c.busy || c.queued {
			h.mu.Unlock()
			t.Fatal("the cohort is gone, or a refresh of it is under way")
		}
		c.busy, c.dirty = true, true // as a worker takes it (takeLocked), after a change
		h.mu.Unlock()
		p, _ := h.begin(c)
		if overtaken {
			h.Invalidate()
		}
		h.deliver(p, failed)
		h.end(c)
	}
	refresh(true)
	testenv.Eventually(t, 10*time.Second, func() string {
		h.mu.Lock()
		defer h.mu.Unlock()
		if c := h.cohorts[cohortKey{role: "authenticated", searchPath: "public", query: noteSubscription}]; c != nil && (c.dirty || c.busy || c.queued) {
			return "the refresh after the schema change has not run"
		}
		return "" // or the cohort is gone, which the check below tells
	})
	rec.mu.Lock()
	ends := len(rec.ends)
	rec.mu.Unlock()
	if ends != 0 || h.Stats().Subscriptions != 1 {
		t.Fatalf("a failure overtaken by a schema change ended the subscription: %d ends, %+v", ends, h.Stats())
	}
	refresh(false)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.ends) != 1 || h.Stats().Subscriptions != 0 {
		t.Fatalf("a failure no change overtook: ends %q, %+v", rec.ends, h.Stats())
	}
}

const feedChildEnv = "PGREFLECT_LIVE_FEED_CHILD_URL"

// runFeedChild runs a change feed until killed.
func runFeedChild(url string) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	h := New(Options{Engine: resolve.NewEngine(resolve.Options{}), Pool: pool, PollInterval: time.Hour})
	h.RunFeed(ctx, FeedOptions{URL: url})
}

// TestFeedLeavesNoSlotWhenKilled kills a process running the feed with SIGKILL: its slot is temporary, so the
// server drops it with the connection and retains no WAL for it.
func TestFeedLeavesNoSlotWhenKilled(t *testing.T) {
	d := newDB(t)
	requireLogicalDecoding(t, d)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), feedChildEnv+"="+d.url)
	var stderr testenv.SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("the feed's process wrote:\n%s", stderr.String())
		}
	})
	ctx := context.Background()
	slots := func() (int, error) {
		var n int
		err := d.admin.QueryRow(ctx, `select count(*) from pg_replication_slots where slot_name like 'pgreflect_live_%' and database = current_database()`).Scan(&n)
		return n, err
	}
	testenv.Eventually(t, 15*time.Second, func() string {
		if n, err := slots(); err != nil || n != 1 {
			return fmt.Sprintf("%d slots of the feed (%v)", n, err)
		}
		return ""
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	testenv.Eventually(t, 15*time.Second, func() string {
		if n, err := slots(); err != nil || n != 0 {
			return fmt.Sprintf("%d slots left after kill -9 (%v)", n, err)
		}
		return ""
	})
}

// TestStreamDeliversEachVisibleRowOnceInOrder streams a table in batches: every row the user may see arrives
// once, in order, the backlog in full batches first, then new rows as they are committed; others' rows never.
func TestStreamDeliversEachVisibleRowOnceInOrder(t *testing.T) {
	d := newDB(t)
	h := d.hub(t, 100*time.Millisecond)
	user, other := uuid.New(), uuid.New()
	for i := range 5 {
		d.exec(t, `insert into note (owner, body) values ($1, $2), ($3, 'hidden')`, user, fmt.Sprint("backlog ", i), other)
	}
	rec := &recorder{}
	req := resolve.Request{Query: `subscription { noteStream(batchSize: 2, cursor: {initialValue: {id: 0}, ordering: ASC}) { body } }`}
	if _, err := h.Subscribe(userSession(user), req, rec); err != nil {
		t.Fatal(err)
	}
	batches := func() []string {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return append([]string(nil), rec.answers...)
	}
	testenv.Eventually(t, 5*time.Second, func() string {
		if n := len(batches()); n != 3 {
			return fmt.Sprintf("%d batches of the backlog: %q", n, batches())
		}
		return ""
	})
	want := []string{
		`{"data": {"noteStream": [{"body": "backlog 0"}, {"body": "backlog 1"}]}}`,
		`{"data": {"noteStream": [{"body": "backlog 2"}, {"body": "backlog 3"}]}}`,
		`{"data": {"noteStream": [{"body": "backlog 4"}]}}`,
	}
	if got := batches(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("backlog batches\n got %q\nwant %q", got, want)
	}
	d.exec(t, `insert into note (owner, body) values ($2, 'hidden'), ($1, 'new 0')`, user, other)
	testenv.Eventually(t, 5*time.Second, func() string {
		if got := batches(); len(got) != 4 || got[3] != `{"data": {"noteStream": [{"body": "new 0"}]}}` {
			return fmt.Sprintf("batches %q", got)
		}
		return ""
	})
	// Nothing new: no message, however often the stream is polled.
	time.Sleep(300 * time.Millisecond)
	if got := batches(); len(got) != 4 {
		t.Fatalf("a stream without new rows sent %q", got[4:])
	}
	if st := h.Stats(); st.Cohorts != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// A stream ordered DESC delivers the rows before its cursor, latest first, whether the ordering is written in
// the document or given as a variable (the literal was read as ASC).
func TestStreamOrderedDescending(t *testing.T) {
	d := newDB(t)
	h := d.hub(t, time.Hour)
	user := uuid.New()
	d.exec(t, `insert into note (owner, body) values ($1, 'one'), ($1, 'two'), ($1, 'three')`, user)
	const want = `{"data": {"noteStream": [{"body": "three"}, {"body": "two"}, {"body": "one"}]}}`
	for _, req := range []resolve.Request{
		{Query: `subscription { noteStream(batchSize: 5, cursor: {initialValue: {id: 1000}, ordering: DESC}) { body } }`},
		{Query: `subscription($o: StreamOrdering!) { noteStream(batchSize: 5, cursor: {initialValue: {id: 1000}, ordering: $o}) { body } }`,
			Variables: json.RawMessage(`{"o": "DESC"}`)},
	} {
		rec := &recorder{}
		if _, err := h.Subscribe(userSession(user), req, rec); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 5*time.Second, func() string {
			if got, _ := rec.last(); got != want {
				return fmt.Sprintf("%s: %s, want %s", req.Query, got, want)
			}
			return ""
		})
	}
}

func TestStreamArguments(t *testing.T) {
	d := newDB(t)
	h := d.hub(t, time.Hour)
	for q, want := range map[string]string{
		`subscription { noteStream(batchSize: 0, cursor: {initialValue: {id: 0}}) { body } }`:               "batchSize must be at least 1",
		`subscription { noteStream(batchSize: 1, cursor: {initialValue: {}}) { body } }`:                    "cursor.initialValue must give exactly one column",
		`subscription { noteStream(batchSize: 1, cursor: {initialValue: {id: 1, owner: "x"}}) { body } }`:   "extra keys",
		`subscription { noteStream(batchSize: 1, cursor: {initialValue: {id: 0}, ordering: UP}) { body } }`: "Invalid input for StreamOrdering type",
		`subscription { noteStream(cursor: {initialValue: {id: 0}}) { body } }`:                             "",
	} {
		rec := &recorder{}
		if _, err := h.Subscribe(userSession(uuid.New()), resolve.Request{Query: q}, rec); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 5*time.Second, func() string {
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if len(rec.ends) != 1 || !strings.Contains(rec.ends[0], want) {
				return fmt.Sprintf("%s: ends %q, want one with %q", q, rec.ends, want)
			}
			return ""
		})
	}
}

// TestRefreshesOnAReplicaThatHasReplayed runs the hub with a read replica: a refresh for a change the feed
// reported is answered there once the replica has replayed it; while its replay is paused, the primary answers,
// and the new row is pushed all the same.
func TestRefreshesOnAReplicaThatHasReplayed(t *testing.T) {
	primary := pgtest.StartCluster(t)
	replica := pgtest.StartReplica(t, primary)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	primaryAdmin := testenv.Setup(t, primary.URL("postgres"), schema)
	replicaAdmin, err := pgx.Connect(ctx, replica.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer replicaAdmin.Close(context.Background())
	testenv.Eventually(t, 10*time.Second, func() string {
		var ok bool
		if err := replicaAdmin.QueryRow(ctx, `select to_regclass('public.note') is not null`).Scan(&ok); err != nil || !ok {
			return fmt.Sprintf("the replica has not replayed the setup (%v)", err)
		}
		return ""
	})
	h := New(Options{Engine: resolve.NewEngine(resolve.Options{}), Pool: testenv.LoginPool(t, primary.URL("postgres")),
		PollInterval: time.Hour, Replicas: []Source{{Pool: testenv.LoginPool(t, replica.URL("postgres")), Engine: resolve.NewEngine(resolve.Options{})}}})
	t.Cleanup(h.Close)
	var feed sync.WaitGroup
	feed.Go(func() { h.RunFeed(ctx, FeedOptions{URL: primary.URL("postgres")}) })
	t.Cleanup(func() { cancel(); feed.Wait() })

	user := uuid.New()
	rec := &recorder{}
	if _, err := h.Subscribe(userSession(user), resolve.Request{Query: noteSubscription}, rec); err != nil {
		t.Fatal(err)
	}
	rec.waitAnswer(t, 10*time.Second, `"edges": []`)
	waitFollowedAndIdle(t, h, noteSubscription)
	insert := func(body string) {
		t.Helper()
		if _, err := primaryAdmin.Exec(ctx, `insert into note (owner, body) values ($1, $2)`, user, body); err != nil {
			t.Fatal(err)
		}
	}
	insert("read on the replica")
	rec.waitAnswer(t, 10*time.Second, `"read on the replica"`)
	if n := h.Stats().ReplicaRefreshes; n < 1 {
		t.Fatalf("%d refreshes on the replica", n)
	}

	// A replica that does not replay would answer without the new row: the primary answers instead.
	if _, err := replicaAdmin.Exec(ctx, `select pg_wal_replay_pause()`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = replicaAdmin.Exec(context.Background(), `select pg_wal_replay_resume()`) })
	before := h.Stats().ReplicaRefreshes
	insert("while the replica is paused")
	rec.waitAnswer(t, 10*time.Second, `"while the replica is paused"`)
	if n := h.Stats().ReplicaRefreshes; n != before {
		t.Fatalf("the paused replica answered %d refreshes", n-before)
	}
}
