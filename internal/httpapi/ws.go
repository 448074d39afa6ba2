package httpapi

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/pgreflect/pgreflect/auth"
	"github.com/pgreflect/pgreflect/internal/live"
	"github.com/pgreflect/pgreflect/internal/obs"
	"github.com/pgreflect/pgreflect/resolve"
)

// wsProtocol is the WebSocket subprotocol of the graphql-ws library, "GraphQL over WebSocket"
// (github.com/enisdenjo/graphql-ws PROTOCOL.md), which Apollo's GraphQLWsLink, urql and GraphiQL speak.
const wsProtocol = "graphql-transport-ws"

// LiveLimits bound the subscriptions of a server; zero fields take DefaultLiveLimits' values.
type LiveLimits struct {
	// PerConnection bounds the operations running on one WebSocket.
	PerConnection int
	// PerInstance bounds the subscriptions of the server (all connections).
	PerInstance int
	// MaxMessageBytes bounds one answer pushed to a client; a larger one ends its subscription with an error.
	MaxMessageBytes int
	// SendQueue is how many messages may wait for a slow client before its connection is closed.
	SendQueue int
	// InitTimeout is how long a new WebSocket may take to send connection_init.
	InitTimeout time.Duration
	// KeepAlive is the interval of the server's WebSocket pings; a client that does not answer one within
	// it is disconnected.
	KeepAlive time.Duration
	// PollInterval refreshes live queries this often when no change feed names the tables that change.
	PollInterval time.Duration
}

// DefaultLiveLimits are the defaults of LiveLimits.
func DefaultLiveLimits() LiveLimits {
	return LiveLimits{PerConnection: 100, PerInstance: 10000, MaxMessageBytes: 4 << 20, SendQueue: 64,
		InitTimeout: 3 * time.Second, KeepAlive: 30 * time.Second, PollInterval: time.Second}
}

func (l LiveLimits) withDefaults() LiveLimits {
	d := DefaultLiveLimits()
	if l.PerConnection <= 0 {
		l.PerConnection = d.PerConnection
	}
	if l.PerInstance <= 0 {
		l.PerInstance = d.PerInstance
	}
	if l.MaxMessageBytes <= 0 {
		l.MaxMessageBytes = d.MaxMessageBytes
	}
	if l.SendQueue <= 0 {
		l.SendQueue = d.SendQueue
	}
	if l.InitTimeout <= 0 {
		l.InitTimeout = d.InitTimeout
	}
	if l.KeepAlive <= 0 {
		l.KeepAlive = d.KeepAlive
	}
	if l.PollInterval <= 0 {
		l.PollInterval = d.PollInterval
	}
	return l
}

