//go:build !linux

package clamdtest

import "syscall"

func dieWithParent() *syscall.SysProcAttr { return nil }
