package obs

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The fast path must write what slog's TextHandler writes, byte for byte, and hand everything else to it.
func TestTextHandlerWritesAsSlog(t *testing.T) {
	at := time.Date(2026, 11, 26, 7, 1, 2, 345678901, time.FixedZone("X", 3600))
	records := [][]slog.Attr{
		{slog.String("method", "POST"), slog.String("path", "/graphql/v1"), slog.Int("status", 200),
			slog.Float64("duration_ms", 1.234), slog.String("role", "anon"), slog.String("request_id", "3f2a-11"),
			slog.String("client", "127.0.0.1:5432"), slog.String("operation", "query")},
		{slog.Float64("f", 1e21), slog.Float64("g", 0.000001), slog.Float64("nan", math.NaN()), slog.Float64("neg", -0.5),
			slog.Uint64("u", math.MaxUint64), slog.Int64("i", math.MinInt64), slog.Bool("b", true)},
		{slog.String("path", "/a b"), slog.String("x", "quote\"d")},
		{slog.String("empty", "")},
		{slog.String("client", "[::1]:80")},
		{slog.String("ünï", "côdé")},
		{slog.Duration("d", 1500*time.Millisecond), slog.Time("t", at)},
		{slog.Any("err", context.Canceled)},
		{slog.Group("g", slog.String("a", "b"))},
		{slog.String("key=", "v")},
		{},
	}
	messages := []string{"request", "a message", "", "schema reloaded"}
	for _, msg := range messages {
		for _, attrs := range records {
			for _, tm := range []time.Time{at, {}, at.In(time.FixedZone("Y", -(3*3600 + 30*60))), at.UTC(), at.AddDate(8000, 0, 0)} {
				var want, got bytes.Buffer
				rec := slog.NewRecord(tm, slog.LevelInfo, msg, 0)
				rec.AddAttrs(attrs...)
				if err := slog.NewTextHandler(&want, nil).Handle(context.Background(), rec.Clone()); err != nil {
					t.Fatal(err)
				}
				if err := NewTextHandler(&got, slog.LevelInfo).Handle(context.Background(), rec.Clone()); err != nil {
					t.Fatal(err)
				}
				if got.String() != want.String() {
					t.Errorf("got  %q\nwant %q", got.String(), want.String())
				}
			}
		}
	}
	// Handler attributes and groups go through slog's handler.
	var want, got bytes.Buffer
	slog.New(slog.NewTextHandler(&want, &slog.HandlerOptions{ReplaceAttr: dropTime})).With("a", 1).WithGroup("g").Info("m", "k", "v")
	slog.New(NewTextHandler(&got, slog.LevelInfo)).With("a", 1).WithGroup("g").Info("m", "k", "v")
	if _, g, _ := strings.Cut(got.String(), " "); g != want.String() {
		t.Errorf("with attributes and groups:\ngot  %q\nwant %q (after the time)", g, want.String())
	}
	// Below the handler's level nothing is written.
	if NewTextHandler(&got, slog.LevelInfo).Enabled(context.Background(), slog.LevelDebug) {
		t.Error("debug enabled at level info")
	}
}

