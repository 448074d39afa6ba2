package connwatch

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"
)

// pair is a loopback TCP connection: the client's end and the server's end wrapped by w.
func pair(t testing.TB, w *Watchdog) (client net.Conn, server *Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	client, err = net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.Listener(l).Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close(); s.Close() })
	return client, s.(*Conn)
}

// watched is the number of connections w watches.
func watched(w *Watchdog) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.conns)
}

func newWatchdog(t testing.TB, tick, horizon time.Duration) *Watchdog {
	w := New(tick, horizon)
	t.Cleanup(w.Close)
	return w
}

// readUntilError reads from c until it fails and returns when, and the error.
func readUntilError(c net.Conn) (time.Time, error) {
	buf := make([]byte, 16)
	for {
		if _, err := c.Read(buf); err != nil {
			return time.Now(), err
		}
	}
}

// passesAByte sends a byte from the client to the server end and reads it there: the server end reads again.
func passesAByte(client net.Conn, server *Conn) error {
	if _, err := client.Write([]byte("a")); err != nil {
		return err
	}
	buf := make([]byte, 1)
	_, err := server.Read(buf)
	return err
}

func TestWatchedDeadlineEndsAWaitingRead(t *testing.T) {
	const tick, horizon, wait = 20 * time.Millisecond, 60 * time.Millisecond, 300 * time.Millisecond
	w := newWatchdog(t, tick, horizon)
	_, s := pair(t, w)
	start := time.Now()
	if err := s.SetReadDeadline(start.Add(wait)); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	watched := s.read.due != 0 && !s.read.armed
	s.mu.Unlock()
	if !watched {
		t.Fatal("a deadline beyond the horizon went to the socket; want it watched")
	}
	at, err := readUntilError(s)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read ended with %v; want os.ErrDeadlineExceeded", err)
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("read's error %v is not a timeout", err)
	}
	if took := at.Sub(start); took < wait || took > wait+tick+200*time.Millisecond {
		t.Fatalf("the read ended after %s; want after the deadline (%s) and at most a tick (and scheduling) later", took, wait)
	}
}

func TestNearDeadlineIsTheSocketsOwn(t *testing.T) {
	// A tick of a minute: only the socket can end this read in time.
	w := newWatchdog(t, time.Minute, time.Second)
	_, s := pair(t, w)
	start := time.Now()
	if err := s.SetReadDeadline(start.Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	at, err := readUntilError(s)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read ended with %v; want os.ErrDeadlineExceeded", err)
	}
	if took := at.Sub(start); took > 5*time.Second {
		t.Fatalf("the read ended after %s; want about 50ms", took)
	}
}

