// Package pgtest runs a throw-away PostgreSQL server for tests: it finds
// Debian's PostgreSQL binaries (/usr/lib/postgresql/*/bin), initdb's a
// cluster in a temporary directory, starts it on 127.0.0.1 on a free port
// (its unix socket in that directory too, so it never meets a system
// cluster) and stops it at the end.
//
// PostgreSQL refuses to run as root; when the tests run as root, the
// cluster is owned and run by the unprivileged "postgres" user that
// Debian's package creates.
//
// A test that needs a server calls Shared (one server per test binary,
// stopped by Main) or New (a server of its own, e.g. to kill or restart
// it). Without PostgreSQL installed the test is skipped with a message
// naming what is missing, except in CI (CI=true), where it fails: the test
// command (scripts/test) installs the package.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/custom-agent/custom-agent/testsupport/testenv"
)

// Superuser is the cluster's superuser; it logs in over TCP with a
// password (scram-sha-256), as a team's users would.
const Superuser = "postgres"

// ErrNotInstalled: no PostgreSQL server binaries were found.
var ErrNotInstalled = errors.New("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/postgres; apt-get install postgresql)")

// Find returns the directory of the newest PostgreSQL major version's
// server binaries (initdb, postgres).
func Find() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	type cand struct {
		dir   string
		major int
	}
	var cs []cand
	for _, d := range dirs {
		major, err := strconv.Atoi(filepath.Base(filepath.Dir(d)))
		if err != nil {
			continue
		}
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			cs = append(cs, cand{d, major})
		}
	}
	if len(cs) == 0 {
		return "", ErrNotInstalled
	}
	slices.SortFunc(cs, func(a, b cand) int { return b.major - a.major })
	return cs[0].dir, nil
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// Server is a running throw-away cluster.
type Server struct {
	bin      string // the binaries' directory
	root     string // temporary directory: data/, the socket, the log
	Port     int
	Password string
	cred     *syscall.Credential // run as this user (when we are root)

	mu   sync.Mutex
	cmd  *exec.Cmd
	exit chan struct{} // closed when cmd has exited
	ndb  int
}

// New initdb's and starts a server of the caller's own, stopped and removed
// when the test ends. It skips (fails in CI) when PostgreSQL is missing.
func New(t testing.TB) *Server {
	t.Helper()
	s, err := Start()
	if err != nil {
		skipOrFail(t, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func skipOrFail(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, ErrNotInstalled) && !testenv.InCI() {
		t.Skipf("skipping: %v", err)
	}
	t.Fatalf("starting a test PostgreSQL server: %v", err)
}

var (
	sharedOnce sync.Once
	shared     *Server
	sharedErr  error
)

// Shared returns the test binary's shared server, starting it on first use.
// Main stops it. It skips (fails in CI) when PostgreSQL is missing.
func Shared(t testing.TB) *Server {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedErr = Start() })
	if sharedErr != nil {
		skipOrFail(t, sharedErr)
	}
	return shared
}

// Main runs the tests and then stops the shared server, if one was
// started. Call it from TestMain: func TestMain(m *testing.M) { pgtest.Main(m) }.
func Main(m *testing.M) {
	code := m.Run()
	if shared != nil {
		shared.Close()
	}
	os.Exit(code)
}

// Start initdb's a cluster in a new temporary directory and starts it.
func Start() (*Server, error) {
	bin, err := Find()
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("PostgreSQL refuses to run as root and there is no unprivileged postgres user to run it as (Debian's postgresql package creates one): %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}
	}
	// Not t.TempDir: its parents are root's and closed to the postgres
	// user. /tmp is open to everyone.
	if s.root, err = os.MkdirTemp("", "custom-agent-pgtest-"); err != nil {
		return nil, err
	}
	if err := s.initdb(); err != nil {
		os.RemoveAll(s.root)
		return nil, err
	}
	if err := s.Start(); err != nil {
		os.RemoveAll(s.root)
		return nil, err
	}
	return s, nil
}

func (s *Server) initdb() error {
	pw := make([]byte, 12)
	rand.Read(pw)
	s.Password = hex.EncodeToString(pw)
	pwfile := filepath.Join(s.root, "pw")
	if err := os.WriteFile(pwfile, []byte(s.Password+"\n"), 0o600); err != nil {
		return err
	}
	if s.cred != nil {
		if err := os.Chown(s.root, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return err
		}
		if err := os.Chown(pwfile, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return err
		}
	}
	cmd := exec.Command(filepath.Join(s.bin, "initdb"), "-D", s.dataDir(), "-U", Superuser,
		"--pwfile", pwfile, "--auth-local=trust", "--auth-host=scram-sha-256",
		"-E", "UTF8", "--no-locale", "--no-sync", "--no-instructions")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	cmd.Dir = s.root
	out, err := cmd.CombinedOutput()
	os.Remove(pwfile)
	if err != nil {
		return fmt.Errorf("initdb: %v\n%s", err, out)
	}
	return nil
}

