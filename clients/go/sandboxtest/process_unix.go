//go:build unix

package sandboxtest

import (
	"os/exec"
	"syscall"
	"time"
)

// A process group of its own: a `service-sandbox` wrapper script may run node as a child, and stopping must end
// both.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// stopProcessGroup ends the group politely, then for good after 10 s.
func stopProcessGroup(cmd *exec.Cmd, exited <-chan struct{}) {
	syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
}
