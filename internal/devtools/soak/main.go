// Command soak runs pgreflect under concurrent mixed load for a bounded time and reports what operators care
// about: errors, acknowledged writes that are missing at the end (must be none), and the process's memory over
// time. It starts its own PostgreSQL cluster and the server in-process, sends traffic to 127.0.0.1 only,
// changes the schema every few seconds, stops and restarts PostgreSQL halfway through, and restarts the
// server (a graceful shutdown and a new one on the same address) at three quarters.
//
//	go run ./internal/devtools/soak -duration 3m     (make soak, SOAK_DURATION=3m)
//
// It exits 1 when an acknowledged write is lost or when requests fail outside the two outages.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/internal/dbsetup"
	"github.com/pgreflect/pgreflect/internal/pgcluster"
	"github.com/pgreflect/pgreflect/internal/stack"
)

// config is what a soak run does.
type config struct {
	duration    time.Duration
	clients     int
	ddlEvery    time.Duration
	downFor     time.Duration
	sampleEvery time.Duration
	maxRequests int64
}

func main() {
	var c config
	flag.DurationVar(&c.duration, "duration", 3*time.Minute, "how long the load runs")
	flag.IntVar(&c.clients, "clients", 8, "concurrent clients")
	flag.DurationVar(&c.ddlEvery, "ddl-every", 5*time.Second, "interval between schema changes")
	flag.DurationVar(&c.downFor, "down-for", 3*time.Second, "how long PostgreSQL stays stopped halfway through")
	flag.DurationVar(&c.sampleEvery, "sample-every", 10*time.Second, "interval between memory samples")
	flag.Int64Var(&c.maxRequests, "max-requests", 2_000_000, "stop after this many requests even before -duration")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("soak: ")
	ctx := context.Background()
	r, err := run(ctx, c)
	if err != nil {
		log.Fatal(err)
	}
	r.print(os.Stdout)
	if r.lost > 0 || r.errorsOutsideOutage > 0 {
		os.Exit(1)
	}
}

const (
	jwtSecret = "soak-secret-with-at-least-32-characters!"
	schema    = `
comment on schema public is '@graphql({"inflect_names": true})';
create table soak_item(id bigserial primary key, client int not null, seq int not null, note text);
create index on soak_item(client);
grant select, insert, update on soak_item to anon, service_role;
grant usage on sequence soak_item_id_seq to anon, service_role;
`
)