// wsMessage is a message of graphql-transport-ws.
type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// isWebSocket reports whether r asks to upgrade to a WebSocket.
func isWebSocket(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// handshakeRefusal gives a handshake that the WebSocket library refuses (a missing key, another protocol
// version) the API's error shape, {"errors": [{"message": ...}]} as JSON, instead of the library's plain text:
// it holds back what the library writes for a status of 400 or more, for answer.
type handshakeRefusal struct {
	http.ResponseWriter
	status int
	text   strings.Builder
}

func (h *handshakeRefusal) WriteHeader(status int) {
	if status < http.StatusBadRequest {
		h.ResponseWriter.WriteHeader(status)
		return
	}
	h.status = status
}

func (h *handshakeRefusal) Write(b []byte) (int, error) {
	if h.status == 0 {
		return h.ResponseWriter.Write(b)
	}
	return h.text.Write(b)
}

// Unwrap lets the library hijack the connection (http.ResponseController's rule).
func (h *handshakeRefusal) Unwrap() http.ResponseWriter { return h.ResponseWriter }

// answer writes the refusal held back, if the library wrote one.
func (h *handshakeRefusal) answer() {
	if h.status == 0 {
		return
	}
	writeGraphQLError(h.ResponseWriter, h.status, strings.TrimSpace(h.text.String()))
}

// wsConn is one client's WebSocket with its operations.
type wsConn struct {
	s      *Server
	c      *websocket.Conn
	r      *http.Request
	limits LiveLimits
	ctx    context.Context
	cancel context.CancelFunc
	out    chan []byte
	// unsent counts the messages queued and not yet written, the one the writer holds included: a close waits
	// for them, where the queue's length would miss the last one taken off it.
	unsent atomic.Int64

	closeOnce sync.Once

	mu      sync.Mutex
	session *resolve.Session // set by connection_init
	key     string           // the API key connection_init authenticated with
	// requester is who the connection's queries and mutations count against in the pool's shares.
	requester requester
	ops       map[string]*wsOperation
	expiry    *time.Timer
}

// wsOperation is one running operation of a connection.
type wsOperation struct {
	sub *live.Subscription // nil for a query or mutation answered once
}

// serveWebSocket speaks graphql-transport-ws on an upgraded /graphql/v1 request.
func (s *Server) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	if info := obs.FromContext(r.Context()); info != nil {
		info.Operation = "subscription"
	}
	// The server's HTTP deadlines are for requests, not for a connection that lives as long as its client.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	refusal := &handshakeRefusal{ResponseWriter: w}
	c, err := websocket.Accept(refusal, r, &websocket.AcceptOptions{
		Subprotocols: []string{wsProtocol},
		// The API is called from any origin (CORS allows all); the credentials are in connection_init, not
		// in cookies, so another site's page gains nothing from the browser's.
		InsecureSkipVerify: true,
	})
	if err != nil {
		refusal.answer()
		return
	}
	if c.Subprotocol() != wsProtocol {
		_ = c.Close(closeBadProtocol, wsReasonSubprotocol)
		return
	}
	c.SetReadLimit(s.opts.MaxBodyBytes)
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	wc := &wsConn{s: s, c: c, r: r, limits: s.liveLimits, ctx: ctx, cancel: cancel,
		out: make(chan []byte, s.liveLimits.SendQueue), ops: map[string]*wsOperation{}}
	s.sockets.add(wc)
	defer s.sockets.remove(wc)
	defer wc.release()
	var writer sync.WaitGroup
	writer.Go(wc.write)
	defer writer.Wait()
	initTimer := time.AfterFunc(wc.limits.InitTimeout, func() {
		if wc.currentSession() == nil {
			wc.close(closeInitTimeout, wsReasonInitTimeout)
		}
	})
	defer initTimer.Stop()
	wc.read()
}

// read handles the client's messages until the connection ends.
func (wc *wsConn) read() {
	for {
		typ, data, err := wc.c.Read(wc.ctx)
		if err != nil {
			// The client closed, went away, or sent a message over the read limit (which the library answers
			// with 1009 itself).
			wc.cancel()
			return
		}
		var msg wsMessage
		if typ != websocket.MessageText || json.Unmarshal(data, &msg) != nil || msg.Type == "" {
			wc.close(closeBadRequest, wsReasonInvalidMessage)
			return
		}
		if !wc.handle(msg) {
			return
		}
	}
}

// handle answers one message; false ends the connection.
func (wc *wsConn) handle(msg wsMessage) bool {
	switch msg.Type {
	case "connection_init":
		return wc.connectionInit(msg.Payload)
	case "ping":
		if renewed, ok := wc.renewToken(msg.Payload); !ok {
			return false
		} else if renewed {
			wc.s.log.Debug("subscriptions: token renewed")
		}
		wc.send(wsMessage{Type: "pong"})
	case "pong":
	case "subscribe":
		if wc.currentSession() == nil {
			wc.close(closeUnauthorized, wsReasonUnauthorized)
			return false
		}
		return wc.subscribe(msg)
	case "complete":
		wc.finish(msg.ID)
	default:
		wc.close(closeBadRequest, wsReasonInvalidMessage)
		return false
	}
	return true
}

