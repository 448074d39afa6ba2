package obs

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is an output that counts its writes.
type lockedBuffer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.writes++
	return b.buf.Write(p)
}

// Lines written at once from many goroutines all reach the output by Close, each whole, each goroutine's in
// its order, and fewer writes than lines reach the output when they come faster than it takes them.
func TestLineWriterKeepsEveryLineWholeAndInOrder(t *testing.T) {
	out := &lockedBuffer{}
	w := NewLineWriter(out)
	const writers, lines = 8, 500
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range lines {
				line := fmt.Sprintf("writer=%d line=%d %s\n", g, i, strings.Repeat("x", i%50))
				if n, err := w.Write([]byte(line)); n != len(line) || err != nil {
					t.Errorf("Write: %d, %v", n, err)
				}
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	next := make([]int, writers)
	got := strings.Split(strings.TrimSuffix(out.buf.String(), "\n"), "\n")
	if len(got) != writers*lines {
		t.Fatalf("%d lines, want %d", len(got), writers*lines)
	}
	for _, line := range got {
		var g, i int
		if _, err := fmt.Sscanf(line, "writer=%d line=%d", &g, &i); err != nil || g < 0 || g >= writers {
			t.Fatalf("torn line %q: %v", line, err)
		}
		if want := fmt.Sprintf("writer=%d line=%d %s", g, next[g], strings.Repeat("x", next[g]%50)); line != want {
			t.Fatalf("line %q, want %q", line, want)
		}
		next[g]++
	}
	if out.writes >= writers*lines {
		t.Errorf("%d writes for %d lines: nothing was written together", out.writes, writers*lines)
	}
	// After Close a line is written at once.
	if _, err := w.Write([]byte("late\n")); err != nil || !strings.HasSuffix(out.buf.String(), "\nlate\n") {
		t.Errorf("a line after Close: %v, output ends %q", err, out.buf.String()[out.buf.Len()-20:])
	}
}

// A line reaches the output soon without Close (after logFlushDelay, or at once past logFlushBytes): a quiet
// server's log is not held back.
func TestLineWriterWritesWithoutClose(t *testing.T) {
	out := &lockedBuffer{}
	w := NewLineWriter(out)
	defer w.Close()
	for _, line := range []string{"one line\n", strings.Repeat("z", logFlushBytes) + "\n"} {
		start := time.Now()
		if _, err := w.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
		for {
			out.mu.Lock()
			got := strings.HasSuffix(out.buf.String(), line)
			out.mu.Unlock()
			if got {
				break
			}
			if time.Since(start) > 5*time.Second {
				t.Fatalf("a line of %d bytes not written after %s", len(line), time.Since(start))
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// blockingOutput takes nothing until released.
type blockingOutput struct {
	release chan struct{}
	lockedBuffer
}

func (b *blockingOutput) Write(p []byte) (int, error) {
	<-b.release
	return b.lockedBuffer.Write(p)
}

// An output that takes nothing holds writers up once maxPendingLog bytes wait: memory stays bounded.
func TestLineWriterBoundsWhatWaits(t *testing.T) {
	out := &blockingOutput{release: make(chan struct{})}
	w := NewLineWriter(out)
	line := []byte(strings.Repeat("y", 1023) + "\n")
	// The first line is taken by the writer's goroutine, which then blocks on the output; the rest fill up to
	// the bound.
	written := make(chan int)
	go func() {
		n := 0
		for range 2*maxPendingLog/len(line) + 2 {
			_, _ = w.Write(line)
			n++
		}
		written <- n
	}()
	select {
	case n := <-written:
		t.Fatalf("%d lines of %d bytes written past a stuck output", n, len(line))
	case <-time.After(200 * time.Millisecond):
	}
	w.mu.Lock()
	pending := len(w.pending)
	w.mu.Unlock()
	if pending > maxPendingLog+len(line) {
		t.Errorf("%d bytes pending, bound %d", pending, maxPendingLog)
	}
	close(out.release)
	if n := <-written; n != 2*maxPendingLog/len(line)+2 {
		t.Errorf("%d lines written", n)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if want := (2*maxPendingLog/len(line) + 2) * len(line); out.buf.Len() != want {
		t.Errorf("%d bytes out, want %d", out.buf.Len(), want)
	}
}

// BenchmarkRequestLogLine is the request log line of a busy server written to a file, by slog's text handler
// straight (a write system call per line, under the handler's lock) and through a LineWriter.
func BenchmarkRequestLogLine(b *testing.B) {
	for _, through := range []string{"file", "linewriter"} {
		b.Run(through, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "log"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			var out io.Writer = f
			if through == "linewriter" {
				lw := NewLineWriter(f)
				defer lw.Close()
				out = lw
			}
			logger := slog.New(slog.NewTextHandler(out, nil))
			b.ReportAllocs()
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					logger.LogAttrs(b.Context(), slog.LevelInfo, "request", slog.String("method", "POST"),
						slog.String("path", "/graphql/v1"), slog.Int("status", 200), slog.Float64("duration_ms", 1.234),
						slog.String("role", "anon"), slog.String("request_id", "3f1c2a9e-8f0b-4c55-a1e3-2b7d9c0e4f11"),
						slog.String("client", "127.0.0.1:53412"), slog.String("operation", "query"))
				}
			})
		})
	}
}
