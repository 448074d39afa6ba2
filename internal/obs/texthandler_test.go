package obs

import (
	"bytes"
	"context"
	"log/slog"
	"math"
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
			for _, tm := range []time.Time{at, {}} {
				var want, got bytes.Buffer
				rec := slog.NewRecord(tm, slog.LevelInfo, msg, 0)
				rec.AddAttrs(attrs...)
				if err := slog.NewTextHandler(&want, nil).Handle(context.Background(), rec.Clone()); err != nil {
					t.Fatal(err)
				}
				if err := NewTextHandler(&got).Handle(context.Background(), rec.Clone()); err != nil {
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
	slog.New(NewTextHandler(&got)).With("a", 1).WithGroup("g").Info("m", "k", "v")
	if _, g, _ := strings.Cut(got.String(), " "); g != want.String() {
		t.Errorf("with attributes and groups:\ngot  %q\nwant %q (after the time)", g, want.String())
	}
	// Below the handler's level nothing is written.
	if NewTextHandler(&got).Enabled(context.Background(), slog.LevelDebug) {
		t.Error("debug enabled by default")
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
		_ = NewTextHandler(&got).Handle(context.Background(), rec.Clone())
		if got.String() != want.String() {
			t.Errorf("got  %q\nwant %q", got.String(), want.String())
		}
	})
}
