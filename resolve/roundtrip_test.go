package resolve

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
)

// countingConn counts round trips (each switch from writing to reading is one) and keeps what was sent.
type countingConn struct {
	net.Conn
	mu      sync.Mutex
	writing bool
	trips   int
	sent    strings.Builder
}

func (c *countingConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	c.writing = true
	c.sent.Write(b)
	c.mu.Unlock()
	return c.Conn.Write(b)
}

func (c *countingConn) Read(b []byte) (int, error) {
	c.mu.Lock()
	if c.writing {
		c.trips++
		c.writing = false
	}
	c.mu.Unlock()
	return c.Conn.Read(b)
}

// sentText is what the connection has sent so far.
func (c *countingConn) sentText() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sent.String()
}

func (c *countingConn) roundTrips() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.trips
}

// countedConn opens a connection to d's database whose round trips counter counts.
func countedConn(t *testing.T, d *testDB) (*pgx.Conn, *countingConn) {
	t.Helper()
	ctx := context.Background()
	cfg := d.conn.Config().Copy()
	var counter *countingConn
	dialer := &net.Dialer{}
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		counter = &countingConn{Conn: c}
		return counter, nil
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn, counter
}

// expectOneRoundTrip runs each request as the session after a first request that loads the catalog, and
// fails unless each took one round trip and answered without errors.
func expectOneRoundTrip(t *testing.T, d *testDB, session Session, queries ...string) {
	t.Helper()
	expectOneRoundTripIn(t, d, StatementsPrepared, session, queries...)
}

// expectOneRoundTripIn is expectOneRoundTrip in a statement mode; unnamed statements must moreover leave nothing
// prepared on the session, which a pooler in transaction mode would hand to another client.
func expectOneRoundTripIn(t *testing.T, d *testDB, mode StatementMode, session Session, queries ...string) {
	t.Helper()
	ctx := context.Background()
	conn, counter := countedConn(t, d)
	engine := NewEngine(Options{StatementMode: mode})
	for _, q := range queries {
		// The first request of a role loads the catalog; later ones must not.
		engine.ExecuteAs(ctx, conn, session, Request{Query: `{ __typename }`})
		before := counter.roundTrips()
		body := string(engine.ExecuteAs(ctx, conn, session, Request{Query: q}))
		if got := counter.roundTrips() - before; got != 1 {
			t.Errorf("%d round trips for %s\n(response %s)", got, q, body)
		}
		if !strings.HasPrefix(body, `{"data": {`) || strings.Contains(body, `"errors"`) {
			t.Errorf("unexpected response %s", body)
		}
	}
	var prepared int
	if err := conn.QueryRow(ctx, "select count(*) from pg_prepared_statements where name like 'pgreflect%'").Scan(&prepared); err != nil {
		t.Fatal(err)
	}
	if want := mode == StatementsPrepared; (prepared > 0) != want {
		t.Errorf("%s mode left %d statements prepared on the session", mode, prepared)
	}
}

func TestOneRoundTripPerRequest(t *testing.T) {
	session := Session{Role: "service_role", Claims: map[string]any{"role": "service_role"}, SearchPath: []string{"public"}}
	deep := `{ accountCollection { totalCount: __typename edges { node { blogCollection { pageInfo { hasNextPage hasPreviousPage }
		edges { node { owner { blogCollection { edges { node { blogPostCollection { edges { node { title blog { owner { email } } } } } } } } } } } } } } }
		b: blogCollection(last: 1) { edges { cursor } } c: accountByPk(id: 1) { email } }`
	mutation := `mutation { a: insertIntoAccountCollection(objects: [{email: "x@x.com"}]) { affectedCount }
		b: updateAccountCollection(set: {email: "y@x.com"}, filter: {email: {eq: "x@x.com"}}) { affectedCount records { blogCollection { edges { cursor } } } }
		c: deleteFromAccountCollection(filter: {email: {eq: "y@x.com"}}) { affectedCount } }`
	for _, mode := range []StatementMode{StatementsPrepared, StatementsUnnamed} {
		t.Run(mode.String(), func(t *testing.T) {
			expectOneRoundTripIn(t, newTestDB(t, blogFixture), mode, session, deep, mutation)
		})
	}
}