func TestWatchedDeadlineEndsAWaitingWrite(t *testing.T) {
	w := newWatchdog(t, 20*time.Millisecond, 60*time.Millisecond)
	_, s := pair(t, w)
	start := time.Now()
	if err := s.SetWriteDeadline(start.Add(300 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	// The client reads nothing: the socket's buffers fill and a write waits.
	chunk := bytes.Repeat([]byte("x"), 1<<16)
	var err error
	for err == nil && time.Since(start) < 10*time.Second {
		_, err = s.Write(chunk)
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("write ended with %v; want os.ErrDeadlineExceeded", err)
	}
}

func TestLaterDeadlineReplacesAWatchedOne(t *testing.T) {
	const tick = 10 * time.Millisecond
	w := newWatchdog(t, tick, 50*time.Millisecond)
	c, s := pair(t, w)
	if err := s.SetReadDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	// Extended before it is due, again and again, as the HTTP server does request by request: it never
	// expires, and a byte sent later is read.
	for i := 0; i < 30; i++ {
		time.Sleep(tick)
		if err := s.SetReadDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	if err := passesAByte(c, s); err != nil {
		t.Fatalf("read after extending the deadline: %v", err)
	}
	// Zero lifts a watched deadline too.
	if err := s.SetReadDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := s.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if err := passesAByte(c, s); err != nil {
		t.Fatalf("read after lifting the deadline: %v", err)
	}
}

func TestDeadlineAfterExpiryReadsAgain(t *testing.T) {
	w := newWatchdog(t, 10*time.Millisecond, 30*time.Millisecond)
	c, s := pair(t, w)
	if err := s.SetReadDeadline(time.Now().Add(60 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := readUntilError(s); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read ended with %v; want os.ErrDeadlineExceeded", err)
	}
	// As on a socket: a new deadline, watched or not, lifts the expired one.
	for _, next := range []time.Time{{}, time.Now().Add(time.Minute), time.Now().Add(5 * time.Millisecond)} {
		if err := s.SetReadDeadline(next); err != nil {
			t.Fatal(err)
		}
		if next.IsZero() || time.Until(next) > time.Second {
			if err := passesAByte(c, s); err != nil {
				t.Fatalf("read after setting the deadline %v: %v", next, err)
			}
			continue
		}
		if _, err := readUntilError(s); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("near deadline after an expiry: read ended with %v", err)
		}
	}
}

func TestNearThenFarDeadline(t *testing.T) {
	w := newWatchdog(t, 10*time.Millisecond, 100*time.Millisecond)
	c, s := pair(t, w)
	// The near deadline is the socket's; the far one that replaces it must take it off the socket.
	if err := s.SetReadDeadline(time.Now().Add(30 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := s.SetReadDeadline(time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if err := passesAByte(c, s); err != nil {
		t.Fatalf("read under the far deadline: %v", err)
	}
}

func TestSetDeadlineSetsBoth(t *testing.T) {
	w := newWatchdog(t, 10*time.Millisecond, 30*time.Millisecond)
	_, s := pair(t, w)
	if err := s.SetDeadline(time.Now().Add(80 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := readUntilError(s); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read ended with %v; want os.ErrDeadlineExceeded", err)
	}
	// The watchdog expires the write side right after the read side, in the same tick.
	var err error
	for start := time.Now(); err == nil && time.Since(start) < time.Second; {
		_, err = s.Write([]byte("x"))
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("write after SetDeadline's deadline: %v; want os.ErrDeadlineExceeded", err)
	}
}

func TestClosedConnectionIsNoLongerWatched(t *testing.T) {
	w := newWatchdog(t, 10*time.Millisecond, 30*time.Millisecond)
	_, s := pair(t, w)
	if n := watched(w); n != 1 {
		t.Fatalf("watching %d connections; want 1", n)
	}
	if err := s.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := watched(w); n != 0 {
		t.Fatalf("watching %d connections after Close; want 0", n)
	}
	time.Sleep(100 * time.Millisecond) // the watchdog passes the closed connection's deadline without touching it
}

func TestDialWrapsTheConnection(t *testing.T) {
	w := newWatchdog(t, 10*time.Millisecond, 30*time.Millisecond)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			defer c.Close()
			_, _ = io.Copy(io.Discard, c)
		}
	}()
	c, err := w.Dial((&net.Dialer{}).DialContext)(t.Context(), "tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.(*Conn); !ok {
		t.Fatalf("Dial returned a %T; want *Conn", c)
	}
	if err := c.SetReadDeadline(time.Now().Add(60 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := readUntilError(c); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read ended with %v; want os.ErrDeadlineExceeded", err)
	}
}

// TestConcurrentDeadlines sets deadlines from many goroutines while the watchdog expires them (run with -race).
func TestConcurrentDeadlines(t *testing.T) {
	w := newWatchdog(t, time.Millisecond, 3*time.Millisecond)
	var wg sync.WaitGroup
	for range 8 {
		c, s := pair(t, w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				var d time.Time
				switch i % 4 {
				case 1:
					d = time.Now().Add(time.Millisecond)
				case 2:
					d = time.Now().Add(10 * time.Millisecond)
				case 3:
					d = expired
				}
				_ = s.SetReadDeadline(d)
				_ = s.SetWriteDeadline(d)
			}
			// Whatever was set and expired before, a zero deadline reads again.
			_ = s.SetDeadline(time.Time{})
			if err := passesAByte(c, s); err != nil {
				t.Errorf("read after lifting the deadlines: %v", err)
			}
		}()
	}
	wg.Wait()
}

// BenchmarkHTTPRequestDeadlines is what net/http does to a keep-alive connection's deadlines for one request
// with its four timeouts set (see the package comment), on a watched connection and on the socket.
func BenchmarkHTTPRequestDeadlines(b *testing.B) {
	requestDeadlines := func(c net.Conn) {
		c.SetReadDeadline(time.Now().Add(2 * time.Minute))  // idle
		c.SetReadDeadline(time.Now().Add(10 * time.Second)) // the header
		c.SetReadDeadline(time.Now().Add(30 * time.Second)) // the whole request
		c.SetWriteDeadline(time.Now().Add(time.Minute))     // the answer
		c.SetReadDeadline(time.Time{})                      // the background read
		c.SetReadDeadline(expired)                          // ... ended
		c.SetReadDeadline(time.Time{})
		c.SetWriteDeadline(time.Time{})
	}
	b.Run("socket", func(b *testing.B) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		for b.Loop() {
			requestDeadlines(c)
		}
	})
	b.Run("watched", func(b *testing.B) {
		_, s := pair(b, newWatchdog(b, DefaultTick, DefaultHorizon))
		for b.Loop() {
			requestDeadlines(s)
		}
	})
}
