//go:build !unix

package sandboxtest

import "os/exec"

func ownProcessGroup(cmd *exec.Cmd) {}

// Without process groups, only the started process is ended (with `npx`, its node child may be left).
func stopProcessGroup(cmd *exec.Cmd, exited <-chan struct{}) {
	cmd.Process.Kill()
	<-exited
}
