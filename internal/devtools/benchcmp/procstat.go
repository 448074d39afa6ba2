package benchcmp

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of /proc's CPU times.
var clockTick = func() time.Duration {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if n, convErr := strconv.Atoi(strings.TrimSpace(string(out))); err == nil && convErr == nil && n > 0 {
		return time.Second / time.Duration(n)
	}
	return 10 * time.Millisecond
}()

// procStat returns the parent pid and the user plus system CPU time of a process (all its threads).
func procStat(pid int) (ppid int, cpu time.Duration, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// The command name may hold spaces and parentheses; the fields that follow its last ')' do not.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	// After the name: state(0) ppid(1) ... utime(11) stime(12).
	ppid, _ = strconv.Atoi(f[1])
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return ppid, time.Duration(utime+stime) * clockTick, nil
}

// ProcessCPU is the CPU time a process has used so far.
func ProcessCPU(pid int) (time.Duration, error) {
	_, cpu, err := procStat(pid)
	return cpu, err
}

// ClusterTimes is the CPU time used so far by each process of a PostgreSQL cluster: the postmaster and its
// children (backends and auxiliary processes), by pid.
func ClusterTimes(postmaster int) (map[int]time.Duration, error) {
	_, own, err := procStat(postmaster)
	if err != nil {
		return nil, err
	}
	times := map[int]time.Duration{postmaster: own}
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return nil, err
	}
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == postmaster {
			continue
		}
		if ppid, cpu, err := procStat(pid); err == nil && ppid == postmaster {
			times[pid] = cpu
		}
	}
	return times, nil
}

// ClusterCPUBetween is the CPU time the cluster used between two readings of ClusterTimes. Processes are
// compared one by one because connections and autovacuum workers come and go: a process started in between
// counts from zero; one that ended in between takes its last stretch with it, which is why the servers keep
// their connections open.
func ClusterCPUBetween(before, after map[int]time.Duration) time.Duration {
	var total time.Duration
	for pid, t := range after {
		if t >= before[pid] {
			total += t - before[pid]
		} else {
			total += t // the pid was reused
		}
	}
	return total
}

// Memory returns a process's resident set size and its peak, in bytes.
func Memory(pid int) (rss, peak int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		switch name {
		case "VmRSS":
			rss = kb << 10
		case "VmHWM":
			peak = kb << 10
		}
	}
	return rss, peak, nil
}
