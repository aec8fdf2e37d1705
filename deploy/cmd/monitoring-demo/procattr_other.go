//go:build !linux

package main

import "syscall"

// sysProcAttr puts a child in its own process group, so that a terminal's
// Ctrl-C reaches the demo alone and the demo stops the children in order.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
