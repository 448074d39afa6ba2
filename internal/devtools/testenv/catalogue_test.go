package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recordT records the errors a test would report.
type recordT struct {
	testing.TB
	errors []string
}

func (r *recordT) Helper() {}
func (r *recordT) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestCatalogueFindsTextsOutsideIt(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"messages.go": `package p

import "fmt"

const (
	msgNoKey = "no key"
	codeBad  = "bad_thing"
)

var _ = fmt.Sprint
`,
		"handler.go": `package p

import "fmt"

func write(status int, msg string) {}

func handle(role string) {
	write(401, msgNoKey)                        // fine: a constant
	write(401, fmt.Sprintf(msgNoKey, role))      // fine: constants only
	write(401, "Forbidden: "+role)              // a text of its own
	write(403, fmt.Sprintf("role %s", role))    // a text of its own
	_ = "bad_thing"                             // a second spelling of a code
}
`,
		"handler_test.go": `package p

var _ = "bad_thing" // tests may spell the contract out
`,
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := &recordT{}
	values := Catalogue(r, dir, "messages.go", map[string]int{"write": 1})
	if !values["no key"] || !values["bad_thing"] || values["fmt"] || len(values) != 2 {
		t.Errorf("catalogue values %v, want the two constants'", values)
	}
	want := []string{`handler.go:10:`, `handler.go:11:`, `handler.go:12:`}
	if len(r.errors) != len(want) {
		t.Fatalf("reported %d problems, want %d:\n%s", len(r.errors), len(want), strings.Join(r.errors, "\n"))
	}
	for i, w := range want {
		if !strings.Contains(r.errors[i], w) {
			t.Errorf("problem %d is %q, want one at %s", i, r.errors[i], w)
		}
	}
}
