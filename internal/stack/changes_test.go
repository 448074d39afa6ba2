package stack

import "testing"

func TestChangesURL(t *testing.T) {
	for _, c := range []struct{ changes, admin, want string }{
		{"", "postgres://admin", "postgres://admin"},
		{"postgres://repl", "postgres://admin", "postgres://repl"},
		{ChangesOff, "postgres://admin", ""},
		{"", "", ""},
	} {
		if got := changesURL(Options{ChangesURL: c.changes, AdminURL: c.admin}); got != c.want {
			t.Errorf("changes %q, admin %q: %q, want %q", c.changes, c.admin, got, c.want)
		}
	}
}
