package authapi

import (
	"testing"

	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
)

// TestErrorCodesLiveInTheCatalogue keeps the auth API's error codes in errorcodes.go: a code written as a string
// literal anywhere else in the package would be a second spelling of the contract that nothing checks.
func TestErrorCodesLiveInTheCatalogue(t *testing.T) {
	codes := testenv.Catalogue(t, ".", "errorcodes.go", map[string]int{
		"newError":      1, // newError(status, code, msg)
		"badRequest":    0, // badRequest(code, msg)
		"oauthErrorFor": 1, // oauthErrorFor(status, code)
	})
	if len(codes) < 20 {
		t.Fatalf("only %d codes in errorcodes.go", len(codes))
	}
}
