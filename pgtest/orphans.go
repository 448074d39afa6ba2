package pgtest

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// A test binary that is killed (a timeout, Ctrl-C, a crashed run) leaves its cluster running: nothing else stops
// a postmaster whose parent is gone. Each cluster directory therefore names the process that made it, and the
// next test binary to start stops the clusters whose maker is gone and removes their directories, so that a
// machine running tests all day does not fill up with servers.

// ownerFile, in a cluster's temporary directory, holds the pid of the test process that made it.
const ownerFile = "pgtest-owner"

// clusterDirPrefixes are the temporary directories pgtest makes (Main's, StartCluster's).
var clusterDirPrefixes = []string{"pgreflect-test-", "pgreflect-cluster-"}

// markOwner records this process as dir's maker.
func markOwner(dir string) error {
	return os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644)
}

// sweepOrphans stops the postmaster of every cluster under root whose maker is no longer running, and removes
// its directory. Directories without an owner file (made by something else) and those whose maker runs are
// left alone. It returns the directories it removed.
func sweepOrphans(root string) []string {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		if !e.IsDir() || !hasClusterPrefix(e.Name()) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		owner, err := readPID(filepath.Join(dir, ownerFile))
		if err != nil || running(owner) {
			continue
		}
		// postmaster.pid's first line is the postmaster's pid; SIGQUIT is PostgreSQL's immediate shutdown.
		if pid, err := readPID(filepath.Join(dir, "data", "postmaster.pid")); err == nil && running(pid) {
			if syscall.Kill(pid, syscall.SIGQUIT) != nil {
				continue // another user's server: not ours to remove
			}
		}
		if os.RemoveAll(dir) == nil {
			removed = append(removed, dir)
		}
	}
	return removed
}

func hasClusterPrefix(name string) bool {
	for _, p := range clusterDirPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// readPID reads the pid on the first line of path.
func readPID(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pid <= 0 {
		return 0, errors.New("no pid in " + path)
	}
	return pid, nil
}

// running reports whether a process with pid exists (signal 0 checks without sending anything).
func running(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
