// Package live serves GraphQL subscriptions as live queries: it keeps every subscription of an instance in
// cohorts of the same document, variables, role and search path, refreshes a cohort when a table it reads
// changes (or at the poll interval when no change feed is available), and pushes to each subscriber the new
// answer when it differs from the last one that subscriber was sent. Hasura's multiplexed live queries are the
// model; how each subscriber's claims reach row level security is in resolve.RefreshLive.
//
// The transports (graphql-transport-ws over WebSocket, graphql-sse) live in package httpapi; this package only
// knows subscribers by the Sink they deliver to.
package live

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/pgreflect/pgreflect/resolve"
)

// Sink receives what a subscription produces. Its methods are called from the hub's workers and must not block:
// a transport queues the message, and when its queue is full it drops the consumer (closes its socket) and
// calls Hub.Unsubscribe.
type Sink interface {
	// Next delivers a new answer.
	Next(body []byte)
	// End delivers the answer that ends the subscription: a request error, the same body a query would get.
	// The hub has forgotten the subscription when End is called.
	End(body []byte)
	// Unavailable says the database could not be reached: the subscription is over, and a client that
	// reconnects resumes it. The hub has forgotten the subscription.
	Unavailable()
}

// Options configure a Hub.
type Options struct {
	Engine *resolve.Engine
	// Pool runs the refreshes, as the login role that switches to each cohort's role.
	Pool *pgxpool.Pool
	// PollInterval refreshes every cohort this often when no change feed tells which tables changed, and those
	// reading what a feed cannot name (functions, views) even with one; default 1s.
	PollInterval time.Duration
	// Coalesce is how long changes are gathered before the cohorts they touch are refreshed, so that a burst of
	// writes costs one refresh; default 20ms.
	Coalesce time.Duration
	// Workers bounds the refreshes running at once (each holds a pool connection); default 2.
	Workers int
	// MaxSubscriptions bounds the subscriptions of the instance; default 10,000.
	MaxSubscriptions int
	// RefreshTimeout bounds one refresh's wait for a connection and its round trip; default 10s.
	RefreshTimeout time.Duration
	// Replicas are read replicas of Pool's database, each with its engine: a refresh for a change the feed
	// reported runs on one of them, in turn, when it has replayed the change, else on Pool.
	Replicas []Source
	Logger   *slog.Logger
	// Registerer receives the hub's metrics when set.
	Registerer prometheus.Registerer
	// TracerProvider, when set, receives a span of each refresh (internal/tracing).
	TracerProvider trace.TracerProvider
}

// Source is a database that answers refreshes, with the engine of its schemas.
type Source struct {
	Pool   *pgxpool.Pool
	Engine *resolve.Engine
}

// ErrTooManySubscriptions is returned by Subscribe when the instance holds MaxSubscriptions.
var ErrTooManySubscriptions = errors.New("too many subscriptions on this server")

// Hub holds the subscriptions of an instance.
type Hub struct {
	opts    Options
	metrics *metrics

	mu      sync.Mutex
	cohorts map[cohortKey]*cohort
	count   int
	// queue lists the cohorts waiting for a worker, each at most once (cohort.queued).
	queue []*cohort
	// schemaChanges counts Invalidate's calls: a refresh that began before one may have run the old schema's
	// statement on the new tables, and its failure ends no subscription (deliver).
	schemaChanges uint64
	// feed reports whether a change feed names the tables that change; without one every cohort is polled.
	feed bool
	// covered are the tables the feed follows, refused those it cannot; a cohort reading
	// anything else is polled.
	covered, refused map[resolve.RelationName]bool
	// wanted carries tables cohorts read to the feed, which adds them to the publication; schemaChanged and
	// publicationChanged tell it to read the publication again.
	wanted                            chan []resolve.RelationName
	schemaChanged, publicationChanged chan struct{}

	// nextReplica spreads refreshes over the replicas.
	nextReplica atomic.Uint64

	wake   chan struct{}
	cancel context.CancelFunc
	done   sync.WaitGroup
}

type cohortKey struct {
	role, searchPath                string
	query, operationName, variables string
	// stream is the one subscriber of a stream, which has a position of its own and shares nothing.
	stream *Subscription
}

