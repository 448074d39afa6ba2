package apisettings

import (
	"testing"

	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
)

// The 400 texts live in messages.go: a second spelling elsewhere, or a literal given as a reason, fails.
func TestMessagesLiveInTheCatalogue(t *testing.T) {
	texts := testenv.Catalogue(t, ".", "messages.go", map[string]int{"badField": 1})
	if !texts["Request body must be a JSON object"] || !texts[schemasField] {
		t.Errorf("the catalogue lost its texts: %v", texts)
	}
}