// wsCredentials are the API key and Authorization a client sends in connection_init's payload: at the top level
// (graphql-ws' connectionParams) or under headers (as Apollo and supabase-js users pass them).
type wsCredentials struct {
	APIKey        string `json:"apikey"`
	Authorization string `json:"Authorization"`
	LowerAuth     string `json:"authorization"`
	Headers       struct {
		APIKey        string `json:"apikey"`
		Authorization string `json:"Authorization"`
		LowerAuth     string `json:"authorization"`
	} `json:"headers"`
}

func (c wsCredentials) key() string {
	for _, v := range []string{c.APIKey, c.Headers.APIKey} {
		if v != "" {
			return v
		}
	}
	return ""
}

func (c wsCredentials) authorization() string {
	for _, v := range []string{c.Authorization, c.LowerAuth, c.Headers.Authorization, c.Headers.LowerAuth} {
		if v != "" {
			return v
		}
	}
	return ""
}

func (wc *wsConn) connectionInit(payload json.RawMessage) bool {
	wc.mu.Lock()
	initialised := wc.session != nil
	wc.mu.Unlock()
	if initialised {
		wc.close(closeTooManyInits, wsReasonTooManyInits)
		return false
	}
	var creds wsCredentials
	if len(payload) > 0 && string(payload) != "null" && json.Unmarshal(payload, &creds) != nil {
		wc.close(closeBadRequest, wsReasonInvalidMessage)
		return false
	}
	// Credentials of the upgrade request (headers, ?apikey=) count when the payload has none.
	key, authorization := creds.key(), creds.authorization()
	if key == "" {
		key = auth.APIKeyFromRequest(wc.r)
	}
	if authorization == "" {
		authorization = wc.r.Header.Get("Authorization")
	}
	// The checks are a span of the connection's request, as a POST's are of the POST's.
	ctx, span := wc.s.startSpan(wc.ctx, "authenticate")
	session, status, msg, err := wc.s.authenticateCredentials(ctx, key, authorization)
	endAuthenticate(span, session, status, err)
	switch {
	case err != nil:
		obs.Logger(wc.r.Context(), wc.s.log).Error("subscriptions: read the roles", "error", err)
		wc.close(closeTryAgainLater, wsReasonUnavailable)
		return false
	case status != 0:
		wc.close(closeForbidden, wsReasonForbidden+msg)
		return false
	}
	wc.mu.Lock()
	wc.session, wc.key = &session, key
	wc.requester = requester{credential: credentialOf(key, authorization), address: wc.r.RemoteAddr}
	wc.armExpiryLocked(session)
	wc.mu.Unlock()
	// The request log line of the connection, written when it ends, names its role.
	obs.SetRole(wc.r.Context(), session.Role)
	wc.send(wsMessage{Type: "connection_ack"})
	return true
}

// armExpiryLocked closes the connection when the session's token expires: its subscriptions would otherwise go
// on under claims that no longer hold. A graphql-ws client reconnects (4403) with fresh connection params.
func (wc *wsConn) armExpiryLocked(s resolve.Session) {
	if wc.expiry != nil {
		wc.expiry.Stop()
		wc.expiry = nil
	}
	exp, ok := s.Claims["exp"].(float64)
	if !ok {
		return
	}
	wc.expiry = time.AfterFunc(time.Until(time.Unix(int64(exp), 0)), func() { wc.close(closeForbidden, wsReasonJWTExpired) })
}

