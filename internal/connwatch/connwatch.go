// Package connwatch keeps the far deadlines of many network connections with one watchdog, instead of a
// runtime timer per deadline.
//
// The HTTP server sets four deadlines on a keep-alive connection for every request (idle, header, whole
// request, write: net/http does so for its ReadHeaderTimeout, ReadTimeout, WriteTimeout and IdleTimeout), and
// the engine one on its database connection (the statements' budget). Each is seconds or minutes away and
// replaced within a millisecond, yet each puts a timer in the runtime's heap or moves it there. A Conn
// records such a far deadline instead, and the Watchdog, ticking, expires the socket's deadline once it is
// due, which ends a read or write waiting on it exactly as the deadline itself would have
// (os.ErrDeadlineExceeded). A far deadline is so kept at most a tick late. Deadlines nearer than the horizon,
// in the past (the way net/http interrupts a read) and zero go to the socket as they are.
package connwatch

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults for a server: a far deadline (ten seconds and more, as the HTTP server's and the statements' are by
// default) is kept at most 0.1 s late; a deadline within a second is the socket's own.
const (
	DefaultTick    = 100 * time.Millisecond
	DefaultHorizon = time.Second
)

// expired is a deadline in the past, which ends the socket's pending and later reads or writes at once.
var expired = time.Unix(1, 0)

// Watchdog watches the far deadlines of the connections it wrapped until Close.
type Watchdog struct {
	tick, horizon time.Duration
	// base is the origin of the deadlines' offsets; now is the offset of the last tick (a coarse clock, read
	// by every Set without reading the system's).
	base time.Time
	now  atomic.Int64

	mu    sync.Mutex
	conns map[*Conn]struct{}

	stop chan struct{}
	done chan struct{}
}

// New starts a watchdog that checks every tick; deadlines nearer than horizon are not watched but set on the
// socket. horizon must be several ticks for a deadline to be kept about as precisely as the socket's.
func New(tick, horizon time.Duration) *Watchdog {
	w := &Watchdog{tick: tick, horizon: horizon, base: time.Now(), conns: map[*Conn]struct{}{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w
}

// Close stops the watchdog. The connections stay open; their watched deadlines are no longer kept.
func (w *Watchdog) Close() {
	close(w.stop)
	<-w.done
}

func (w *Watchdog) run() {
	defer close(w.done)
	t := time.NewTicker(w.tick)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.expire(w.advance())
		}
	}
}

// advance moves the coarse clock to the present and returns it.
func (w *Watchdog) advance() int64 {
	now := int64(time.Since(w.base))
	w.now.Store(now)
	return now
}

// expire ends the watched deadlines due at now.
func (w *Watchdog) expire(now int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for c := range w.conns {
		c.expire(now)
	}
}

// Wrap watches c's far deadlines. The Conn unregisters itself when closed.
func (w *Watchdog) Wrap(c net.Conn) *Conn {
	wc := &Conn{Conn: c, w: w}
	w.mu.Lock()
	w.conns[wc] = struct{}{}
	w.mu.Unlock()
	return wc
}

// Listener wraps the connections l accepts.
func (w *Watchdog) Listener(l net.Listener) net.Listener { return listener{Listener: l, w: w} }

type listener struct {
	net.Listener
	w *Watchdog
}

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return l.w.Wrap(c), nil
}

// Dial wraps the connections dial (net.Dialer's DialContext, pgconn's DialFunc) makes.
func (w *Watchdog) Dial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return w.Wrap(c), nil
	}
}

// Conn is a connection whose far deadlines the watchdog keeps.
type Conn struct {
	net.Conn
	w *Watchdog

	mu          sync.Mutex
	read, write side
	closed      bool
}

// side is one direction's deadline: due is the watched one (an offset from the watchdog's base, 0 for none);
// armed says that the socket has a deadline of its own (set near, or expired by the watchdog), which a later
// deadline must replace.
type side struct {
	due   int64
	armed bool
}

// SetDeadline sets both directions' deadlines, as net.Conn's: watched when far, else the socket's.
func (c *Conn) SetDeadline(t time.Time) error {
	return c.set(t, true, true)
}

// SetReadDeadline sets the reads' deadline, as net.Conn's: watched when far, else the socket's.
func (c *Conn) SetReadDeadline(t time.Time) error {
	return c.set(t, true, false)
}

// SetWriteDeadline sets the writes' deadline, as net.Conn's: watched when far, else the socket's.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	return c.set(t, false, true)
}

func (c *Conn) set(t time.Time, read, write bool) error {
	var due int64
	if !t.IsZero() {
		// Watched when at least the horizon and a tick past the coarse clock, which lags the present by at most
		// a tick when the watchdog is on time: so at least the horizon from now.
		if due = int64(t.Sub(c.w.base)); due-c.w.now.Load() < int64(c.w.horizon+c.w.tick) {
			due = 0
		}
	}
	c.mu.Lock()
	var err error
	if read {
		err = c.setSide(&c.read, true, t, due)
	}
	if write {
		if werr := c.setSide(&c.write, false, t, due); err == nil {
			err = werr
		}
	}
	c.mu.Unlock()
	return err
}

// setSide gives a side the deadline t: watched when due is set, else the socket's (zero clearing it, which
// costs nothing when the socket has none).
func (c *Conn) setSide(s *side, read bool, t time.Time, due int64) error {
	if due != 0 {
		s.due = due
		if !s.armed {
			return nil
		}
		s.armed = false
		return c.setSocket(read, time.Time{})
	}
	s.due = 0
	if t.IsZero() && !s.armed {
		return nil
	}
	s.armed = !t.IsZero()
	return c.setSocket(read, t)
}

func (c *Conn) setSocket(read bool, t time.Time) error {
	if read {
		return c.Conn.SetReadDeadline(t)
	}
	return c.Conn.SetWriteDeadline(t)
}

// expire ends the deadlines due at now: the socket's deadline, set in the past, ends what waits on it.
func (c *Conn) expire(now int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if c.read.due != 0 && c.read.due <= now {
		c.read.due, c.read.armed = 0, true
		_ = c.Conn.SetReadDeadline(expired)
	}
	if c.write.due != 0 && c.write.due <= now {
		c.write.due, c.write.armed = 0, true
		_ = c.Conn.SetWriteDeadline(expired)
	}
}

// Close closes the connection and stops watching it.
func (c *Conn) Close() error {
	c.w.mu.Lock()
	delete(c.w.conns, c)
	c.w.mu.Unlock()
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	return c.Conn.Close()
}