// run starts PostgreSQL and the server, drives the load and collects the report.
func run(ctx context.Context, c config) (*report, error) {
	dir, err := os.MkdirTemp("", "pgreflect-soak-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	// The server may run as an unprivileged OS user (when we are root), which must reach the data directory.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := pgcluster.FreePort()
	if err != nil {
		return nil, err
	}
	cluster, err := pgcluster.New(pgcluster.Options{DataDir: filepath.Join(dir, "data"), Port: port})
	if err != nil {
		return nil, err
	}
	if err := cluster.Init(ctx); err != nil {
		return nil, err
	}
	if err := cluster.Start(ctx); err != nil {
		return nil, err
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := cluster.Stop(stopCtx); err != nil {
			log.Print(err)
		}
	}()
	dbURL := cluster.URL("postgres")
	if err := prepare(ctx, dbURL); err != nil {
		return nil, err
	}

	u, err := url.Parse(dbURL)
	if err != nil {
		return nil, err
	}
	u.User = url.User("authenticator")
	keys, err := auth.NewKeys(jwtSecret)
	if err != nil {
		return nil, err
	}
	anon, _ := keys.SignAPIKey("anon", "soaksoaksoaksoaksoak")
	service, _ := keys.SignAPIKey("service_role", "soaksoaksoaksoaksoak")
	var logLines atomic.Int64
	// The server as `pgreflect serve` assembles it (pool, limits, metrics), minus the auth routes.
	server := &server{opts: stack.Options{RequestURL: u.String(), JWTSecret: jwtSecret, AnonKey: anon,
		ServiceRoleKey: service, SearchPath: []string{"public"},
		Logger: slog.New(slog.NewTextHandler(lineCounter{&logLines}, &slog.HandlerOptions{Level: slog.LevelWarn}))}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	if err := server.start(ctx, ln); err != nil {
		return nil, err
	}
	defer server.stop(context.WithoutCancel(ctx))
	endpoint := "http://" + ln.Addr().String() + "/graphql/v1"

	r := &report{duration: c.duration, clients: c.clients, started: time.Now(), errors: map[string]int{}, requests: map[string]int{}}
	loadCtx, stopLoad := context.WithTimeout(ctx, c.duration)
	defer stopLoad()
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: c.clients}}
	for i := 0; i < c.clients; i++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			r.drive(loadCtx, client, endpoint, anon, service, id, c.maxRequests/int64(c.clients))
		}(i)
	}
	wg.Add(4)
	go func() { defer wg.Done(); r.changeSchema(loadCtx, dbURL, c.ddlEvery) }()
	go func() { defer wg.Done(); r.sampleMemory(loadCtx, c.sampleEvery) }()
	go func() {
		defer wg.Done()
		r.outage(loadCtx, "PostgreSQL", c.duration/2, func(ctx context.Context) error {
			if err := cluster.Stop(ctx); err != nil {
				return err
			}
			time.Sleep(c.downFor)
			return cluster.Start(ctx)
		})
	}()
	go func() {
		defer wg.Done()
		r.outage(loadCtx, "the server", c.duration*3/4, func(ctx context.Context) error {
			addr := ln.Addr().String()
			if err := server.stop(ctx); err != nil {
				return err
			}
			next, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("listen again on %s: %w", addr, err)
			}
			return server.start(ctx, next)
		})
	}()
	wg.Wait()
	r.serverLogLines = logLines.Load()
	r.sample() // the last sample, after the load
	if err := r.checkWrites(ctx, dbURL); err != nil {
		return nil, err
	}
	return r, nil
}

func prepare(ctx context.Context, dbURL string) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(ctx)
	if err := dbsetup.Apply(ctx, conn); err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	if _, err := conn.Exec(ctx, schema); err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	return nil
}

// report accumulates what the run saw; its counters are shared by the load goroutines.
type report struct {
	duration time.Duration
	clients  int
	started  time.Time

	mu                  sync.Mutex
	requests            map[string]int // by kind
	ok                  int
	errors              map[string]int // by status and message
	errorsOutsideOutage int
	// acknowledged and latencies are fixed-size or grow with the table's ids only, so that the run's own
	// bookkeeping does not show as growth of the RSS it reports.
	acknowledged   idSet
	latencies      histogram
	outages        []*outage
	current        *outage // the outage under way, if any
	ddl, ddlFailed int
	rss            []rssSample
	serverLogLines int64
	lost           int
	lostIDs        []int64
	rows           int
}

type rssSample struct {
	at         time.Duration
	rssKB      int64
	heapKB     int64 // Go heap in use, to tell the process's own growth from the allocator's
	goroutines int
}

func takeSample(at time.Duration) rssSample {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return rssSample{at: at, rssKB: rssKB(), heapKB: int64(m.HeapInuse >> 10), goroutines: runtime.NumGoroutine()}
}

