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
	// feed reports whether a change feed names the tables that change; without one every cohort is polled.
	feed bool
	// covered are the tables the feed follows, refused those it cannot; a cohort reading
	// anything else is polled.
	covered, refused map[resolve.RelationName]bool
	// wanted carries tables cohorts read to the feed, which adds them to the publication.
	wanted chan []resolve.RelationName

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
		covered: map[resolve.RelationName]bool{}, refused: map[resolve.RelationName]bool{}, wanted: make(chan []resolve.RelationName, 64)}
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
// fail the way a query would, or see other rows.
func (h *Hub) Invalidate() { h.Changed(nil) }

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

// work takes queued cohorts and refreshes them, one cohort per worker at a time so that a subscriber's answers
// leave in the order they were computed.
func (h *Hub) work(ctx context.Context) {
	for {
		h.mu.Lock()
		var c *cohort
		if len(h.queue) > 0 {
			c, h.queue = h.queue[0], h.queue[1:]
			// Busy from now: a change meanwhile marks it dirty and it is queued again when this refresh ends,
			// so that no two workers refresh one cohort at once.
			c.queued, c.busy = false, true
		}
		h.mu.Unlock()
		if c == nil {
			select {
			case <-ctx.Done():
				return
			case <-h.wake:
				continue
			}
		}
		h.mu.Lock()
		dirty := c.dirty
		h.mu.Unlock()
		if dirty {
			// Let a burst of writes land before reading: one refresh answers all of them.
			select {
			case <-ctx.Done():
				h.mu.Lock()
				c.busy = false
				h.mu.Unlock()
				return
			case <-time.After(h.opts.Coalesce):
			}
		}
		h.tracedRefresh(ctx, c)
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
func (h *Hub) tracedRefresh(ctx context.Context, c *cohort) {
	if h.opts.TracerProvider == nil {
		h.refresh(ctx, c)
		return
	}
	ctx, span := h.opts.TracerProvider.Tracer("github.com/pgreflect/pgreflect/internal/live").Start(ctx, "live.refresh",
		trace.WithAttributes(attribute.String("graphql.operation.type", "subscription"), attribute.String("graphql.operation.name", c.req.OperationName)))
	defer span.End()
	h.refresh(ctx, c)
}

// refresh answers the cohort's subscribers that need it: all when its tables changed, else the newcomers.
func (h *Hub) refresh(ctx context.Context, c *cohort) {
	h.mu.Lock()
	var targets []*Subscription
	var lsn pglogrepl.LSN
	if c.dirty {
		for s := range c.subs {
			targets = append(targets, s)
		}
		lsn = c.lsn
	} else {
		targets = c.newcomers
	}
	c.dirty, c.newcomers, c.lsn = false, nil, 0
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		c.busy = false
		switch {
		case len(c.subs) == 0:
			h.dropCohortLocked(c)
		case c.dirty || len(c.newcomers) > 0:
			h.enqueueLocked(c)
		}
		h.mu.Unlock()
	}()
	if len(targets) == 0 {
		return
	}
	// One evaluation per distinct set of claims.
	groups := map[string][]*Subscription{}
	var sessions []resolve.Session
	var order []string
	for _, s := range targets {
		if _, ok := groups[s.claimsKey]; !ok {
			order = append(order, s.claimsKey)
			sessions = append(sessions, s.session)
		}
		groups[s.claimsKey] = append(groups[s.claimsKey], s)
	}
	// The refresh's span (tracedRefresh's, or a no-op) says how much it did: the subscribers it answered, the
	// evaluations they took (one per distinct claims), and how many answers changed and were pushed.
	span := trace.SpanFromContext(ctx)
	pushed := 0
	defer func() {
		if span.IsRecording() {
			span.SetAttributes(attribute.Int("pgreflect.live.subscribers", len(targets)),
				attribute.Int("pgreflect.live.evaluations", len(sessions)), attribute.Int("pgreflect.live.pushed", pushed))
		}
	}()
	start := time.Now()
	result, err := h.run(ctx, c.req, sessions, lsn)
	h.metrics.refreshed(time.Since(start), len(sessions), result.Statements)
	if err != nil {
		span.SetStatus(codes.Error, "the refresh failed")
		if ctx.Err() != nil {
			return // the hub is closing
		}
		h.opts.Logger.Warn("live: refresh failed", "error", err, "role", c.key.role, "subscribers", len(targets))
		h.mu.Lock()
		for _, s := range targets {
			h.forgetLocked(s)
		}
		h.mu.Unlock()
		for _, s := range targets {
			s.sink.Unavailable()
		}
		return
	}
	h.mu.Lock()
	c.reads, c.known = result.Reads, true
	var missing []resolve.RelationName
	if h.feed {
		missing = h.uncoveredLocked(c)
	}
	h.mu.Unlock()
	h.want(missing)
	for i, key := range order {
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
		sum := sha256.Sum256(answer.Body)
		for _, s := range groups[key] {
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
}

// run answers the sessions within the refresh timeout: on a replica that has replayed lsn when there is one,
// else on the primary.
func (h *Hub) run(ctx context.Context, req resolve.Request, sessions []resolve.Session, lsn pglogrepl.LSN) (resolve.LiveRefresh, error) {
	ctx, cancel := context.WithTimeout(ctx, h.opts.RefreshTimeout)
	defer cancel()
	if n := len(h.opts.Replicas); n > 0 && lsn != 0 {
		r := h.opts.Replicas[(h.nextReplica.Add(1)-1)%uint64(n)]
		result, err := refreshOn(ctx, Source{Pool: r.Pool, Engine: r.Engine}, req, sessions, lsn.String())
		if err == nil {
			trace.SpanFromContext(ctx).SetAttributes(attribute.Bool("pgreflect.replica", true))
			h.metrics.replicaRefreshes.Add(1)
			return result, nil
		}
		if ctx.Err() != nil {
			return result, err
		}
		// Behind, or away: the primary answers.
	}
	return refreshOn(ctx, Source{Pool: h.opts.Pool, Engine: h.opts.Engine}, req, sessions, "")
}

func refreshOn(ctx context.Context, src Source, req resolve.Request, sessions []resolve.Session, lsn string) (resolve.LiveRefresh, error) {
	conn, err := src.Pool.Acquire(ctx)
	if err != nil {
		return resolve.LiveRefresh{}, err
	}
	defer conn.Release()
	return src.Engine.RefreshLiveAfter(ctx, conn.Conn(), req, sessions, lsn)
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
