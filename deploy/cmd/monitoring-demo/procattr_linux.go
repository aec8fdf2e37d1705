package main

import "syscall"

// sysProcAttr puts a child in its own process group, so that a terminal's
// Ctrl-C reaches the demo alone and the demo stops the children in order, and
// has the kernel kill it if the demo itself is killed (SIGKILL leaves the demo
// no chance to clean up), so that no server outlives it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