func (s *Server) dataDir() string { return filepath.Join(s.root, "data") }

// LogFile is the server's log.
func (s *Server) LogFile() string { return filepath.Join(s.root, "postgres.log") }

// Start starts the server (again, after Stop or Kill) and waits until it
// accepts connections. The first start picks a free port; later ones keep
// it, so that URLs handed out stay valid.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("pgtest: server already running")
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		fresh := s.Port == 0
		if fresh {
			port, err := freePort()
			if err != nil {
				return err
			}
			s.Port = port
		}
		if lastErr = s.startOnce(); lastErr == nil {
			return nil
		}
		if !fresh {
			break
		}
		s.Port = 0 // taken meanwhile: try another
	}
	return lastErr
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) startOnce() error {
	logf, err := os.OpenFile(s.LogFile(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(filepath.Join(s.bin, "postgres"), "-D", s.dataDir(),
		"-p", strconv.Itoa(s.Port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories="+s.root,
		"-c", "fsync=on", "-c", "synchronous_commit=on",
		"-c", "max_connections=300", "-c", "shared_buffers=64MB",
		"-c", "logging_collector=off", "-c", "log_min_messages=warning",
		"-c", "max_wal_size=1GB")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = s.root
	// Pdeathsig: a test binary that dies (a timeout's panic) takes its
	// server with it. The signal is sent when the thread that started
	// the process exits, so every server is started from one thread that
	// lives as long as the test binary (spawn).
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := spawn(cmd); err != nil {
		return fmt.Errorf("starting postgres: %w", err)
	}
	exit := make(chan struct{})
	go func() { cmd.Wait(); close(exit) }()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, s.URL("postgres"))
		if err == nil {
			conn.Close(ctx)
			s.cmd, s.exit = cmd, exit
			return nil
		}
		select {
		case <-exit:
			return fmt.Errorf("postgres exited at start-up: %s", s.logTail())
		case <-ctx.Done():
			cmd.Process.Kill()
			<-exit
			return fmt.Errorf("postgres did not accept connections within a minute: %v\n%s", err, s.logTail())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(s.LogFile())
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

var spawnReq = make(chan func())

func init() {
	go func() {
		runtime.LockOSThread() // never unlocked: this thread lives as long as the process
		for f := range spawnReq {
			f()
		}
	}()
}

// spawn starts cmd on the spawning thread (see Pdeathsig above).
func spawn(cmd *exec.Cmd) error {
	done := make(chan error)
	spawnReq <- func() { done <- cmd.Start() }
	return <-done
}

// Stop shuts the server down cleanly (a fast shutdown: open sessions are
// ended, committed work is on disk).
func (s *Server) Stop() error { return s.stop(syscall.SIGINT) }

// Kill kills the server's postmaster with SIGKILL, as a crash would; its
// backends end when they notice. Start runs crash recovery.
func (s *Server) Kill() error {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd != nil {
		// The whole process group: the backends too, at once, as in a
		// machine's crash.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	return s.stop(syscall.SIGKILL)
}

func (s *Server) stop(sig syscall.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return nil
	}
	s.cmd.Process.Signal(sig)
	select {
	case <-s.exit:
	case <-time.After(60 * time.Second):
		s.cmd.Process.Kill()
		<-s.exit
	}
	s.cmd, s.exit = nil, nil
	if sig == syscall.SIGKILL {
		// A killed postmaster leaves its shared memory until its last
		// backend is gone: wait for the postmaster.pid lock's owner to
		// vanish, so that the next start does not race it.
		time.Sleep(200 * time.Millisecond)
	}
	return nil
}

// Close stops the server and removes its directory.
func (s *Server) Close() {
	s.Stop()
	os.RemoveAll(s.root)
}

// URL is the connection URL of database db as the superuser.
func (s *Server) URL(db string) string {
	return s.URLAs(Superuser, s.Password, db)
}

// URLAs is the connection URL of database db as user with password.
func (s *Server) URLAs(user, password, db string) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(user, password),
		Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)), Path: "/" + db,
		RawQuery: "sslmode=disable"}
	return u.String()
}

// CreateDB creates a new, empty database and returns its URL.
func (s *Server) CreateDB(t testing.TB) string {
	t.Helper()
	s.mu.Lock()
	s.ndb++
	name := fmt.Sprintf("t%d", s.ndb)
	s.mu.Unlock()
	if err := s.Exec(context.Background(), "postgres", "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	return s.URL(name)
}

// Exec runs statements in database db as the superuser (tests that edit
// the log behind the store's back, or set the server up).
func (s *Server) Exec(ctx context.Context, db string, stmts ...string) error {
	conn, err := pgx.Connect(ctx, s.URL(db))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for _, q := range stmts {
		if _, err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", strings.TrimSpace(q), err)
		}
	}
	return nil
}
