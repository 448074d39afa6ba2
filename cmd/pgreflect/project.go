package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/joho/godotenv"

	"github.com/pgreflect/pgreflect/auth"
)

// A local project directory (--dir) holds:
//
//	data/          the PostgreSQL cluster (owned by the postgres OS user when pgreflect runs as root)
//	postgres.log   its log
//	sock/          its Unix socket
//	project.env    URLs and secrets as KEY=value lines (mode 0600), kept across restarts
//	pgreflect.pid  the pid of the running `pgreflect start`
const (
	envFileName = "project.env"
	pidFileName = "pgreflect.pid"
	dataDirName = "data"
)

// defaultDirName is the project directory under the workdir when --dir is not given.
const defaultDirName = ".pgreflect"

// addDirFlags adds --dir and --workdir, which name a local project: a project belongs to its workdir (the
// directory of its supabase/config.toml), as a Supabase CLI project does, so that `start --workdir examples`
// does not share the project, and the stored settings, of the current directory (issue 22).
// resolveProjectDir resolves them once the flags are parsed.
func addDirFlags(fs *flag.FlagSet) (dir, workdir *string) {
	dir = fs.String("dir", "", "project directory: the database cluster, keys and pid file (default: WORKDIR/"+defaultDirName+")")
	workdir = fs.String("workdir", ".", "project root holding supabase/config.toml")
	return dir, workdir
}

// resolveProjectDir is the absolute project directory of --dir and --workdir.
func resolveProjectDir(dir, workdir string) (string, error) {
	if dir == "" {
		dir = filepath.Join(workdir, defaultDirName)
	}
	return filepath.Abs(dir)
}

// envKeys are the lines `pgreflect status -o env` prints, in this order.
var envKeys = []string{
	"API_URL", "GRAPHQL_URL", "STUDIO_URL", "DB_URL", "PROJECT_REF", "ANON_KEY", "SERVICE_ROLE_KEY", "JWT_SECRET",
	"MANAGEMENT_URL", "MANAGEMENT_TOKEN",
}

// authenticatorPasswordKey keeps the password `start` gives the authenticator role; it is not printed.
const authenticatorPasswordKey = "AUTHENTICATOR_PASSWORD"

// projectSecrets are generated on a project's first start and reused afterwards.
type projectSecrets struct {
	JWTSecret             string
	ProjectRef            string
	AnonKey               string
	ServiceRoleKey        string
	ManagementToken       string
	AuthenticatorPassword string
}

// readProjectEnv reads DIR/project.env; a missing file gives (nil, fs.ErrNotExist).
func readProjectEnv(dir string) (map[string]string, error) {
	env, err := godotenv.Read(filepath.Join(dir, envFileName))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fs.ErrNotExist
		}
		return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, envFileName), err)
	}
	return env, nil
}

// writeProjectEnv replaces DIR/project.env (mode 0600) atomically: the printed keys first, then the rest
// sorted.
func writeProjectEnv(dir string, env map[string]string) error {
	var b strings.Builder
	done := map[string]bool{}
	for _, k := range envKeys {
		if v, ok := env[k]; ok {
			fmt.Fprintf(&b, "%s=%s\n", k, v)
			done[k] = true
		}
	}
	var rest []string
	for k := range env {
		if !done[k] {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	for _, k := range rest {
		fmt.Fprintf(&b, "%s=%s\n", k, env[k])
	}
	path := filepath.Join(dir, envFileName)
	if err := writeFileAtomic(path, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writeFileAtomic writes data to a temporary file beside path, with mode perm from the start, and renames it.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), perm)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	return err
}

// secretsFrom takes the secrets kept in env and generates whatever is missing. API keys are re-signed when the
// JWT secret or the project ref they were made for is new.
func secretsFrom(env map[string]string) (projectSecrets, error) {
	s := projectSecrets{
		JWTSecret:             env["JWT_SECRET"],
		ProjectRef:            env["PROJECT_REF"],
		AnonKey:               env["ANON_KEY"],
		ServiceRoleKey:        env["SERVICE_ROLE_KEY"],
		ManagementToken:       env["MANAGEMENT_TOKEN"],
		AuthenticatorPassword: env[authenticatorPasswordKey],
	}
	var err error
	resign := false
	if len(s.JWTSecret) < auth.MinSecretLength {
		if s.JWTSecret, err = auth.RandomSecret(); err != nil {
			return s, err
		}
		resign = true
	}
	if len(s.ProjectRef) != 20 {
		if s.ProjectRef, err = auth.NewProjectRef(); err != nil {
			return s, err
		}
		resign = true
	}
	keys, err := auth.NewKeys(s.JWTSecret)
	if err != nil {
		return s, err
	}
	if resign || s.AnonKey == "" {
		if s.AnonKey, err = keys.SignAPIKey("anon", s.ProjectRef); err != nil {
			return s, fmt.Errorf("sign anon key: %w", err)
		}
	}
	if resign || s.ServiceRoleKey == "" {
		if s.ServiceRoleKey, err = keys.SignAPIKey("service_role", s.ProjectRef); err != nil {
			return s, fmt.Errorf("sign service_role key: %w", err)
		}
	}
	if s.ManagementToken == "" {
		// The shape of Supabase's personal access tokens.
		if s.ManagementToken, err = randomHex(20); err != nil {
			return s, err
		}
		s.ManagementToken = "sbp_" + s.ManagementToken
	}
	if s.AuthenticatorPassword == "" {
		if s.AuthenticatorPassword, err = randomHex(16); err != nil {
			return s, err
		}
	}
	return s, nil
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// lockProject claims the project directory for this `pgreflect start`: a POSIX write lock on
// DIR/pgreflect.pid, held until the process exits, with the pid written into the file. When another live
// process holds it, the error names that process.
func lockProject(dir string) (*os.File, error) {
	path := filepath.Join(dir, pidFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open pid file: %w", err)
	}
	lock := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lock); err != nil {
		f.Close()
		if pid, running := readPID(dir); running {
			return nil, fmt.Errorf("a pgreflect start is already running on %s (pid %d); stop it with: pgreflect stop --dir %s", dir, pid, dir)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	werr := f.Truncate(0)
	if werr == nil {
		_, werr = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if werr != nil {
		f.Close()
		return nil, fmt.Errorf("write pid file: %w", werr)
	}
	return f, nil
}

// unlockProject removes the pid file and releases the lock.
func unlockProject(f *os.File) {
	os.Remove(f.Name())
	f.Close()
}

// readPID returns the pid of the `pgreflect start` that holds DIR/pgreflect.pid, and whether there is one. The
// lock, not the file's content, decides: a file left by a killed process names no one.
func readPID(dir string) (int, bool) {
	f, err := os.Open(filepath.Join(dir, pidFileName))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	lock := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lock); err != nil || lock.Type == syscall.F_UNLCK {
		return 0, false
	}
	return int(lock.Pid), true
}

// processAlive reports whether pid names a live process (a zombie, exited but not yet reaped, is not).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true // no /proc: trust kill
	}
	// The state follows the command name in parentheses, which may itself contain ") ".
	if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}
