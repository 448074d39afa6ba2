// Package procstat reads what Linux's /proc/PID/stat says of a process: its state, its parent and the CPU time
// it has used. Tests read it to freeze a PostgreSQL server (pgtest) and benchmarks to account for its CPU time
// (benchcmp).
package procstat

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Stat is what /proc/PID/stat says of a process.
type Stat struct {
	// State is the state letter: R running, S sleeping, D in uninterruptible sleep, T stopped by a signal,
	// t stopped by a tracer, Z a zombie, X dead.
	State byte
	// Parent is the parent's pid.
	Parent int
	// CPU is the user plus system CPU time of all its threads.
	CPU time.Duration
}

// Stopped reports whether the process is stopped by a signal or can no longer run at all (a zombie, dead).
func (s Stat) Stopped() bool {
	return s.State == 'T' || s.State == 't' || s.State == 'Z' || s.State == 'X'
}

// Read reads process pid's stat; an error once the process has exited.
func Read(pid int) (Stat, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return Stat{}, err
	}
	s, ok := parse(b)
	if !ok {
		return Stat{}, fmt.Errorf("unexpected /proc/%d/stat: %q", pid, b)
	}
	return s, nil
}

// parse reads a stat line. The command name may hold spaces and parentheses; the fields after its last ')' do
// not: state(0) ppid(1) ... utime(11) stime(12).
func parse(b []byte) (Stat, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Stat{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 || len(f[0]) != 1 {
		return Stat{}, false
	}
	parent, err := strconv.Atoi(f[1])
	if err != nil {
		return Stat{}, false
	}
	utime, uErr := strconv.ParseInt(f[11], 10, 64)
	stime, sErr := strconv.ParseInt(f[12], 10, 64)
	if uErr != nil || sErr != nil {
		return Stat{}, false
	}
	return Stat{State: f[0][0], Parent: parent, CPU: time.Duration(utime+stime) * clockTick()}, true
}

// Children lists the processes whose parent is pid, each with its stat. A process that exits while they are
// listed is left out.
func Children(pid int) (map[int]Stat, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	out := map[int]Stat{}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if s, err := Read(child); err == nil && s.Parent == pid {
			out[child] = s
		}
	}
	return out, nil
}

// clockTick is the unit of /proc's CPU times, asked for once, when first needed (not when a test binary that
// imports pgtest starts).
var clockTick = sync.OnceValue(func() time.Duration {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if n, convErr := strconv.Atoi(strings.TrimSpace(string(out))); err == nil && convErr == nil && n > 0 {
		return time.Second / time.Duration(n)
	}
	return 10 * time.Millisecond
})
