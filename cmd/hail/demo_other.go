//go:build !linux

package main

import "syscall"

// childDiesWithHail is nil where the kernel has no parent-death signal: the
// demo's stop kills its server, and a hail killed at once leaves it running.
func childDiesWithHail() *syscall.SysProcAttr { return nil }
