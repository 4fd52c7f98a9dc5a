//go:build linux

package uring

import (
	"fmt"
	"runtime"
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

// RegisterFiles installs a registered-file table (IORING_REGISTER_FILES).
// Entry i becomes fixed file i, usable with SQEFixedFile and Fd = i; -1
// leaves a slot empty (sparse table, filled later with UpdateFiles or
// PrepSocketDirect). The kernel takes its own references: closing the
// original fds afterwards does not affect the table. The table size is
// limited by RLIMIT_NOFILE. Only one table per ring (UnregisterFiles first).
func (r *Ring) RegisterFiles(fds []int32) error {
	if len(fds) == 0 {
		return fmt.Errorf("uring: RegisterFiles: empty table: %w", unix.EINVAL)
	}
	if _, err := r.register(regFiles, unsafe.Pointer(&fds[0]), uint32(len(fds))); err != nil {
		return fmt.Errorf("uring: register files: %w", err)
	}
	return nil
}

// RegisterFilesSparse installs an empty registered-file table of n slots.
func (r *Ring) RegisterFilesSparse(n uint32) error {
	fds := make([]int32, n)
	for i := range fds {
		fds[i] = -1
	}
	return r.RegisterFiles(fds)
}

// UpdateFiles replaces registered-file slots offset..offset+len(fds)-1
// (IORING_REGISTER_FILES_UPDATE). -1 empties a slot, -2 skips it. It returns
// the number of slots updated.
func (r *Ring) UpdateFiles(offset uint32, fds []int32) (int, error) {
	if len(fds) == 0 {
		return 0, nil
	}
	up := filesUpdate{offset: offset, fds: uint64(uintptr(unsafe.Pointer(&fds[0])))}
	n, err := r.register(regFilesUpdate, unsafe.Pointer(&up), uint32(len(fds)))
	runtime.KeepAlive(fds) // only referenced through an integer inside up
	if err != nil {
		return n, fmt.Errorf("uring: update files: %w", err)
	}
	return n, nil
}

// UnregisterFiles drops the registered-file table.
func (r *Ring) UnregisterFiles() error {
	if _, err := r.register(unregFiles, nil, 0); err != nil {
		return fmt.Errorf("uring: unregister files: %w", err)
	}
	return nil
}

// RegisterBuffers registers fixed buffers (IORING_REGISTER_BUFFERS); buffer
// i is then addressed by index i (PrepSendFixed). The kernel pins these
// pages for as long as they stay registered, so they must come from memory
// the Go runtime does not manage (Arena.Alloc, unix.Mmap), never from the Go
// heap: the GC could free and reuse heap memory the kernel still uses. Up to
// 16384 buffers of at most 1 GiB each.
func (r *Ring) RegisterBuffers(bufs [][]byte) error {
	if len(bufs) == 0 {
		return fmt.Errorf("uring: RegisterBuffers: no buffers: %w", unix.EINVAL)
	}
	iov := make([]unix.Iovec, len(bufs))
	for i, b := range bufs {
		if len(b) == 0 {
			return fmt.Errorf("uring: RegisterBuffers: buffer %d is empty: %w", i, unix.EINVAL)
		}
		iov[i].Base = &b[0]
		iov[i].SetLen(len(b))
	}
	if _, err := r.register(regBuffers, unsafe.Pointer(&iov[0]), uint32(len(iov))); err != nil {
		return fmt.Errorf("uring: register buffers: %w", err)
	}
	return nil
}

// UnregisterBuffers drops all registered buffers.
func (r *Ring) UnregisterBuffers() error {
	if _, err := r.register(unregBuffers, nil, 0); err != nil {
		return fmt.Errorf("uring: unregister buffers: %w", err)
	}
	return nil
}

// PrepSendFixed is PrepSend from registered buffer bufIndex (buf must lie
// inside it; IORING_RECVSEND_FIXED_BUF). Plain IORING_OP_SEND only accepts
// registered buffers on kernels newer than 6.18 (older ones complete it with
// -EINVAL); PrepSendZCFixed works from 6.0.
func (s *SQE) PrepSendFixed(fd int32, buf unsafe.Pointer, n uint32, msgFlags uint32, bufIndex uint16) {
	s.PrepSend(fd, buf, n, msgFlags)
	s.IoPrio |= RecvSendFixedBuf
	s.BufIndex = bufIndex
}

// PrepSendZCFixed prepares a zero-copy send (IORING_OP_SEND_ZC, Linux 6.0+,
// TCP/UDP sockets) from registered buffer bufIndex. It posts two CQEs with
// the same user_data: the result (Res = bytes, with CQEFMore), then a
// notification (CQEFNotif) once the kernel no longer references the buffer.
func (s *SQE) PrepSendZCFixed(fd int32, buf unsafe.Pointer, n uint32, msgFlags uint32, bufIndex uint16) {
	s.PrepSendFixed(fd, buf, n, msgFlags, bufIndex)
	s.Opcode = OpSendZC
}