// renewToken takes a fresh token from a ping's payload ({"Authorization": "Bearer ..."}), so that a client can
// keep its subscriptions past its token's expiry without reconnecting; the token must be of the same role and
// user. It reports whether a token was renewed, and false for ok when the connection was closed.
func (wc *wsConn) renewToken(payload json.RawMessage) (renewed, ok bool) {
	var creds wsCredentials
	if len(payload) == 0 || json.Unmarshal(payload, &creds) != nil || creds.authorization() == "" {
		return false, true
	}
	current := wc.currentSession()
	if current == nil {
		return false, true
	}
	// The connection's key stays the one it was opened with when the ping names none.
	ctx, span := wc.s.startSpan(wc.ctx, "authenticate")
	key := cmp.Or(creds.key(), wc.key)
	session, status, msg, err := wc.s.authenticateCredentials(ctx, key, creds.authorization())
	endAuthenticate(span, session, status, err)
	switch {
	case err != nil:
		wc.close(closeTryAgainLater, wsReasonUnavailable)
		return false, false
	case status != 0:
		wc.close(closeForbidden, wsReasonForbidden+msg)
		return false, false
	case session.Role != current.Role || session.Claims["sub"] != current.Claims["sub"]:
		wc.close(closeForbidden, wsReasonOtherUser)
		return false, false
	}
	wc.mu.Lock()
	wc.session = &session
	wc.requester.credential = credentialOf(key, creds.authorization())
	wc.armExpiryLocked(session)
	wc.mu.Unlock()
	return true, true
}

func (wc *wsConn) currentSession() *resolve.Session {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	return wc.session
}

func (wc *wsConn) subscribe(msg wsMessage) bool {
	if msg.ID == "" {
		wc.close(closeBadRequest, wsReasonInvalidMessage)
		return false
	}
	// The payload is a request as over HTTP: its text, or the id of a trusted document, or the hash of a
	// persisted query in its extensions (graphql-ws clients send "query": "" beside the last two).
	var wire wireRequest
	if json.Unmarshal(msg.Payload, &wire) != nil ||
		strings.TrimSpace(wire.Query) == "" && wire.documentID() == "" && wire.persistedHash() == "" {
		wc.close(closeBadRequest, wsReasonInvalidMessage)
		return false
	}
	wc.mu.Lock()
	if _, exists := wc.ops[msg.ID]; exists {
		wc.mu.Unlock()
		wc.close(closeDuplicateID, fmt.Sprintf(wsReasonSubscriberExists, msg.ID))
		return false
	}
	if len(wc.ops) >= wc.limits.PerConnection {
		wc.mu.Unlock()
		wc.sendErrors(msg.ID, fmt.Sprintf(msgTooManyOnConnection, wc.limits.PerConnection))
		return true
	}
	op := &wsOperation{}
	wc.ops[msg.ID] = op
	session, requester := *wc.session, wc.requester
	wc.mu.Unlock()

	// What the operation names is looked up, and under trusted_documents = "only" its text must be trusted, as
	// over HTTP; a refusal is the operation's error, with the errors an HTTP request would get.
	refused, err := wc.s.completeDocument(wc.ctx, session.Role, &wire)
	switch {
	case err != nil:
		wc.forget(msg.ID)
		obs.Logger(wc.r.Context(), wc.s.log).Error("subscriptions: trusted document or persisted query", "error", err)
		wc.close(closeTryAgainLater, wsReasonUnavailable)
		return false
	case refused != nil:
		wc.forget(msg.ID)
		wc.send(wsMessage{ID: msg.ID, Type: "error", Payload: refused.errors})
		return true
	case strings.TrimSpace(wire.Query) == "":
		wc.forget(msg.ID)
		wc.sendErrors(msg.ID, msgQueryRequired)
		return true
	}
	req := wire.Request
	kind, failure := resolve.Operation(req)
	if failure != nil {
		wc.end(msg.ID, failure)
		return true
	}
	if kind != "subscription" {
		// A query or mutation over the socket is answered once, as over HTTP.
		go wc.executeOnce(msg.ID, requester, session, req)
		return true
	}
	sub, err := wc.s.live.Subscribe(session, req, &wsSink{wc: wc, id: msg.ID})
	if err != nil {
		wc.forget(msg.ID)
		wc.sendErrors(msg.ID, msgTooManyOnServer)
		return true
	}
	wc.mu.Lock()
	if wc.ops[msg.ID] == op {
		op.sub = sub
		wc.mu.Unlock()
	} else {
		// Completed by an answer that came before Subscribe returned (End or Unavailable).
		wc.mu.Unlock()
		wc.s.live.Unsubscribe(sub)
	}
	return true
}