// One handler's lines share the text of their second (appendTime): each line's time is still slog's, whatever
// line came before it (the same second, the next, another zone of the same instant, another year).
func TestTextHandlerTimeOfConsecutiveLines(t *testing.T) {
	at := time.Date(2026, 11, 27, 10, 21, 30, 835211544, time.UTC)
	east, west := time.FixedZone("E", 5*3600+45*60), time.FixedZone("W", -3600)
	times := []time.Time{at, at.Add(time.Millisecond), at.Add(164 * time.Millisecond), at.In(east), at.Add(time.Millisecond).In(east),
		at.In(west), at.Add(time.Second), at.Add(time.Second - time.Nanosecond), at.Add(-at.Sub(at.Truncate(time.Second))),
		at.AddDate(8000, 0, 0), at.AddDate(8000, 0, 0).Add(time.Millisecond), at.AddDate(-2000, 0, 0), at.Local(), at}
	h := NewTextHandler(io.Discard, slog.LevelInfo).(*textHandler)
	for _, tm := range times {
		var got, want bytes.Buffer
		h.w = &lockedWriter{w: &got}
		rec := slog.NewRecord(tm, slog.LevelInfo, "request", 0)
		if err := h.Handle(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
		_ = slog.NewTextHandler(&want, nil).Handle(context.Background(), rec)
		if got.String() != want.String() {
			t.Errorf("after the line before: got %q, want %q", got.String(), want.String())
		}
	}
}

// A request's duration is written as slog writes float64(micros)/1000, for every microsecond below ten
// seconds and at the edges of the fast path.
func TestAppendMillisAsSlog(t *testing.T) {
	check := func(us int64) {
		if got, want := string(appendMillis(nil, us)), strconv.FormatFloat(float64(us)/1000, 'g', -1, 64); got != want {
			t.Errorf("%d µs: %s, want %s", us, got, want)
		}
	}
	for us := int64(0); us < 10_000_000; us += 1 + us/100_000 {
		check(us)
	}
	for _, us := range []int64{999_999_999, 1e9, 1e9 + 1, 123_456_789_012, -1, -1500, math.MaxInt64, math.MinInt64} {
		check(us)
	}
}

func dropTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

func FuzzTextHandler(f *testing.F) {
	f.Add("request", "path", "/graphql/v1", int64(200), 1.5)
	f.Add("m", "k=", "a b", int64(-1), math.Inf(1))
	f.Fuzz(func(t *testing.T, msg, key, value string, n int64, x float64) {
		rec := slog.NewRecord(time.Unix(n%1e10, n), slog.LevelWarn, msg, 0)
		rec.AddAttrs(slog.String(key, value), slog.Int64("n", n), slog.Float64("x", x), slog.String("v", value))
		var want, got bytes.Buffer
		_ = slog.NewTextHandler(&want, nil).Handle(context.Background(), rec.Clone())
		_ = NewTextHandler(&got, slog.LevelInfo).Handle(context.Background(), rec.Clone())
		if got.String() != want.String() {
			t.Errorf("got  %q\nwant %q", got.String(), want.String())
		}
	})
}

// The request line written without a record is what slog's TextHandler writes of the record obs.Handler would
// make, byte for byte after the time; a value that needs quoting goes through the record.
func TestRequestLineWritesAsSlog(t *testing.T) {
	plain := requestLine{method: "POST", path: "/graphql/v1", status: 200, micros: 1234, role: "anon",
		id: "3f1c2a9e-8f0b-4c55-a1e3-2b7d9c0e4f11", client: "127.0.0.1:53412"}
	full := plain
	full.operation, full.persisted, full.traceID = "mutation", "ecf4edb46db40b5132295c0291d62fb65d6759a9eedfa4d5d612dd5a5d0f8f5e", "4bf92f3577b34da6a3ce929d0e0e4736"
	quoted, unsigned, slow := plain, plain, plain
	quoted.path = "/graphql/v1 x"
	unsigned.role = ""
	slow.status, slow.micros = 503, 10012500
	for _, l := range []requestLine{plain, full, quoted, unsigned, slow} {
		var want, got bytes.Buffer
		l.log(context.Background(), slog.NewTextHandler(&want, nil))
		l.log(context.Background(), NewTextHandler(&got, slog.LevelInfo))
		_, w, _ := strings.Cut(want.String(), " ")
		_, g, _ := strings.Cut(got.String(), " ")
		if g != w || !strings.HasPrefix(got.String(), "time=") {
			t.Errorf("got  %q\nwant %q (after the time)", got.String(), want.String())
		}
	}
	// Below the handler's level nothing is written.
	var none bytes.Buffer
	plain.log(context.Background(), slog.NewTextHandler(&none, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if none.Len() != 0 {
		t.Errorf("written below the level: %q", none.String())
	}
}

// BenchmarkRequestLine is obs.Handler's request line through NewTextHandler onto a LineWriter: written straight,
// and as the record any other handler gets.
func BenchmarkRequestLine(b *testing.B) {
	lw := NewLineWriter(io.Discard)
	defer lw.Close()
	l := requestLine{method: "POST", path: "/graphql/v1", status: 200, micros: 1234, role: "anon",
		id: "3f1c2a9e-8f0b-4c55-a1e3-2b7d9c0e4f11", client: "127.0.0.1:53412", operation: "query"}
	for _, c := range []struct {
		name string
		h    slog.Handler
	}{{"straight", NewTextHandler(lw, slog.LevelInfo)}, {"record", struct{ slog.Handler }{NewTextHandler(lw, slog.LevelInfo)}}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				l.log(context.Background(), c.h)
			}
		})
	}
}