// drive is one client: inserts (recording the ids the server acknowledged), reads and updates, until ctx ends.
func (r *report) drive(ctx context.Context, c *http.Client, endpoint, anon, service string, id int, maxRequests int64) {
	for seq := 0; ctx.Err() == nil && int64(seq) < maxRequests; seq++ {
		var kind, query, key string
		switch seq % 4 {
		case 0, 2:
			kind, key = "insert", service
			query = fmt.Sprintf(`mutation { insertIntoSoakItemCollection(objects: [{client: %d, seq: %d, note: "n%d"}]) { records { id } } }`, id, seq, seq)
		case 1:
			kind, key = "query", anon
			query = fmt.Sprintf(`{ soakItemCollection(first: 5, filter: {client: {eq: %d}}, orderBy: [{id: DescNullsLast}]) { edges { node { id seq note } } } }`, id)
		case 3:
			kind, key = "update", service
			query = fmt.Sprintf(`mutation { updateSoakItemCollection(set: {note: "u%d"}, filter: {client: {eq: %d}, seq: {eq: %d}}, atMost: 1) { affectedCount } }`, seq, id, seq-1)
		}
		start := time.Now()
		status, body, err := post(ctx, c, endpoint, key, query)
		elapsed := time.Since(start)
		if ctx.Err() != nil {
			return // the run ended during the request: neither success nor failure
		}
		if !r.record(kind, status, body, err, elapsed) {
			// A real client backs off after a failure; without a pause a refused connection fails in
			// microseconds and the outages turn into a busy loop.
			time.Sleep(failurePause)
		}
	}
}

