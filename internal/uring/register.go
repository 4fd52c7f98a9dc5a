//go:build linux

package uring

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// register is the raw io_uring_register(2). arg is only read/written by the
// kernel during the call.
func (r *Ring) register(op uint32, arg unsafe.Pointer, nr uint32) (int, error) {
	if r.closed {
		return 0, ErrClosed
	}
	for {
		n, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), uintptr(op),
			uintptr(arg), uintptr(nr), 0, 0)
		switch errno {
		case 0:
			return int(n), nil
		case unix.EINTR:
			continue
		case unix.EEXIST:
			// With SINGLE_ISSUER this means "wrong thread"; for
			// IORING_REGISTER_PBUF_RING it can also mean "group exists".
			if r.flags&SetupSingleIssuer != 0 && op != regPbufRing {
				return 0, fmt.Errorf("%w (%w)", ErrWrongThread, errno)
			}
		}
		return 0, errno
	}
}

type probeBuf struct {
	hdr probeHdr
	ops [probeOps]probeOp
}

// probe fills r.supported from IORING_REGISTER_PROBE (Linux 5.6+).
func (r *Ring) probe() {
	var p probeBuf // must be zeroed: the kernel rejects a dirty buffer
	if _, err := r.register(regProbe, unsafe.Pointer(&p), probeOps); err != nil {
		return
	}
	r.probed = true
	n := int(p.hdr.opsLen)
	if n > probeOps {
		n = probeOps
	}
	for _, op := range p.ops[:n] {
		if op.flags&opSupportedFlag != 0 {
			r.supported[op.op/64] |= 1 << (op.op % 64)
		}
	}
}

// Supports reports whether the kernel supports opcode op (from
// IORING_REGISTER_PROBE at New). On kernels without the probe (before 5.6)
// it reports false for everything.
func (r *Ring) Supports(op uint8) bool {
	return r.supported[op/64]&(1<<(op%64)) != 0
}

// Probed reports whether the opcode probe worked.
func (r *Ring) Probed() bool { return r.probed }
