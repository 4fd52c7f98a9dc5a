package main

import "syscall"

// childDiesWithHail makes the kernel kill the demo's server when the thread
// that started it ends (hail exiting at once on a second signal included).
func childDiesWithHail() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
