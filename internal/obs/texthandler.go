package obs

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// NewTextHandler is slog's TextHandler (default options) with a fast path for the lines a server writes most:
// the request line, whose values are plain words, numbers and booleans. Such a record is formatted here into
// exactly the bytes slog's handler writes, without its generic machinery (per-attribute quoting checks through
// an interface, a pooled state, a lock around the formatting); any other record (groups, handler attributes,
// values that need quoting, times, durations, any value) goes to slog's own handler. Both write each line with
// one call to w, under one lock. Records below level are not written.
func NewTextHandler(w io.Writer, level slog.Leveler) slog.Handler {
	lw := &lockedWriter{w: w}
	return &textHandler{std: slog.NewTextHandler(lw, &slog.HandlerOptions{Level: level}), w: lw}
}

type textHandler struct {
	std slog.Handler
	w   *lockedWriter
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (h *textHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.std.Enabled(ctx, l) }
func (h *textHandler) WithAttrs(as []slog.Attr) slog.Handler          { return h.std.WithAttrs(as) }
func (h *textHandler) WithGroup(name string) slog.Handler             { return h.std.WithGroup(name) }

var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

func (h *textHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Time.IsZero() || !plainWord(r.Message) {
		return h.std.Handle(ctx, r)
	}
	bp := linePool.Get().(*[]byte)
	defer linePool.Put(bp)
	b := appendLineStart((*bp)[:0], r.Time, r.Level, r.Message)
	plain := true
	r.Attrs(func(a slog.Attr) bool {
		if !plainWord(a.Key) {
			plain = false
			return false
		}
		b = append(append(append(b, ' '), a.Key...), '=')
		switch v := a.Value; v.Kind() {
		case slog.KindString:
			if plain = plainWord(v.String()); plain {
				b = append(b, v.String()...)
			}
		case slog.KindInt64:
			b = strconv.AppendInt(b, v.Int64(), 10)
		case slog.KindUint64:
			b = strconv.AppendUint(b, v.Uint64(), 10)
		case slog.KindFloat64:
			b = strconv.AppendFloat(b, v.Float64(), 'g', -1, 64)
		case slog.KindBool:
			b = strconv.AppendBool(b, v.Bool())
		default:
			plain = false
		}
		return plain
	})
	if !plain {
		return h.std.Handle(ctx, r)
	}
	b = append(b, '\n')
	*bp = b
	_, err := h.w.Write(b)
	return err
}

// writeRequestLine writes l as Handle writes its record (obs.Handler's attributes, in their order), without
// making the record; false, having written nothing, where a value would need quoting.
func (h *textHandler) writeRequestLine(t time.Time, l *requestLine) bool {
	bp := linePool.Get().(*[]byte)
	defer linePool.Put(bp)
	b := appendLineStart((*bp)[:0], t, slog.LevelInfo, "request")
	plain := true
	word := func(key, value string) {
		plain = plain && plainWord(value)
		b = append(append(append(append(b, ' '), key...), '='), value...)
	}
	word("method", l.method)
	word("path", l.path)
	b = strconv.AppendInt(append(b, " status="...), int64(l.status), 10)
	b = strconv.AppendFloat(append(b, " duration_ms="...), l.durationMS, 'g', -1, 64)
	word("role", l.role)
	word("request_id", l.id)
	word("client", l.client)
	for _, a := range l.optional() {
		if a.value != "" {
			word(a.key, a.value)
		}
	}
	if !plain {
		return false
	}
	b = append(b, '\n')
	*bp = b
	_, _ = h.w.Write(b)
	return true
}

// appendLineStart writes the time, level and message of a line.
func appendLineStart(b []byte, t time.Time, level slog.Level, msg string) []byte {
	b = append(b, "time="...)
	b = appendRFC3339Millis(b, t)
	b = append(b, " level="...)
	b = append(b, level.String()...)
	b = append(b, " msg="...)
	return append(b, msg...)
}

// plainWord reports whether slog's text handler writes s as it is: not empty, and only letters, digits and a
// few punctuation marks that are neither white space, '=', a quote nor a backslash.
func plainWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '_' || c == '.' || c == '/' || c == ':' || c == '@' || c == '+' || c == ',') {
			return false
		}
	}
	return true
}

// appendRFC3339Millis writes t as slog's handlers write a record's time: RFC 3339 with exactly three digits
// of milliseconds, truncated.
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	const prefixLen = len("2006-01-02T15:04:05.000")
	n := len(b)
	t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10)
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+prefixLen], b[n+prefixLen+1:]...)
}