// executeOnce answers a query or mutation sent over the socket, then completes it. It is admitted, routed and
// bounded as over HTTP: the operations of one socket count against its client's share of the pool.
func (wc *wsConn) executeOnce(id string, c requester, session resolve.Session, req resolve.Request) {
	kind, src := wc.s.engine.Route(req)
	body, failed := wc.s.answerOnce(wc.ctx, c, src, string(kind), session, req)
	switch {
	case failed != nil && failed.outage:
		// As when connection_init cannot read the roles: graphql-ws clients reconnect after 1013.
		wc.s.logFailure(wc.r.Context(), failed)
		wc.close(closeTryAgainLater, wsReasonUnavailable)
	case failed != nil:
		// The operation's error (a share in use, every connection busy, a bug); the others go on.
		wc.s.logFailure(wc.r.Context(), failed)
		if wc.forget(id) {
			wc.sendErrors(id, failed.message(obs.RequestID(wc.r.Context())))
		}
	case body != nil && wc.forget(id):
		wc.sendResult(id, body)
		wc.send(wsMessage{ID: id, Type: "complete"})
	}
}

// finish stops an operation the client completed.
func (wc *wsConn) finish(id string) {
	wc.mu.Lock()
	op := wc.ops[id]
	delete(wc.ops, id)
	wc.mu.Unlock()
	if op != nil && op.sub != nil {
		wc.s.live.Unsubscribe(op.sub)
	}
}

// forget drops an operation that ended on the server's side; false when it had already ended.
func (wc *wsConn) forget(id string) bool {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	if _, ok := wc.ops[id]; !ok {
		return false
	}
	delete(wc.ops, id)
	return true
}

// end sends the answer that ends an operation: an error message for a request that failed as a whole (no
// data: pg_graphql answers validation errors with "data": null), as graphql-ws servers answer validation
// errors, else the answer and complete.
func (wc *wsConn) end(id string, body []byte) {
	if !wc.forget(id) {
		return
	}
	var shape struct {
		Data   json.RawMessage `json:"data"`
		Errors json.RawMessage `json:"errors"`
	}
	if json.Unmarshal(body, &shape) == nil && (shape.Data == nil || string(shape.Data) == "null") && len(shape.Errors) > 0 {
		wc.send(wsMessage{ID: id, Type: "error", Payload: shape.Errors})
		return
	}
	wc.sendResult(id, body)
	wc.send(wsMessage{ID: id, Type: "complete"})
}

// sendResult sends a next message, or ends the operation with an error when the answer is too large.
func (wc *wsConn) sendResult(id string, body []byte) {
	if len(body) > wc.limits.MaxMessageBytes {
		wc.finish(id)
		wc.sendErrors(id, fmt.Sprintf(msgAnswerTooLarge, wc.limits.MaxMessageBytes))
		return
	}
	wc.send(wsMessage{ID: id, Type: "next", Payload: body})
}

func (wc *wsConn) sendErrors(id, message string) {
	wc.send(wsMessage{ID: id, Type: "error", Payload: errorList(message)})
}

// send queues a message; a client whose queue is full is too slow to keep up and is disconnected, so that it
// holds up nobody else. The payload goes out byte for byte as the engine wrote it (an answer is the same text
// as over HTTP, and is not re-encoded for every subscriber).
func (wc *wsConn) send(msg wsMessage) {
	data := make([]byte, 0, 48+len(msg.ID)+len(msg.Payload))
	data = append(data, '{')
	if msg.ID != "" {
		id, _ := json.Marshal(msg.ID)
		data = append(append(append(data, `"id":`...), id...), ',')
	}
	data = append(append(append(data, `"type":"`...), msg.Type...), '"') // the types are plain words
	if msg.Payload != nil {
		data = append(data, `,"payload":`...)
		data = append(data, msg.Payload...)
	}
	data = append(data, '}')
	wc.unsent.Add(1)
	select {
	case <-wc.ctx.Done():
		wc.unsent.Add(-1)
	case wc.out <- data:
	default:
		wc.unsent.Add(-1)
		wc.s.live.ConsumerDropped()
		wc.close(closeTryAgainLater, wsReasonSlowConsumer)
	}
}