func post(ctx context.Context, c *http.Client, endpoint, key, query string) (int, []byte, error) {
	payload, _ := json.Marshal(map[string]string{"query": query})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(payload))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("apikey", key)
	req.Header.Set("content-type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// failurePause is how long a client waits after a failed request.
const failurePause = 20 * time.Millisecond

// record counts one answer and reports whether it was a success.
// requestIDs are grouped away: every failure carries its own.
var requestIDs = regexp.MustCompile(`\(request id [^)]*\)`)

func (r *report) record(kind string, status int, body []byte, err error, elapsed time.Duration) bool {
	var resp struct {
		Data   map[string]json.RawMessage `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	failure := ""
	switch {
	case err != nil:
		failure = "transport: " + err.Error()
	case json.Unmarshal(body, &resp) != nil:
		failure = fmt.Sprintf("%d: not JSON: %.80s", status, body)
	case status != http.StatusOK || len(resp.Errors) > 0 || resp.Data == nil:
		msg := ""
		if len(resp.Errors) > 0 {
			msg = requestIDs.ReplaceAllString(resp.Errors[0].Message, "(request id …)")
		}
		failure = fmt.Sprintf("%d: %.120s", status, msg)
	}
	var id int64
	if failure == "" && kind == "insert" {
		var ins struct {
			Records []struct {
				ID json.Number `json:"id"`
			} `json:"records"`
		}
		if json.Unmarshal(resp.Data["insertIntoSoakItemCollection"], &ins) != nil || len(ins.Records) != 1 {
			failure = fmt.Sprintf("%d: insert answered without its record: %.120s", status, body)
		} else if id, err = ins.Records[0].ID.Int64(); err != nil {
			failure = fmt.Sprintf("insert answered id %q", ins.Records[0].ID)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests[kind]++
	r.latencies.add(elapsed)
	if failure == "" {
		r.ok++
		for _, o := range r.outages {
			if !o.end.IsZero() && o.firstOK.IsZero() {
				o.firstOK = time.Now()
			}
		}
		if kind == "insert" {
			r.acknowledged.add(id)
		}
		return true
	}
	r.errors[kind+" "+failure]++
	// Requests in flight when PostgreSQL or the server stopped, and those until it is back, fail by design; a
	// grace period after the restart covers connections the pool or the client still held.
	if r.current != nil {
		return false
	}
	if n := len(r.outages); n > 0 && time.Since(r.outages[n-1].end) < outageGrace {
		r.outages[n-1].lastFailure = time.Now()
		return false
	}
	r.errorsOutsideOutage++
	return false
}

// changeSchema adds and drops a column and a table every interval, as a migration under load would.
func (r *report) changeSchema(ctx context.Context, dbURL string, every time.Duration) {
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			conn.Close(context.Background())
		}
	}()
	t := time.NewTicker(every)
	defer t.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var sql string
		if n%2 == 0 {
			sql = fmt.Sprintf("alter table soak_item add column extra_%d text; create table soak_side_%d(id int primary key)", n, n)
		} else {
			sql = fmt.Sprintf("alter table soak_item drop column extra_%d; drop table soak_side_%d", n-1, n-1)
		}
		err := func() error {
			if conn == nil || conn.IsClosed() {
				c, err := pgx.Connect(ctx, dbURL)
				if err != nil {
					return err
				}
				conn = c
			}
			_, err := conn.Exec(ctx, sql)
			if err != nil {
				conn.Close(context.Background())
				conn = nil
			}
			return err
		}()
		r.mu.Lock()
		r.ddl++
		if err != nil && ctx.Err() == nil {
			r.ddlFailed++
			if n%2 == 0 {
				n-- // the add did not happen: add again rather than drop what is not there
			}
		}
		r.mu.Unlock()
	}
}

// outageGrace is how long after an outage failures are still counted as the outage's.
const outageGrace = 5 * time.Second

// outage is one planned interruption.
type outage struct {
	what                 string
	start, end           time.Time
	firstOK, lastFailure time.Time
}

// outage runs interrupt at the given offset into the run and records the interruption.
func (r *report) outage(ctx context.Context, what string, at time.Duration, interrupt func(context.Context) error) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(at):
	}
	o := &outage{what: what, start: time.Now()}
	r.mu.Lock()
	r.current = o
	r.outages = append(r.outages, o)
	r.mu.Unlock()
	if err := interrupt(context.WithoutCancel(ctx)); err != nil {
		log.Printf("restart %s: %v", what, err)
	}
	r.mu.Lock()
	o.end = time.Now()
	r.current = nil
	r.mu.Unlock()
}

// server is the API with its HTTP server, restartable.
type server struct {
	opts   stack.Options
	st     *stack.Stack
	cancel context.CancelFunc
	served chan error
}

func (s *server) start(ctx context.Context, ln net.Listener) error {
	st, err := stack.New(ctx, s.opts)
	if err != nil {
		ln.Close()
		return fmt.Errorf("server: %w", err)
	}
	serveCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.st, s.cancel, s.served = st, cancel, make(chan error, 1)
	go func() { s.served <- st.Serve(serveCtx, ln) }()
	return nil
}

// stop shuts the server down gracefully: requests in flight are answered, new connections refused.
func (s *server) stop(context.Context) error {
	if s.st == nil {
		return nil
	}
	s.cancel()
	err := <-s.served
	s.st.Close()
	s.st = nil
	return err
}

func (r *report) sampleMemory(ctx context.Context, every time.Duration) {
	start := time.Now()
	r.mu.Lock()
	r.rss = append(r.rss, takeSample(0))
	r.mu.Unlock()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.mu.Lock()
			r.rss = append(r.rss, takeSample(time.Since(start).Round(time.Second)))
			r.mu.Unlock()
		}
	}
}

func (r *report) sample() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rss = append(r.rss, takeSample(-1))
}

// rssKB is this process's resident set size (VmRSS in /proc/self/status), 0 where there is no /proc.
func rssKB() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// checkWrites compares the acknowledged ids with the table's rows.
func (r *report) checkWrites(ctx context.Context, dbURL string) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("connect for the final check: %w", err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "select id from soak_item")
	if err != nil {
		return fmt.Errorf("read back: %w", err)
	}
	present := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return err
		}
		present[id] = true
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read back: %w", err)
	}
	r.rows = len(present)
	r.acknowledged.each(func(id int64) {
		if !present[id] {
			r.lost++
			if len(r.lostIDs) < 20 {
				r.lostIDs = append(r.lostIDs, id)
			}
		}
	})
	if r.acknowledged.n == 0 {
		return errors.New("no insert was acknowledged: the load did not run")
	}
	return nil
}

func (r *report) print(w io.Writer) {
	total := 0
	kinds := make([]string, 0, len(r.requests))
	for k, n := range r.requests {
		total += n
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kinds)
	pct := r.latencies.percentile
	fmt.Fprintf(w, "duration %v, %d clients, %d requests (%s), %.0f/s\n", r.duration, r.clients, total,
		strings.Join(kinds, ", "), float64(total)/r.duration.Seconds())
	fmt.Fprintf(w, "latency p50 %v, p99 %v, max %v (upper bounds of 12%% wide buckets)\n", pct(0.5), pct(0.99), pct(1))
	failed := total - r.ok
	fmt.Fprintf(w, "ok %d, failed %d (outside the outages: %d)\n", r.ok, failed, r.errorsOutsideOutage)
	msgs := make([]string, 0, len(r.errors))
	for m := range r.errors {
		msgs = append(msgs, m)
	}
	sort.Slice(msgs, func(i, j int) bool { return r.errors[msgs[i]] > r.errors[msgs[j]] })
	for _, m := range msgs {
		fmt.Fprintf(w, "  %6d  %s\n", r.errors[m], m)
	}
	for _, o := range r.outages {
		lastFailure := "none after it was back"
		if o.lastFailure.After(o.end) {
			lastFailure = o.lastFailure.Sub(o.end).Round(time.Millisecond).String() + " after it was back"
		}
		fmt.Fprintf(w, "%s stopped at %v for %v; first success %v after it was back; last failure %s\n", o.what,
			o.start.Sub(r.started).Round(time.Second), o.end.Sub(o.start).Round(100*time.Millisecond),
			o.firstOK.Sub(o.end).Round(time.Millisecond), lastFailure)
	}
	fmt.Fprintf(w, "schema changes %d (failed %d)\n", r.ddl, r.ddlFailed)
	fmt.Fprintf(w, "acknowledged inserts %d, rows at the end %d, lost %d %v\n", r.acknowledged.n, r.rows, r.lost, r.lostIDs)
	fmt.Fprintf(w, "server log lines %d\n", r.serverLogLines)
	fmt.Fprintln(w, "RSS over time:")
	for _, s := range r.rss {
		at := s.at.String()
		if s.at < 0 {
			at = "end"
		}
		fmt.Fprintf(w, "  %6s  RSS %6.1f MB  heap %6.1f MB  %4d goroutines\n", at, float64(s.rssKB)/1024, float64(s.heapKB)/1024, s.goroutines)
	}
}

// idSet holds int64 ids as a bitmap: the table's ids are dense (a sequence), so a million of them take 128 KB.
type idSet struct {
	bits []uint64
	n    int
}

func (s *idSet) add(id int64) {
	if id < 0 {
		return
	}
	w := int(id / 64)
	for len(s.bits) <= w {
		s.bits = append(s.bits, 0)
	}
	if s.bits[w]&(1<<(id%64)) == 0 {
		s.bits[w] |= 1 << (id % 64)
		s.n++
	}
}

func (s *idSet) each(fn func(int64)) {
	for w, b := range s.bits {
		for i := 0; i < 64; i++ {
			if b&(1<<i) != 0 {
				fn(int64(w*64 + i))
			}
		}
	}
}

// histogram counts durations in buckets growing by 12% from 10µs, enough for percentiles of a soak.
type histogram struct {
	counts [160]int
	total  int
}

const histogramBase = 10 * time.Microsecond

func (h *histogram) add(d time.Duration) {
	i := 0
	for bound := float64(histogramBase); time.Duration(bound) < d && i < len(h.counts)-1; bound *= 1.12 {
		i++
	}
	h.counts[i]++
	h.total++
}

// percentile is the upper bound of the bucket holding the p-th fraction of the durations.
func (h *histogram) percentile(p float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	rank := int(p * float64(h.total-1))
	seen := 0
	bound := float64(histogramBase)
	for i, c := range h.counts {
		seen += c
		if seen > rank || i == len(h.counts)-1 {
			return time.Duration(bound).Round(100 * time.Microsecond)
		}
		bound *= 1.12
	}
	return 0
}

// lineCounter counts the server's log lines of level WARN and above (failures, not the per-request lines).
type lineCounter struct{ n *atomic.Int64 }

func (c lineCounter) Write(p []byte) (int, error) {
	c.n.Add(int64(bytes.Count(p, []byte("\n"))))
	return len(p), nil
}
