package sandboxtest

import (
	"bufio"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// ListenReadyTimeout is how long `service-sandbox listen` may take to say "Ready:".
var ListenReadyTimeout = 30 * time.Second

// Listener is `service-sandbox listen` for one session, as a child process: it connects out to the emulator and
// posts each of the session's webhook deliveries to the forward-to URL, signed for its path, and reports the
// answer back (docs/webhooks.md#listen).
type Listener struct {
	cmd    *exec.Cmd
	exited chan struct{}
	mu     sync.Mutex
	output strings.Builder // its lines: "Ready: ...", then one per delivery
}

// startListener runs `listen --forward-to forwardTo --url server --session id` and returns once it printed its
// "Ready:" line: from then on the emulator sends the session's deliveries through it.
func startListener(forwardTo, server, session string) (*Listener, error) {
	args := append(CLI(), "listen", "--forward-to", forwardTo, "--url", server, "--session", session)
	l := &Listener{cmd: exec.Command(args[0], args[1:]...), exited: make(chan struct{})}
	pipe, err := l.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	l.cmd.Stderr = l.cmd.Stdout // the same pipe: its complaints come with its lines
	ownProcessGroup(l.cmd)
	if err := l.cmd.Start(); err != nil {
		return nil, fmt.Errorf("`%s` cannot start (set SANDBOX_CLI): %w", strings.Join(args, " "), err)
	}
	ready := make(chan struct{})
	go func() {
		scanner := bufio.NewScanner(pipe)
		seen := false
		for scanner.Scan() {
			l.mu.Lock()
			l.output.WriteString(scanner.Text() + "\n")
			l.mu.Unlock()
			if !seen && strings.HasPrefix(scanner.Text(), "Ready:") {
				seen = true
				close(ready)
			}
		}
		l.cmd.Wait()
		close(l.exited)
	}()
	select {
	case <-ready:
		return l, nil
	case <-l.exited:
	case <-time.After(ListenReadyTimeout):
		l.Stop()
	}
	return nil, fmt.Errorf("`%s` said no Ready: line:\n%s", strings.Join(args, " "), l.Output())
}

// Output is what the listener printed so far.
func (l *Listener) Output() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.output.String()
}

// Stop interrupts the listener as Ctrl+C does (it exits 0) and waits for it; killed after 10 s.
func (l *Listener) Stop() { interruptProcessGroup(l.cmd, l.exited) }
