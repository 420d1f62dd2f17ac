package sandboxtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"service-sandbox.dev/go/sandbox"
)

// StartTimeout is how long a server started by Main may take to answer its health check.
var StartTimeout = 60 * time.Second

var (
	serverMu sync.Mutex
	server   *sandbox.Server
)

// Server is the emulator this test binary uses: set by Main; without Main, the one at SANDBOX_URL (default
// sandbox.DefaultURL), started by nobody. SANDBOX_ADMIN_TOKEN is sent on control-plane calls.
func Server() *sandbox.Server {
	serverMu.Lock()
	defer serverMu.Unlock()
	if server == nil {
		server = newServer(URL())
	}
	return server
}

func newServer(url string) *sandbox.Server {
	s := sandbox.NewServer(url)
	s.AdminToken = os.Getenv("SANDBOX_ADMIN_TOKEN")
	return s
}

// URL is SANDBOX_URL, else sandbox.DefaultURL.
func URL() string {
	if u := strings.TrimRight(os.Getenv("SANDBOX_URL"), "/"); u != "" {
		return u
	}
	return sandbox.DefaultURL
}

// Main runs a package's tests against one emulator: the one at SANDBOX_URL when GET /_emulator/health answers
// there, else one it starts with the CLI (see CLI; --port on a free port) and stops after the tests. When the
// tests are done it ends the sessions this test binary created (through Server()) that are still live
// (sandbox.Server.EndRemaining), so a test that crashed before its cleanup leaves nothing behind, and it never
// ends another process's sessions: two runs with the same SANDBOX_LABEL at once are safe. Use it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }
func Main(m *testing.M) int {
	s := newServer(URL())
	if !s.Healthy(context.Background()) {
		started, stop, err := startServer(s.BaseURL)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer stop()
		s = newServer(started)
	}
	serverMu.Lock()
	server = s
	serverMu.Unlock()
	code := m.Run()
	if ended, err := s.EndRemaining(context.Background()); err != nil || len(ended) > 0 {
		fmt.Fprintf(os.Stderr, "ended the sessions this run created and left open: %v %v\n", ended, err)
	}
	return code
}

var (
	label     = os.Getenv("SANDBOX_LABEL")
	labelOnce sync.Once
)

// Label is the run's label, given to every session New creates (docs/sessions.md#labels): SANDBOX_LABEL (a CI
// job id, say), else one made up when the test binary starts.
func Label() string {
	labelOnce.Do(func() {
		if label == "" {
			random := make([]byte, 6)
			rand.Read(random)
			label = "go-" + hex.EncodeToString(random)
		}
	})
	return label
}

// CLI is the command that runs the built CLI: SANDBOX_CLI (a path ending in .mjs or .js runs with node; anything
// else is a command line), else dist/service-sandbox.mjs of the first folder up from the test's folder that has
// one (a checkout of service-sandbox after `npm run build`), else `service-sandbox` on PATH. Never `npx`: outside
// the checkout it would ask the npm registry for a package of that name.
func CLI() []string {
	if configured := strings.TrimSpace(os.Getenv("SANDBOX_CLI")); configured != "" {
		if strings.HasSuffix(configured, ".mjs") || strings.HasSuffix(configured, ".js") {
			return []string{"node", configured}
		}
		return strings.Fields(configured)
	}
	if dir, err := os.Getwd(); err == nil {
		for {
			built := filepath.Join(dir, "dist", "service-sandbox.mjs")
			if _, err := os.Stat(built); err == nil {
				return []string{"node", built}
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return []string{"service-sandbox"}
}

func startServer(triedURL string) (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	args := append(CLI(), "--port", strconv.Itoa(port))
	log, err := os.CreateTemp("", "service-sandbox-*.log")
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	ownProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		log.Close()
		os.Remove(log.Name())
		return "", nil, fmt.Errorf("nothing answers at %s/_emulator/health and `%s` cannot start (set SANDBOX_URL or SANDBOX_CLI): %w", triedURL, strings.Join(args, " "), err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop := func() {
		stopProcessGroup(cmd, exited)
		log.Close()
		os.Remove(log.Name())
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	started := sandbox.NewServer(url)
	deadline := time.Now().Add(StartTimeout)
	for !started.Healthy(context.Background()) {
		select {
		case <-exited:
		default:
			if time.Now().Before(deadline) {
				time.Sleep(200 * time.Millisecond) // polling the health check of a starting process, not webhooks
				continue
			}
		}
		output, _ := os.ReadFile(log.Name())
		stop()
		return "", nil, fmt.Errorf("nothing answers at %s/_emulator/health, and `%s` did not answer on %s/_emulator/health:\n%s",
			triedURL, strings.Join(args, " "), url, output)
	}
	return url, stop, nil
}