// cohort is the subscriptions that share one statement.
type cohort struct {
	key  cohortKey
	req  resolve.Request
	subs map[*Subscription]bool
	// newcomers have had no answer yet; they are refreshed without waiting for a change.
	newcomers []*Subscription
	// dirty marks a cohort whose tables changed since its last refresh began.
	dirty  bool
	queued bool
	busy   bool
	reads  resolve.Reads
	// known is false until a refresh told what the cohort reads: until then every change refreshes it.
	known bool
	// lsn is the latest commit position of the changes that made the cohort dirty, when the feed reported them
	// (0 for a poll, a DDL, a newcomer): a replica that has replayed it may answer the refresh.
	lsn pglogrepl.LSN
}

// Subscription is one subscriber's live query.
type Subscription struct {
	session resolve.Session
	sink    Sink
	cohort  *cohort
	// claimsKey groups subscribers whose claims are the same, who get one evaluation between them.
	claimsKey string
	last      [sha256.Size]byte
	sent      bool
}

// New starts a hub's workers; Close stops them.
func New(opts Options) *Hub {
	opts.PollInterval = cmpOr(opts.PollInterval, time.Second)
	opts.Coalesce = cmpOr(opts.Coalesce, 20*time.Millisecond)
	opts.RefreshTimeout = cmpOr(opts.RefreshTimeout, 10*time.Second)
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.MaxSubscriptions <= 0 {
		opts.MaxSubscriptions = 10000
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	h := &Hub{opts: opts, metrics: newMetrics(opts.Registerer), cohorts: map[cohortKey]*cohort{}, wake: make(chan struct{}, 1),
		covered: map[resolve.RelationName]bool{}, refused: map[resolve.RelationName]bool{}, wanted: make(chan []resolve.RelationName, 64),
		schemaChanged: make(chan struct{}, 1), publicationChanged: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	for range opts.Workers {
		h.done.Go(func() { h.work(ctx) })
	}
	h.done.Go(func() { h.poll(ctx) })
	return h
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Close stops the workers. Subscriptions still held are left to their transports, which close with the server.
func (h *Hub) Close() {
	h.cancel()
	h.done.Wait()
}

// SetFeed says whether a change feed now reports changes (Changed); without one the hub polls every cohort.
func (h *Hub) SetFeed(on bool) {
	h.mu.Lock()
	h.feed = on
	h.mu.Unlock()
}

// Subscribe adds a subscription of req for the session; its first answer comes as soon as a worker is free.
func (h *Hub) Subscribe(s resolve.Session, req resolve.Request, sink Sink) (*Subscription, error) {
	claims, err := json.Marshal(s.Claims)
	if err != nil {
		return nil, err
	}
	key := cohortKey{role: s.Role, searchPath: strings.Join(s.SearchPath, ","), query: req.Query,
		operationName: req.OperationName, variables: string(req.Variables)}
	sub := &Subscription{session: s, sink: sink, claimsKey: string(claims)}
	if resolve.IsStream(req) {
		key.stream = sub
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.count >= h.opts.MaxSubscriptions {
		return nil, ErrTooManySubscriptions
	}
	c := h.cohorts[key]
	if c == nil {
		c = &cohort{key: key, req: req, subs: map[*Subscription]bool{}}
		h.cohorts[key] = c
		h.metrics.cohorts.Inc()
	}
	sub.cohort = c
	c.subs[sub] = true
	c.newcomers = append(c.newcomers, sub)
	h.count++
	h.metrics.subscriptions.Inc()
	h.enqueueLocked(c)
	return sub, nil
}

// Unsubscribe forgets a subscription (the client completed it or went away); it is safe to call more than once.
func (h *Hub) Unsubscribe(sub *Subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.forgetLocked(sub)
}

func (h *Hub) forgetLocked(sub *Subscription) {
	c := sub.cohort
	if c == nil || !c.subs[sub] {
		return
	}
	delete(c.subs, sub)
	c.newcomers = slices.DeleteFunc(c.newcomers, func(s *Subscription) bool { return s == sub })
	h.count--
	h.metrics.subscriptions.Dec()
	if len(c.subs) == 0 && !c.busy {
		h.dropCohortLocked(c)
	}
}

func (h *Hub) dropCohortLocked(c *cohort) {
	if h.cohorts[c.key] == c {
		delete(h.cohorts, c.key)
		h.metrics.cohorts.Dec()
	}
}

// Changed refreshes the cohorts that read one of the relations; an empty list refreshes every cohort (after a
// DDL, or when the feed lost track).
func (h *Hub) Changed(relations []resolve.RelationName) { h.changedAt(relations, 0) }

// changedAt is Changed for changes committed at lsn (0: unknown, only the primary answers).
func (h *Hub) changedAt(relations []resolve.RelationName, lsn pglogrepl.LSN) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.cohorts {
		if len(relations) == 0 || !c.known || c.reads.All || intersects(c.reads.Relations, relations) {
			if !c.dirty || c.lsn != 0 {
				// A replica may answer only when every change the refresh must show was reported with its position.
				c.lsn = max(c.lsn, lsn)
				if lsn == 0 {
					c.lsn = 0
				}
			}
			c.dirty = true
			h.enqueueLocked(c)
		}
	}
}

// Invalidate refreshes every cohort: the schema changed (a DDL, a GRANT, a COMMENT), so a subscription may now
// fail the way a query would, or see other rows. The feed reads its publication again (publishWanted).
func (h *Hub) Invalidate() {
	h.mu.Lock()
	h.schemaChanges++
	h.mu.Unlock()
	h.Changed(nil)
	select {
	case h.schemaChanged <- struct{}{}:
	default: // one is pending: it reads the publication after this change
	}
}

// PublicationsChanged has the feed read its publication again, which another instance (or anyone) may have
// changed: a table taken out of it is added again. It is no schema change: no cohort is refreshed for it.
func (h *Hub) PublicationsChanged() {
	select {
	case h.publicationChanged <- struct{}{}:
	default: // one is pending: it reads the publication after this change
	}
}

func intersects(a, b []resolve.RelationName) bool {
	for _, x := range b {
		if slices.Contains(a, x) {
			return true
		}
	}
	return false
}

func (h *Hub) enqueueLocked(c *cohort) {
	if c.queued || c.busy {
		return // a running refresh requeues it when it ends
	}
	c.queued = true
	h.queue = append(h.queue, c)
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// poll marks cohorts dirty at the poll interval: all of them without a feed, else those the feed does not follow.
func (h *Hub) poll(ctx context.Context) {
	t := time.NewTicker(h.opts.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		h.mu.Lock()
		for _, c := range h.cohorts {
			if !h.followedLocked(c) {
				c.dirty, c.lsn = true, 0
				h.enqueueLocked(c)
			}
		}
		h.mu.Unlock()
	}
}

// familyBudget bounds the subscribers of the cohorts one refresh takes together: one statement executes their
// queries one after another, so a larger family waits longer for its answers, while other workers could have
// refreshed part of it.
const familyBudget = 1000

// takeLocked takes the first queued cohort and, unless it is a stream, the queued cohorts of the same document,
// role and search path (the same subscription with other variables), up to familyBudget subscribers: one
// statement refreshes them all. They are busy from now: a change meanwhile marks them dirty and they are queued
// again when this refresh ends, so that no two workers refresh one cohort at once.
func (h *Hub) takeLocked() []*cohort {
	if len(h.queue) == 0 {
		return nil
	}
	first := h.queue[0]
	family := []*cohort{first}
	budget := familyBudget - len(first.subs)
	rest := h.queue[:0]
	for _, c := range h.queue[1:] {
		if first.key.stream == nil && c.key.stream == nil && budget > 0 && c.key.role == first.key.role &&
			c.key.searchPath == first.key.searchPath && c.key.query == first.key.query &&
			c.key.operationName == first.key.operationName {
			family = append(family, c)
			budget -= len(c.subs)
			continue
		}
		rest = append(rest, c)
	}
	clear(h.queue[len(rest):])
	h.queue = rest
	for _, c := range family {
		c.queued, c.busy = false, true
	}
	return family
}

// work takes queued cohorts and refreshes them, a cohort in one worker at a time so that a subscriber's answers
// leave in the order they were computed.
func (h *Hub) work(ctx context.Context) {
	for {
		h.mu.Lock()
		family := h.takeLocked()
		h.mu.Unlock()
		if family == nil {
			select {
			case <-ctx.Done():
				return
			case <-h.wake:
				continue
			}
		}
		h.mu.Lock()
		dirty := slices.ContainsFunc(family, func(c *cohort) bool { return c.dirty })
		h.mu.Unlock()
		if dirty {
			// Let a burst of writes land before reading: one refresh answers all of them.
			select {
			case <-ctx.Done():
				h.mu.Lock()
				for _, c := range family {
					c.busy = false
				}
				h.mu.Unlock()
				return
			case <-time.After(h.opts.Coalesce):
			}
		}
		h.tracedRefresh(ctx, family)
		// Another worker may sleep while this one found the queue non-empty.
		h.mu.Lock()
		if len(h.queue) > 0 {
			select {
			case h.wake <- struct{}{}:
			default:
			}
		}
		h.mu.Unlock()
	}
}

// tracedRefresh is refresh in a span of its own (a root: no request is waiting), when there are traces; the
// engine notes on it whether the live query's compiled form came from the cache.
func (h *Hub) tracedRefresh(ctx context.Context, family []*cohort) {
	if h.opts.TracerProvider == nil {
		h.refresh(ctx, family)
		return
	}
	ctx, span := h.opts.TracerProvider.Tracer("github.com/pgreflect/pgreflect/internal/live").Start(ctx, "live.refresh",
		trace.WithAttributes(attribute.String("graphql.operation.type", "subscription"), attribute.String("graphql.operation.name", family[0].req.OperationName)))
	defer span.End()
	h.refresh(ctx, family)
}

// pending is what one refresh does for a cohort: its subscribers to answer, grouped by claims (one evaluation
// per distinct set of claims).
type pending struct {
	c        *cohort
	targets  []*Subscription
	groups   map[string][]*Subscription
	order    []string
	sessions []resolve.Session
	// schemaAt is the hub's schemaChanges when the refresh began.
	schemaAt uint64
}

// begin takes the subscribers of c that need an answer: all when its tables changed, else the newcomers. lsn
// is the commit position a replica must have replayed to answer.
func (h *Hub) begin(c *cohort) (p pending, lsn pglogrepl.LSN) {
	h.mu.Lock()
	p.c, p.schemaAt = c, h.schemaChanges
	if c.dirty {
		for s := range c.subs {
			p.targets = append(p.targets, s)
		}
		lsn = c.lsn
	} else {
		p.targets = c.newcomers
	}
	c.dirty, c.newcomers, c.lsn = false, nil, 0
	h.mu.Unlock()
	p.groups = map[string][]*Subscription{}
	for _, s := range p.targets {
		if _, ok := p.groups[s.claimsKey]; !ok {
			p.order = append(p.order, s.claimsKey)
			p.sessions = append(p.sessions, s.session)
		}
		p.groups[s.claimsKey] = append(p.groups[s.claimsKey], s)
	}
	return p, lsn
}

// end releases a refreshed cohort: dropped when nobody is left, queued again when it changed meanwhile.
func (h *Hub) end(c *cohort) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c.busy = false
	switch {
	case len(c.subs) == 0:
		h.dropCohortLocked(c)
	case c.dirty || len(c.newcomers) > 0:
		h.enqueueLocked(c)
	}
}

// refresh answers the family's subscribers that need it, in one round trip.
func (h *Hub) refresh(ctx context.Context, family []*cohort) {
	var work []pending
	var cohorts []resolve.LiveCohort
	var lsn pglogrepl.LSN
	subscribers, evaluations, pushed := 0, 0, 0
	for _, c := range family {
		defer h.end(c)
		p, at := h.begin(c)
		if len(p.targets) == 0 {
			continue
		}
		work = append(work, p)
		cohorts = append(cohorts, resolve.LiveCohort{Request: c.req, Sessions: p.sessions})
		lsn = max(lsn, at)
		subscribers += len(p.targets)
		evaluations += len(p.sessions)
	}
	if len(work) == 0 {
		return
	}
	// The refresh's span (tracedRefresh's, or a no-op) says how much it did: the subscribers it answered, the
	// evaluations they took (one per distinct claims), and how many answers changed and were pushed.
	span := trace.SpanFromContext(ctx)
	defer func() {
		if span.IsRecording() {
			span.SetAttributes(attribute.Int("pgreflect.live.cohorts", len(work)), attribute.Int("pgreflect.live.subscribers", subscribers),
				attribute.Int("pgreflect.live.evaluations", evaluations), attribute.Int("pgreflect.live.pushed", pushed))
		}
	}()
	start := time.Now()
	result, err := h.run(ctx, cohorts, lsn)
	h.metrics.refreshed(time.Since(start), evaluations, result.Statements)
	if err != nil {
		span.SetStatus(codes.Error, "the refresh failed")
		if ctx.Err() != nil {
			return // the hub is closing
		}
		h.opts.Logger.Warn("live: refresh failed", "error", err, "role", family[0].key.role, "subscribers", subscribers)
		h.mu.Lock()
		for _, p := range work {
			for _, s := range p.targets {
				h.forgetLocked(s)
			}
		}
		h.mu.Unlock()
		for _, p := range work {
			for _, s := range p.targets {
				s.sink.Unavailable()
			}
		}
		return
	}
	for k, p := range work {
		pushed += h.deliver(p, result.Cohorts[k])
	}
}

// deliver pushes a cohort's answers to the subscribers whose answer changed, ends those whose answer is final,
// and returns how many it pushed. A final answer of a refresh that a schema change overtook is dropped: the
// cohort is refreshed again (Invalidate made it dirty), and ends then if the failure stands under the new schema.
func (h *Hub) deliver(p pending, result resolve.LiveRefresh) (pushed int) {
	c := p.c
	h.mu.Lock()
	overtaken := h.schemaChanges != p.schemaAt
	c.reads, c.known = result.Reads, true
	var missing []resolve.RelationName
	if h.feed {
		missing = h.uncoveredLocked(c)
	}
	h.mu.Unlock()
	h.want(missing)
	for i, key := range p.order {
		answer := result.Answers[i]
		if answer.Body == nil {
			continue // a stream with no new rows
		}
		if c.key.stream != nil && !answer.Final {
			// The next batch starts after this one; a full batch may have more behind it.
			h.mu.Lock()
			c.req.StreamCursor = answer.Cursor
			c.dirty = c.dirty || answer.More
			h.mu.Unlock()
		}
		if answer.Final && overtaken {
			continue
		}
		sum := sha256.Sum256(answer.Body)
		for _, s := range p.groups[key] {
			if answer.Final {
				h.mu.Lock()
				live := c.subs[s]
				h.forgetLocked(s)
				h.mu.Unlock()
				if live {
					s.sink.End(answer.Body)
				}
				continue
			}
			// Only the worker refreshing the cohort touches last and sent.
			if s.sent && s.last == sum {
				continue
			}
			h.mu.Lock()
			live := c.subs[s]
			h.mu.Unlock()
			if !live {
				continue
			}
			s.last, s.sent = sum, true
			pushed++
			h.metrics.pushed()
			s.sink.Next(answer.Body)
		}
	}
	return pushed
}

// run answers the cohorts within the refresh timeout: on a replica that has replayed lsn when there is one,
// else on the primary.
func (h *Hub) run(ctx context.Context, cohorts []resolve.LiveCohort, lsn pglogrepl.LSN) (resolve.LiveRefreshes, error) {
	ctx, cancel := context.WithTimeout(ctx, h.opts.RefreshTimeout)
	defer cancel()
	if n := len(h.opts.Replicas); n > 0 && lsn != 0 {
		r := h.opts.Replicas[(h.nextReplica.Add(1)-1)%uint64(n)]
		result, err := refreshOn(ctx, Source{Pool: r.Pool, Engine: r.Engine}, cohorts, lsn.String())
		if err == nil && !anyFinal(result) {
			trace.SpanFromContext(ctx).SetAttributes(attribute.Bool("pgreflect.replica", true))
			h.metrics.replicaRefreshes.Add(1)
			return result, nil
		}
		if ctx.Err() != nil {
			return result, err
		}
		// Behind, or away, or an answer that would end a subscription: the primary answers. A replica's engine
		// reloads its schemas only once the replica has replayed a schema change, so until then a document
		// written for the new schema fails to validate there although the replica has the rows.
	}
	return refreshOn(ctx, Source{Pool: h.opts.Pool, Engine: h.opts.Engine}, cohorts, "")
}

// anyFinal reports whether an answer of the refresh ends its subscription.
func anyFinal(r resolve.LiveRefreshes) bool {
	for _, c := range r.Cohorts {
		for _, a := range c.Answers {
			if a.Final {
				return true
			}
		}
	}
	return false
}

func refreshOn(ctx context.Context, src Source, cohorts []resolve.LiveCohort, lsn string) (resolve.LiveRefreshes, error) {
	conn, err := src.Pool.Acquire(ctx)
	if err != nil {
		return resolve.LiveRefreshes{}, err
	}
	defer conn.Release()
	return src.Engine.RefreshLiveCohorts(ctx, conn.Conn(), cohorts, lsn)
}

// Stats are the hub's counts at one moment: what it holds, and what it has done since it started.
type Stats struct {
	Subscriptions, Cohorts                int
	Refreshes, Evaluations, Pushes, Drops int64
	// Statements are the statements that executed the refreshes' queries (Evaluations are the executions).
	Statements int64
	// ReplicaRefreshes are the refreshes a read replica answered.
	ReplicaRefreshes int64
}

// Stats counts the subscriptions and cohorts, and the work done.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.metrics
	return Stats{Subscriptions: h.count, Cohorts: len(h.cohorts), Refreshes: m.nRefreshes.Load(),
		Evaluations: m.nEvaluations.Load(), Statements: m.nStatements.Load(), Pushes: m.nPushes.Load(), Drops: m.nDrops.Load(),
		ReplicaRefreshes: m.replicaRefreshes.Load()}
}
