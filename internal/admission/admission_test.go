package admission

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A key holds at most its share; a request over it waits for one of the key's own to leave, and gives up
// with *Full when its context ends first. Other keys are not held up.
func TestAdmitWaitsForTheKeysShare(t *testing.T) {
	l := New(2)
	a1, err := l.Admit(context.Background(), "key:a", "role:anon")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Admit(context.Background(), "key:a", "role:anon"); err != nil {
		t.Fatal(err)
	}
	// key:b shares role:anon, which is full too.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = l.Admit(ctx, "key:b", "role:anon")
	var full *Full
	if !errors.As(err, &full) || full.Key != "role:anon" || full.Max != 2 || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("over the share: %v", err)
	}
	if release, err := l.Admit(context.Background(), "key:c", "role:authenticated"); err != nil {
		t.Fatalf("another key and role: %v", err)
	} else {
		release()
	}
	admitted := make(chan error, 1)
	go func() {
		_, err := l.Admit(context.Background(), "key:a", "role:anon")
		admitted <- err
	}()
	select {
	case err := <-admitted:
		t.Fatalf("admitted over the share: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	a1()
	select {
	case err := <-admitted:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Second):
		t.Fatal("not admitted once one of the key's requests left")
	}
}
