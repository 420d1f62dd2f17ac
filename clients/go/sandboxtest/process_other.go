//go:build !unix

package sandboxtest

import "os/exec"

func ownProcessGroup(cmd *exec.Cmd) {}

// Without process groups (and without SIGINT), only the started process is ended, at once.
func stopProcessGroup(cmd *exec.Cmd, exited <-chan struct{}) {
	cmd.Process.Kill()
	<-exited
}
