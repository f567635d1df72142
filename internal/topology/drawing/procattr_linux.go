package drawing

import (
	"os/exec"
	"syscall"
)

// endWithParent has the kernel kill knc-draw when knc ends, however it
// ends: a layout nobody will read must not outlive the process that asked
// for it. (The signal follows the thread that started the child; Go does
// not end its threads while the program runs.)
func endWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
