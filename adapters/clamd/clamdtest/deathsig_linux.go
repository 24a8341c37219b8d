package clamdtest

import "syscall"

// dieWithParent kills clamd when the test binary dies (a test killed at
// its timeout runs no Cleanup).
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
