package obs

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
	// second is the text of the last line's time up to its seconds, which the lines of a second share.
	second atomic.Pointer[secondText]
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
	b := h.appendLineStart((*bp)[:0], r.Time, r.Level, r.Message)
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
	b := h.appendLineStart((*bp)[:0], t, slog.LevelInfo, "request")
	plain := true
	word := func(key, value string) {
		plain = plain && plainWord(value)
		b = append(append(append(append(b, ' '), key...), '='), value...)
	}
	word("method", l.method)
	word("path", l.path)
	b = strconv.AppendInt(append(b, " status="...), int64(l.status), 10)
	b = appendMillis(append(b, " duration_ms="...), l.micros)
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
func (h *textHandler) appendLineStart(b []byte, t time.Time, level slog.Level, msg string) []byte {
	b = append(b, "time="...)
	b = h.appendTime(b, t)
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
		if !plainBytes[s[i]] {
			return false
		}
	}
	return true
}

// plainBytes are the bytes of plainWord's words; a table, as every request line asks for a dozen words.
var plainBytes = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_./:@+,", byte(c)) >= 0
	}
	return t
}()

// appendRFC3339Millis writes t as slog's handlers write a record's time: RFC 3339 with exactly three digits
// of milliseconds, truncated.
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	const prefixLen = len("2006-01-02T15:04:05.000")
	n := len(b)
	t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10)
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+prefixLen], b[n+prefixLen+1:]...)
}

// secondText is the text of a line's time before its milliseconds and after them, the same for every line
// of one second in one location.
type secondText struct {
	unix         int64
	loc          *time.Location
	prefix, zone string
}

// appendTime writes t as appendRFC3339Millis does, but for its milliseconds from the text of t's second when
// the line before was of the same second: a busy server's lines then skip the calendar's arithmetic.
func (h *textHandler) appendTime(b []byte, t time.Time) []byte {
	if s := h.second.Load(); s != nil && s.unix == t.Unix() && s.loc == t.Location() {
		ms := t.Nanosecond() / int(time.Millisecond)
		b = append(append(b, s.prefix...), '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
		return append(b, s.zone...)
	}
	n := len(b)
	b = appendRFC3339Millis(b, t)
	text := b[n:]
	// Of a year of four digits: slog's text of another year drops a digit other than the fourth of the fraction.
	if dot := bytes.LastIndexByte(text, '.'); dot == len("2006-01-02T15:04:05") { // the zone has no dot
		h.second.Store(&secondText{unix: t.Unix(), loc: t.Location(), prefix: string(text[:dot]), zone: string(text[dot+4:])})
	}
	return b
}

// appendMillis writes us microseconds in milliseconds as slog writes a float64 (strconv's 'g' format, shortest),
// for the durations of requests that took less than a million milliseconds without strconv's search for the
// shortest digits: there 'g' has no exponent, and the shortest digits of us/1000 are its own (fewer than 16).
func appendMillis(b []byte, us int64) []byte {
	if us < 0 || us >= 1e9 {
		return strconv.AppendFloat(b, float64(us)/1000, 'g', -1, 64)
	}
	b = strconv.AppendInt(b, us/1000, 10)
	frac := us % 1000
	if frac == 0 {
		return b
	}
	digits := [3]byte{byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
	n := 3
	for digits[n-1] == '0' {
		n--
	}
	return append(append(b, '.'), digits[:n]...)
}
