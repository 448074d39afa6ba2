package procstat

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// A stat line whose command name holds spaces and a ") " is read from the fields after the last ')'.
func TestParseACommandWithParentheses(t *testing.T) {
	line := "4242 (po) s (x) ) T 17 4242 4242 0 -1 4194304 10 0 0 0 300 200 0 0 20 0 1 0 100 0 0\n"
	s, ok := parse([]byte(line))
	if want := (Stat{State: 'T', Parent: 17, CPU: 500 * clockTick()}); !ok || s != want {
		t.Errorf("parse: %+v %v, want %+v", s, ok, want)
	}
	for _, bad := range []string{"", "1 (x", "1 (x) S", "1 (x) S notapid 1 1 0 -1 0 0 0 0 0 0 0"} {
		if s, ok := parse([]byte(bad)); ok {
			t.Errorf("parse(%q) = %+v, want refused", bad, s)
		}
	}
}

// The test's own process and a child it starts, stopped with SIGSTOP, as /proc shows them.
func TestReadAndChildren(t *testing.T) {
	// /proc counts CPU time in clock ticks (10 ms): a test binary that has just started may not have one yet.
	useCPU(t, 50*time.Millisecond)
	self, err := Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Its state is the main thread's, which may be asleep while another runs the test.
	if self.Parent != os.Getppid() || self.Stopped() || self.CPU <= 0 {
		t.Errorf("this process: %+v, want not stopped, parent %d, some CPU time", self, os.Getppid())
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		children, err := Children(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if s, ok := children[cmd.Process.Pid]; ok && s.Stopped() && s.Parent == os.Getpid() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stopped child %d among the children: %+v", cmd.Process.Pid, children)
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := Read(1 << 30); err == nil {
		t.Error("a pid beyond pid_max was read")
	}
}

// useCPU spins until this process has used at least d of CPU time, as getrusage counts it.
func useCPU(t *testing.T, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		if time.Duration(ru.Utime.Nano()+ru.Stime.Nano()) >= d {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the process used under %s of CPU in 10 s", d)
		}
		for i := 0; i < 1e6; i++ {
		}
	}
}
