// Package porttest gives tests of a server's start the ports that start must cope with: one that another process
// took between the start's choice of it and its bind.
package porttest

import (
	"net"
	"testing"
)

// Taken is a source of ports for a test of a start that must move off a port taken between its choice and
// the bind: it gives first a port that a listener of the test holds, then free ones.
type Taken struct {
	Port  int // held until the test ends
	Asked int // how many ports Next gave
	free  func() (int, error)
}

// NewTaken holds a loopback port until t ends; the ports after it come from free.
func NewTaken(t testing.TB, free func() (int, error)) *Taken {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return &Taken{Port: l.Addr().(*net.TCPAddr).Port, free: free}
}

// Next gives the taken port the first time, a free one after.
func (p *Taken) Next() (int, error) {
	if p.Asked++; p.Asked == 1 {
		return p.Port, nil
	}
	return p.free()
}
