package obs

import (
	"net/http"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are one server's Prometheus metrics, in a registry of their own. Every method may be called on a nil
// *Metrics, so that packages used without metrics (tests, embedders) need no checks.
type Metrics struct {
	registry      *prometheus.Registry
	requests      *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	schemaReloads prometheus.Counter
	authEvents    *prometheus.CounterVec
	refusals      *prometheus.CounterVec
	openConns     prometheus.Gauge
	// series are the request counter and duration histogram of each (route, operation, status) seen, looked up
	// once rather than by their label values on every request. Bounded: routes are a fixed set (Route),
	// operations the GraphQL operation types, statuses the few the handlers answer.
	series sync.Map // requestLabels → requestSeries
}

type requestLabels struct {
	route, operation string
	status           int
}

type requestSeries struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

// Refusal kinds of pgreflect_limit_refusals_total.
const (
	RefusedRateLimit     = "rate_limit"
	RefusedReadTimeout   = "read_timeout"
	RefusedBodyTooLarge  = "body_too_large"
	RefusedConnectionCap = "connection_cap"
	// RefusedUntrustedDocument: a document that is not trusted, where only trusted documents may run.
	RefusedUntrustedDocument = "untrusted_document"
	// RefusedPoolTimeout: no database connection became free within the pool timeout.
	RefusedPoolTimeout = "pool_timeout"
	// RefusedPoolShare: the client's credential, role or address held its share of the pool all along.
	RefusedPoolShare = "pool_share"
	// RefusedSlowShare: the slow operations held their share of the pool all along.
	RefusedSlowShare = "slow_share"
)

// NewMetrics makes the metrics and their registry, with the Go runtime and process collectors.
func NewMetrics() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pgreflect_http_requests_total",
			Help: "HTTP requests answered, by route, GraphQL operation type and status code.",
		}, []string{"route", "operation", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pgreflect_http_request_duration_seconds",
			Help:    "Time from the request's headers to the end of its answer, by route and GraphQL operation type.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "operation"}),
		schemaReloads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pgreflect_schema_reloads_total",
			Help: "Times the schema watcher dropped the cached GraphQL schemas (DDL, GRANT, COMMENT, or a reconnect).",
		}),
		authEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pgreflect_auth_events_total",
			Help: "Sign-in events: sign_in, refresh, sign_out and failure, by grant or flow.",
		}, []string{"event", "flow"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pgreflect_limit_refusals_total",
			Help: "Requests or connections refused or cut by a limit: rate_limit, read_timeout, body_too_large, connection_cap.",
		}, []string{"limit"}),
		openConns: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pgreflect_http_open_connections",
			Help: "HTTP connections currently open.",
		}),
	}
	m.registry.MustRegister(m.requests, m.duration, m.schemaReloads, m.authEvents, m.refusals, m.openConns,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry})
}

// Registry is where the metrics are registered (for tests and embedders adding their own).
func (m *Metrics) Registry() *prometheus.Registry { return m.registry }

func (m *Metrics) observeRequest(route, operation string, status int, seconds float64) {
	if m == nil {
		return
	}
	labels := requestLabels{route: route, operation: operation, status: status}
	v, ok := m.series.Load(labels)
	if !ok {
		v, _ = m.series.LoadOrStore(labels, requestSeries{count: m.requests.WithLabelValues(route, operation, strconv.Itoa(status)),
			duration: m.duration.WithLabelValues(route, operation)})
	}
	series := v.(requestSeries)
	series.count.Inc()
	series.duration.Observe(seconds)
}

// SchemaReloaded counts one invalidation of the schema cache.
func (m *Metrics) SchemaReloaded() {
	if m != nil {
		m.schemaReloads.Inc()
	}
}

// AuthEvent counts a sign-in event (sign_in, refresh, sign_out, failure) of a grant or flow (pkce, id_token,
// refresh_token, implicit...).
func (m *Metrics) AuthEvent(event, flow string) {
	if m != nil {
		m.authEvents.WithLabelValues(event, flow).Inc()
	}
}

// Refused counts a request or connection refused or cut by a limit (the Refused* kinds).
func (m *Metrics) Refused(limit string) {
	if m != nil {
		m.refusals.WithLabelValues(limit).Inc()
	}
}

// ConnOpened and ConnClosed track open HTTP connections.
func (m *Metrics) ConnOpened() {
	if m != nil {
		m.openConns.Inc()
	}
}

func (m *Metrics) ConnClosed() {
	if m != nil {
		m.openConns.Dec()
	}
}

// RegisterPool exports a pgx pool's statistics under the label pool=name, read at scrape time.
func (m *Metrics) RegisterPool(name string, pool *pgxpool.Pool) error {
	if m == nil {
		return nil
	}
	return m.registry.Register(&poolCollector{pool: pool, labels: prometheus.Labels{"pool": name}})
}

// poolCollector reads pgxpool.Stat at each scrape, so the hot path pays nothing.
type poolCollector struct {
	pool   *pgxpool.Pool
	labels prometheus.Labels
}

func (c *poolCollector) desc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc("pgreflect_db_pool_"+name, help, nil, c.labels)
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(c, ch) }

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.pool.Stat()
	gauge := func(name, help string, v float64) {
		ch <- prometheus.MustNewConstMetric(c.desc(name, help), prometheus.GaugeValue, v)
	}
	counter := func(name, help string, v float64) {
		ch <- prometheus.MustNewConstMetric(c.desc(name, help), prometheus.CounterValue, v)
	}
	gauge("max_connections", "Largest number of connections the pool opens.", float64(s.MaxConns()))
	gauge("connections", "Connections open (idle, in use or being opened).", float64(s.TotalConns()))
	gauge("acquired_connections", "Connections in use by a request.", float64(s.AcquiredConns()))
	gauge("idle_connections", "Connections open and idle.", float64(s.IdleConns()))
	counter("acquires_total", "Connections handed out.", float64(s.AcquireCount()))
	counter("empty_acquires_total", "Acquires that had to wait for a connection or open one.", float64(s.EmptyAcquireCount()))
	counter("canceled_acquires_total", "Acquires given up because the request went away.", float64(s.CanceledAcquireCount()))
	counter("acquire_wait_seconds_total", "Time spent waiting for connections.", s.AcquireDuration().Seconds())
}
