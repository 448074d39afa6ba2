package httpapi

import "github.com/coder/websocket"

// The catalogue of what the HTTP layer itself tells clients on /graphql/v1 and its subscriptions, before or
// around the engine (whose texts are in resolve/messages.go; the auth API's codes in authapi/errorcodes.go).
// Call sites name these constants and never write a text of their own: TestMessagesLiveInTheCatalogue fails
// on a string literal passed where a client reads it.

// Refusals of the request itself (400, 405, 413, 408), in the GraphQL contract's shape.
const (
	msgOnlyGetPost    = "only GET and POST are supported"
	msgBodyTooLarge   = "request body exceeds %d bytes"
	msgBodyTooSlow    = "request body not received in time"
	msgBodyUnreadable = "could not read the request body"
	msgBodyNotRequest = "request body must be a JSON object with a query"
	msgQueryRequired  = "query is required"
	// msgGETOnlyQueries refuses a mutation or subscription sent with GET (405).
	msgGETOnlyQueries = "GET requests may only run queries; send a %s with POST"
)

// Refusals of credentials (401) beyond the API-key gateway's (auth.MsgNoAPIKey, auth.MsgInvalidAPIKey).
const (
	// msgServiceRoleRequired: the operations endpoints (metrics) take the service_role key only.
	msgServiceRoleRequired = "the service_role key is required"
	// msgRoleNotAssumable: the role a JWT names is the login role, or one the login role may not switch to.
	msgRoleNotAssumable = "JWT role %q may not be assumed"
)

// A request that got no database: the outage (503) and the admission refusals (429, 503); each carries the
// request id, so that an operator can find the logged reason, and nothing of the reason itself.
const (
	msgUnavailableByID = "Database unavailable (request id %s)"
	msgPoolTimeout     = "Database busy: no connection free within %s (request id %s)"
	msgShareFull       = "Too many concurrent requests of this %s: at most %d of them may use the database at once (request id %s)"
	msgSlowFull        = "Database busy: this operation is slow, and at most %d slow requests may use the database at once (request id %s)"
)

// The texts and codes of Apollo's automatic persisted queries, as Apollo Server sends them: Apollo Client's
// persisted-query link recognises PersistedQueryNotFound and PersistedQueryNotSupported by message or code
// and then sends the document.
const (
	msgPersistedQueryNotFound     = "PersistedQueryNotFound"
	codePersistedQueryNotFound    = "PERSISTED_QUERY_NOT_FOUND"
	msgPersistedQueryNotSupported = "PersistedQueryNotSupported"
	codePersistedQueryNotSupport  = "PERSISTED_QUERY_NOT_SUPPORTED"
	msgPersistedQueryHashMismatch = "provided sha does not match query"
	msgPersistedQueryVersion      = "Unsupported persisted query version"
	msgExtensionsNotObject        = "extensions must be an object"
	codeBadRequest                = "BAD_REQUEST"
)

// The texts of trusted documents' refusals.
const (
	msgUnknownDocumentID = "unknown document id %q: it is not among the project's trusted documents"
	msgUntrustedDocument = "only trusted documents may run here, and this document is not one of them: send the id of a document added with `pgreflect documents push`"
	msgTrustedOff        = "trusted documents are off: send the document's text in query"
)

// The close codes of graphql-transport-ws, and the standard ones used here. graphql-ws clients reconnect after
// 4403 and 1013 (with fresh connection params: a renewed token), and give up after the others.
const (
	closeBadRequest      websocket.StatusCode = 4400
	closeUnauthorized    websocket.StatusCode = 4401
	closeForbidden       websocket.StatusCode = 4403
	closeBadProtocol     websocket.StatusCode = 4406
	closeInitTimeout     websocket.StatusCode = 4408
	closeDuplicateID     websocket.StatusCode = 4409
	closeTooManyInits    websocket.StatusCode = 4429
	closeTryAgainLater   websocket.StatusCode = 1013
	closeGoingAway       websocket.StatusCode = 1001
	closeInternalProblem websocket.StatusCode = 4500
)

// The close reasons that go with them, and the errors of single subscriptions.
const (
	wsReasonSlowConsumer      = "Try again later: the client did not read its messages in time"
	wsReasonUnavailable       = "Try again later: database unavailable"
	wsReasonJWTExpired        = "Forbidden: JWT expired"
	wsReasonInvalidMessage    = "Invalid message received"
	wsReasonInitTimeout       = "Connection initialisation timeout"
	wsReasonTooManyInits      = "Too many initialisation requests"
	wsReasonUnauthorized      = "Unauthorized"
	wsReasonSubprotocol       = "Subprotocol not acceptable"
	wsReasonShutdown          = "Server shutting down"
	wsReasonSearchPathChanged = "Try again later: the API's schemas changed"
	wsReasonSubscriberExists  = "Subscriber for %s already exists"
	wsReasonOtherUser         = "Forbidden: a renewed token must be of the same role and user"
	// wsReasonForbidden prefixes a refused credential's message (4403), as graphql-ws' servers word it.
	wsReasonForbidden      = "Forbidden: "
	wsReasonPingUnanswered = "keep-alive ping not answered"
	msgTooManyOnConnection = "too many subscriptions on this connection (at most %d)"
	msgTooManyOnServer     = "too many subscriptions on this server"
	msgAnswerTooLarge      = "answer exceeds %d bytes"
)
