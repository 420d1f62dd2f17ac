package sandboxtest

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// StartTimeout is how long a server started by Main may take to answer its health check.
var StartTimeout = 60 * time.Second

// server is the emulator every session of this test binary uses; set by Main, else ServerURL().
var server string

// Main runs a package's tests against one emulator: the one at SANDBOX_URL (default DefaultURL) when
// GET /_emulator/health answers there, otherwise one it starts with SANDBOX_COMMAND (default
// `npx service-sandbox`, plus --port on a free port) and stops when the tests are done. Use it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }
//
// Without it, New uses the server at SANDBOX_URL and starts none.
func Main(m *testing.M) int {
	url := ServerURL()
	if healthy(url) {
		server = url
		return m.Run()
	}
	started, stop, err := startServer(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop()
	server = started
	return m.Run()
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
	command := os.Getenv("SANDBOX_COMMAND")
	if strings.TrimSpace(command) == "" {
		command = "npx service-sandbox"
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	args := append(strings.Fields(command), "--port", strconv.Itoa(port))
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
