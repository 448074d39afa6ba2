package httpapi

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pgreflect/pgreflect/internal/obs"
	"github.com/pgreflect/pgreflect/resolve"
)

// Server-Sent Events carry subscriptions where WebSockets cannot go (some proxies, serverless platforms), in the
// graphql-sse library's "distinct connections" mode (github.com/enisdenjo/graphql-sse PROTOCOL.md): one request
// per operation, POST with a JSON body or GET with query parameters, answered with a stream of `next` events
// and a final `complete` event.

// sseKeepAlive is the interval of the comment lines that keep idle proxies from closing a quiet stream.
const sseKeepAlive = 12 * time.Second

// wantsEventStream reports whether r asks for an event stream.
func wantsEventStream(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

// serveSSE answers one operation as an event stream: a subscription until the client goes away or it ends, a
// query or mutation with one event.
func (s *Server) serveSSE(w http.ResponseWriter, r *http.Request, session resolve.Session) {
	// A subscription may name a trusted document or a persisted query as any request may, and under
	// trusted_documents = "only" its text must be trusted like any request's.
	wire, ok := s.readRequest(w, r)
	if !ok || !s.resolveDocument(w, r, session.Role, &wire) {
		return
	}
	if strings.TrimSpace(wire.Query) == "" {
		writeGraphQLError(w, http.StatusBadRequest, msgQueryRequired)
		return
	}
	req := wire.Request
	kind, failure := resolve.Operation(req)
	if failure != nil {
		writeJSON(w, http.StatusBadRequest, failure)
		return
	}
	if info := obs.FromContext(r.Context()); info != nil {
		info.Operation = kind
	}
	if r.Method == http.MethodGet && kind == "mutation" {
		// As any GET (a browser's EventSource is one, and may carry the key in ?apikey=): nothing is changed.
		w.Header().Set("Allow", "POST")
		writeGraphQLError(w, http.StatusMethodNotAllowed, fmt.Sprintf(msgGETOnlyQueries, kind))
		return
	}
	var once []byte
	if kind != "subscription" {
		// Answered before the stream starts, so that a failure has its status as over a plain POST or GET; it is
		// admitted, routed and bounded as they are.
		_, src := s.engine.Route(req)
		body, failed := s.answerOnce(r.Context(), requesterOf(r), src, kind, session, req)
		if failed != nil {
			s.writeFailure(w, r, failed)
		}
		if body == nil {
			return
		}
		once = body
	}
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // the stream lasts as long as the subscription
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: deliver events as they come
	w.WriteHeader(http.StatusOK)
	_ = rc.Flush()
	stream := &sseStream{w: w, rc: rc, events: make(chan sseEvent, s.liveLimits.SendQueue), done: make(chan struct{})}
	if once != nil {
		stream.write(sseEvent{name: "next", data: once})
		stream.write(sseEvent{name: "complete"})
		return
	}
	// Subscribed with the search path of the session, which a change after the session was made would leave
	// behind: the stream then ends at once, and the client comes back under the new one.
	searchPathChanged := s.searchPathChanged.wait()
	if !slices.Equal(session.SearchPath, s.searchPath()) {
		return
	}
	sub, err := s.live.Subscribe(session, req, stream)
	if err != nil {
		stream.write(sseEvent{name: "next", data: errorsBody(msgTooManyOnServer)})
		stream.write(sseEvent{name: "complete"})
		return
	}
	defer s.live.Unsubscribe(sub)
	keepAlive := time.NewTicker(sseKeepAlive)
	defer keepAlive.Stop()
	// The stream ends, without complete, when the token expires: a graphql-sse client then reconnects with the
	// headers it has then (a renewed token).
	var expired <-chan time.Time
	if exp, ok := session.Claims["exp"].(float64); ok {
		t := time.NewTimer(time.Until(time.Unix(int64(exp), 0)))
		defer t.Stop()
		expired = t.C
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case <-stream.done:
			return
		case <-expired:
			return
		case <-searchPathChanged:
			return
		case ev := <-stream.events:
			if !stream.write(ev) || ev.name == "complete" {
				return
			}
		case <-keepAlive.C:
			if !stream.write(sseEvent{}) {
				return
			}
		}
	}
}

// sseEvent is one event; the zero value is a keep-alive comment.
type sseEvent struct {
	name string
	data []byte
}

// sseStream is a subscription's event stream; the hub's workers queue events, the request's goroutine writes
// them.
type sseStream struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	events chan sseEvent
	done   chan struct{}
	once   sync.Once
}

func (st *sseStream) write(ev sseEvent) bool {
	var b strings.Builder
	if ev.name == "" {
		b.WriteString(":\n\n")
	} else {
		b.WriteString("event: ")
		b.WriteString(ev.name)
		b.WriteString("\ndata: ")
		b.Write(ev.data) // JSON has no raw newlines
		b.WriteString("\n\n")
	}
	if _, err := io.WriteString(st.w, b.String()); err != nil {
		return false
	}
	return st.rc.Flush() == nil
}

// queue hands an event to the writer; a client that does not read in time loses its stream.
func (st *sseStream) queue(ev sseEvent) {
	select {
	case st.events <- ev:
	default:
		st.stop()
	}
}

func (st *sseStream) stop() { st.once.Do(func() { close(st.done) }) }

func (st *sseStream) Next(body []byte) { st.queue(sseEvent{name: "next", data: body}) }

func (st *sseStream) End(body []byte) {
	st.queue(sseEvent{name: "next", data: body})
	st.queue(sseEvent{name: "complete"})
}

// Unavailable ends the stream without complete: graphql-sse clients take that for a dropped connection and
// retry.
func (st *sseStream) Unavailable() { st.stop() }
