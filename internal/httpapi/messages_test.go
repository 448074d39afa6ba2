package httpapi

import (
	"testing"

	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
)

// TestMessagesLiveInTheCatalogue keeps what the HTTP layer tells clients in messages.go: no text of its own at a
// call site that answers a client (a status body, a GraphQL errors list, a subscription's error or close
// reason), and no second spelling of a catalogued text or code.
func TestMessagesLiveInTheCatalogue(t *testing.T) {
	texts := testenv.Catalogue(t, ".", "messages.go", map[string]int{
		"writeMessage":      2, // writeMessage(w, status, msg)
		"writeGraphQLError": 2, // writeGraphQLError(w, status, msg)
		"refuse":            1, // refuse(status, message)
		"errorsBody":        0,
		"errorList":         0,
		"sendErrors":        1, // wc.sendErrors(id, message)
		"close":             1, // wc.close(code, reason)
	})
	if len(texts) < 30 {
		t.Fatalf("only %d texts in messages.go", len(texts))
	}
}
