package sandboxtest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// StartTimeout is how long a server started by Main may take to answer its health check.
var StartTimeout = 60 * time.Second

// server is the emulator every session of this test binary uses; set by Main, else ServerURL().
var server string

// Main runs a package's tests against one emulator: the one at SANDBOX_URL (default DefaultURL) when
// GET /_emulator/health answers there, otherwise one it starts with the CLI (see CLI; --port on a free port)
// and stops when the tests are done. Every session of the run carries the run's label (see Label); when the
// tests are done Main ends whatever is left with it (DELETE /_emulator/sessions?label=...), so a test that
// crashed before its cleanup leaves nothing behind. Use it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }
//
// Without it, New uses the server at SANDBOX_URL and starts none.
func Main(m *testing.M) int {
	addr := ServerURL()
	if !healthy(addr) {
		started, stop, err := startServer(addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer stop()
		addr = started
	}
	server = addr
	code := m.Run()
	if ended := endLabel(addr, Label()); ended != "" {
		fmt.Fprintf(os.Stderr, "ended sessions the run left behind: %s\n", ended)
	}
	return code
}

var label = os.Getenv("SANDBOX_LABEL")
var labelOnce sync.Once

// Label is the run's label, given to every session New creates (docs/sessions.md#labels): SANDBOX_LABEL
// (a CI job id, say), else one made up when the test binary starts.
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

// endLabel is DELETE /_emulator/sessions?label=...: the ids of the sessions it ended ("" when none or on error).
func endLabel(addr, label string) string {
	req, _ := http.NewRequest("DELETE", addr+"/_emulator/sessions?label="+url.QueryEscape(label), nil)
	res, err := do(admin(req))
	if err != nil {
		return err.Error()
	}
	if res.Status != http.StatusOK {
		return res.String()
	}
	var answer struct{ Ended []string }
	if json.Unmarshal(res.Body, &answer) != nil || len(answer.Ended) == 0 {
		return ""
	}
	return strings.Join(answer.Ended, ", ")
}

// CLI is the command that runs the built CLI: SANDBOX_CLI (a path ending in .mjs or .js runs with node;
// anything else is a command line), else the checkout's dist/service-sandbox.mjs three folders up from the
// test's folder (docs/recipes/go) when it exists, else `service-sandbox` on PATH. Never `npx`: outside the
// checkout it would ask the npm registry for a package of that name.
func CLI() []string {
	if configured := strings.TrimSpace(os.Getenv("SANDBOX_CLI")); configured != "" {
		if strings.HasSuffix(configured, ".mjs") || strings.HasSuffix(configured, ".js") {
			return []string{"node", configured}
		}
		return strings.Fields(configured)
	}
	built, err := filepath.Abs(filepath.Join("..", "..", "..", "dist", "service-sandbox.mjs"))
	if err == nil {
		if _, err := os.Stat(built); err == nil {
			return []string{"node", built}
		}
	}
	return []string{"service-sandbox"}
}

func healthy(url string) bool {
	c := http.Client{Timeout: 2 * time.Second}
	res, err := c.Get(url + "/_emulator/health")
	if err != nil {
		return false
	}
	res.Body.Close()
	return res.StatusCode == http.StatusOK
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
		return "", nil, fmt.Errorf("nothing answers at %s/_emulator/health and `%s` cannot start: %w", triedURL, strings.Join(args, " "), err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop := func() {
		stopProcessGroup(cmd, exited)
		log.Close()
		os.Remove(log.Name())
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(StartTimeout)
	for !healthy(url) {
		select {
		case <-exited:
		default:
			if time.Now().Before(deadline) {
				time.Sleep(200 * time.Millisecond)
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
