package benchcmp

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/pgreflect/pgreflect/internal/procstat"
)

// ProcessCPU is the CPU time a process has used so far.
func ProcessCPU(pid int) (time.Duration, error) {
	s, err := procstat.Read(pid)
	return s.CPU, err
}

// ClusterTimes is the CPU time used so far by each process of a PostgreSQL cluster: the postmaster and its
// children (backends and auxiliary processes), by pid.
func ClusterTimes(postmaster int) (map[int]time.Duration, error) {
	own, err := procstat.Read(postmaster)
	if err != nil {
		return nil, err
	}
	children, err := procstat.Children(postmaster)
	if err != nil {
		return nil, err
	}
	times := map[int]time.Duration{postmaster: own.CPU}
	for pid, s := range children {
		times[pid] = s.CPU
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
