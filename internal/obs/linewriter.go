package obs

import (
	"io"
	"sync"
	"time"
)

// maxPendingLog bounds the bytes a LineWriter holds for its output: past it, writers wait, as they waited on
// the output itself before.
const maxPendingLog = 256 << 10

// What a LineWriter gathers before it writes: at most logFlushDelay's worth of lines, or logFlushBytes.
const (
	logFlushDelay = 10 * time.Millisecond
	logFlushBytes = 32 << 10
)

// LineWriter passes what is written to it on to its output from a goroutine of its own, at most logFlushDelay
// after it was written, the lines that came meanwhile together in one write. A busy server's request log lines
// then cost an append each and a write system call per few dozen lines, instead of a system call per request
// on the request's path, where slog makes it under its handler's lock. Each Write reaches the output whole and
// in the order of the Writes; Close writes what is left. Safe for concurrent use.
type LineWriter struct {
	out  io.Writer
	mu   sync.Mutex
	room sync.Cond // signalled when pending has been taken
	// pending is what has been written and not yet passed on; closed is set by Close.
	pending []byte
	closed  bool
	wake    chan struct{} // one pending wake-up of run: there is something to write
	flush   chan struct{} // one pending demand to write now: logFlushBytes are pending, or Close
	done    chan struct{} // closed when run has returned
}

// NewLineWriter returns a LineWriter on out; Close it to write what is left and stop its goroutine.
func NewLineWriter(out io.Writer) *LineWriter {
	w := &LineWriter{out: out, wake: make(chan struct{}, 1), flush: make(chan struct{}, 1), done: make(chan struct{})}
	w.room.L = &w.mu
	go w.run()
	return w
}

// Write keeps p for the output. After Close it writes p to the output itself.
func (w *LineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	for len(w.pending) >= maxPendingLog && !w.closed {
		w.room.Wait()
	}
	if w.closed {
		w.mu.Unlock()
		<-w.done // after what was pending
		return w.out.Write(p)
	}
	w.pending = append(w.pending, p...)
	full := len(w.pending) >= logFlushBytes
	w.mu.Unlock()
	signal(w.wake) // unless run is woken already, and takes p with the rest
	if full {
		signal(w.flush)
	}
	return len(p), nil
}

// Close writes what is pending and returns once it is written.
func (w *LineWriter) Close() error {
	w.mu.Lock()
	w.closed = true
	w.room.Broadcast()
	w.mu.Unlock()
	signal(w.wake)
	signal(w.flush)
	<-w.done
	return nil
}

// signal leaves a wake-up in c unless one is there already.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// run passes the pending bytes on, all that came since the last write in one, until Close.
func (w *LineWriter) run() {
	defer close(w.done)
	var batch []byte
	delay := time.NewTimer(logFlushDelay)
	delay.Stop()
	for range w.wake {
		delay.Reset(logFlushDelay)
		select {
		case <-delay.C:
		case <-w.flush:
			delay.Stop()
		}
		w.mu.Lock()
		batch, w.pending = w.pending, batch[:0]
		closed := w.closed
		w.room.Broadcast()
		w.mu.Unlock()
		if len(batch) > 0 {
			// A failed write of a log has nobody to tell; the next batch tries again.
			_, _ = w.out.Write(batch)
		}
		if closed {
			return
		}
	}
}