// write sends the queued messages and pings the client at the keep-alive interval.
func (wc *wsConn) write() {
	ping := time.NewTicker(wc.limits.KeepAlive)
	defer ping.Stop()
	for {
		select {
		case <-wc.ctx.Done():
			return
		case data := <-wc.out:
			ctx, cancel := context.WithTimeout(wc.ctx, wc.limits.KeepAlive)
			err := wc.c.Write(ctx, websocket.MessageText, data)
			cancel()
			wc.unsent.Add(-1)
			if err != nil {
				wc.cancel()
				return
			}
		case <-ping.C:
			ctx, cancel := context.WithTimeout(wc.ctx, wc.limits.KeepAlive)
			err := wc.c.Ping(ctx)
			cancel()
			if err != nil {
				wc.close(closeGoingAway, wsReasonPingUnanswered)
				return
			}
		}
	}
}

// close ends the connection with a code and reason, after the messages already queued.
func (wc *wsConn) close(code websocket.StatusCode, reason string) {
	wc.closeOnce.Do(func() {
		go func() {
			// Let the writer send what is queued (the answer before an error's close, say), for a moment.
			deadline := time.Now().Add(time.Second)
			for wc.unsent.Load() > 0 && wc.ctx.Err() == nil && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			_ = wc.c.Close(code, closeReason(reason))
			wc.cancel()
		}()
	})
}

// maxCloseReason is the longest reason a close frame holds (125 bytes of payload, 2 of them the code).
const maxCloseReason = 123

// closeReason cuts reason to what a close frame holds, at a character's edge: the library sends no close at
// all for a longer one (a client's long operation id or token error would otherwise drop the connection).
func closeReason(reason string) string {
	if len(reason) <= maxCloseReason {
		return reason
	}
	cut := maxCloseReason
	for cut > 0 && !utf8.RuneStart(reason[cut]) {
		cut--
	}
	return reason[:cut]
}

// release forgets the connection's subscriptions once it has ended.
func (wc *wsConn) release() {
	wc.cancel()
	wc.mu.Lock()
	ops := wc.ops
	wc.ops = map[string]*wsOperation{}
	if wc.expiry != nil {
		wc.expiry.Stop()
	}
	wc.mu.Unlock()
	for _, op := range ops {
		if op.sub != nil {
			wc.s.live.Unsubscribe(op.sub)
		}
	}
	_ = wc.c.CloseNow()
}

// wsSink delivers a live query's answers to one operation of a connection.
type wsSink struct {
	wc *wsConn
	id string
}

func (k *wsSink) Next(body []byte) { k.wc.sendResult(k.id, body) }

func (k *wsSink) End(body []byte) { k.wc.end(k.id, body) }

func (k *wsSink) Unavailable() {
	k.wc.forget(k.id)
	k.wc.close(closeTryAgainLater, wsReasonUnavailable)
}

// sockets are the open WebSockets of a server, closed when it shuts down.
type sockets struct {
	mu   sync.Mutex
	open map[*wsConn]bool
}

func (ss *sockets) add(wc *wsConn) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.open == nil {
		ss.open = map[*wsConn]bool{}
	}
	ss.open[wc] = true
}

func (ss *sockets) remove(wc *wsConn) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.open, wc)
}

// closeAll closes every open WebSocket with 1013 (try again later) and reason.
func (ss *sockets) closeAll(reason string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for wc := range ss.open {
		wc.close(closeTryAgainLater, reason)
	}
}
