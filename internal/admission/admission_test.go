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
	l := New()
	keyA, keyB, keyC := Key{"key:a", 2}, Key{"key:b", 2}, Key{"key:c", 2}
	anon, authenticated := Key{"role:anon", 2}, Key{"role:authenticated", 2}
	a1, err := l.Admit(context.Background(), keyA, anon)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Admit(context.Background(), keyA, anon); err != nil {
		t.Fatal(err)
	}
	// key:b shares role:anon, which is full too.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = l.Admit(ctx, keyB, anon)
	var full *Full
	if !errors.As(err, &full) || full.Key != "role:anon" || full.Max != 2 || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("over the share: %v", err)
	}
	if release, err := l.Admit(context.Background(), keyC, authenticated); err != nil {
		t.Fatalf("another key and role: %v", err)
	} else {
		release()
	}
	admitted := make(chan error, 1)
	go func() {
		_, err := l.Admit(context.Background(), keyA, anon)
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

// Hold counts a running request over the share without waiting; the key's next request then waits until
// both the held and the admitted ones have left.
func TestHoldCountsOverTheShare(t *testing.T) {
	l := New()
	slow := Key{"slow operations", 1}
	leave, err := l.Admit(context.Background(), slow)
	if err != nil {
		t.Fatal(err)
	}
	unhold := l.Hold(slow)
	if got := l.Held(slow.Name); got != 2 {
		t.Fatalf("held %d, want 2 (over the share of 1)", got)
	}
	leave()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := l.Admit(ctx, slow); !errors.As(err, new(*Full)) {
		t.Fatalf("admitted while a held request ran: %v", err)
	}
	unhold()
	if got := l.Held(slow.Name); got != 0 {
		t.Fatalf("held %d after both left", got)
	}
	release, err := l.Admit(context.Background(), slow)
	if err != nil {
		t.Fatal(err)
	}
	release()
}
