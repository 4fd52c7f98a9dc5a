//go:build linux

package uring

import "unsafe"

// Prep helpers fill an SQE returned by GetSQE (which is already zeroed).
// Unless noted, fd is a file descriptor, or a registered-file index when
// SQEFixedFile is set in Flags (see SetFlags).
//
// Pointer arguments are stored in the SQE as integers: the memory they
// point to must stay valid and unmoved until the request's CQE is reaped
// (see the package doc; use Arena memory).

// SetUserData sets the value returned in the CQE.
func (s *SQE) SetUserData(v uint64) { s.UserData = v }

// SetFlags ORs IOSQE_* flags (SQEFixedFile, SQEIOLink, SQECQESkipSuccess,
// SQEBufferSelect, ...) into the SQE.
func (s *SQE) SetFlags(f uint8) { s.Flags |= f }

// PrepNop prepares a no-op (completes with Res 0).
func (s *SQE) PrepNop() {
	s.Opcode = OpNop
	s.Fd = -1
}

// PrepSend prepares send(fd, buf[:n], msgFlags) (IORING_OP_SEND). buf is
// read by the kernel asynchronously: keep it alive until the CQE.
func (s *SQE) PrepSend(fd int32, buf unsafe.Pointer, n uint32, msgFlags uint32) {
	s.Opcode = OpSend
	s.Fd = fd
	s.Addr = uint64(uintptr(buf))
	s.Len = n
	s.OpFlags = msgFlags
}

// PrepRecv prepares recv(fd, buf[:n], msgFlags) (IORING_OP_RECV). The kernel
// writes buf asynchronously: keep it alive until the CQE.
func (s *SQE) PrepRecv(fd int32, buf unsafe.Pointer, n uint32, msgFlags uint32) {
	s.Opcode = OpRecv
	s.Fd = fd
	s.Addr = uint64(uintptr(buf))
	s.Len = n
	s.OpFlags = msgFlags
}

// PrepRead prepares a read(2) of n bytes into buf at offset off (-1 as
// uint64: the file's position, for pipes, eventfds and sockets).
func (s *SQE) PrepRead(fd int32, buf unsafe.Pointer, n uint32, off uint64) {
	s.Opcode = OpRead
	s.Fd = fd
	s.Addr = uint64(uintptr(buf))
	s.Len = n
	s.Off = off
}

// PrepRecvMultishot prepares a multishot recv (Linux 6.0+) that picks a
// buffer from provided-buffer group bgid for every chunk of data: each CQE
// carries CQEFBuffer with the buffer id (CQE.BufferID) and CQEFMore while the
// request stays armed. A CQE without CQEFMore ends it (Res 0 = EOF,
// -ENOBUFS = the group ran dry, other -errno); re-arm if still needed.
func (s *SQE) PrepRecvMultishot(fd int32, bgid uint16, msgFlags uint32) {
	s.Opcode = OpRecv
	s.Fd = fd
	s.IoPrio = RecvMultishot
	s.Flags |= SQEBufferSelect
	s.BufIndex = bgid
	s.OpFlags = msgFlags
}

// PrepRecvSelect prepares a single-shot recv of up to n bytes into a buffer
// picked from provided-buffer group bgid.
func (s *SQE) PrepRecvSelect(fd int32, bgid uint16, n uint32, msgFlags uint32) {
	s.Opcode = OpRecv
	s.Fd = fd
	s.Len = n
	s.Flags |= SQEBufferSelect
	s.BufIndex = bgid
	s.OpFlags = msgFlags
}

// PrepConnect prepares connect(fd, sa, saLen) (IORING_OP_CONNECT). The
// sockaddr is owned by the caller and is read by the kernel after submission
// (possibly after Submit returns): it must stay alive and unmoved until this
// request's CQE is reaped. Arena.Sockaddr provides such memory.
func (s *SQE) PrepConnect(fd int32, sa unsafe.Pointer, saLen uint32) {
	s.Opcode = OpConnect
	s.Fd = fd
	s.Addr = uint64(uintptr(sa))
	s.Off = uint64(saLen)
}

// PrepClose prepares close(fd) of a normal file descriptor.
func (s *SQE) PrepClose(fd int32) {
	s.Opcode = OpClose
	s.Fd = fd
}

// PrepCloseDirect prepares closing registered-file slot (a direct
// descriptor), leaving the slot empty.
func (s *SQE) PrepCloseDirect(slot uint32) {
	s.Opcode = OpClose
	s.Fd = 0
	s.FileIndex = slot + 1
}

// PrepShutdown prepares shutdown(fd, how).
func (s *SQE) PrepShutdown(fd int32, how int) {
	s.Opcode = OpShutdown
	s.Fd = fd
	s.Len = uint32(how)
}

// PrepTimeout prepares a timeout (IORING_OP_TIMEOUT). With count 0 it is a
// pure timer that completes with -ETIME after ts; with count > 0 it also
// completes (Res 0) once count other completions have been posted. flags 0
// means ts is relative; TimeoutAbs makes it an absolute CLOCK_MONOTONIC time
// (see Timespec.SetMonotonicDeadline). ts is read by the kernel after
// submission: keep it alive until the CQE (Arena.Timespec).
func (s *SQE) PrepTimeout(ts *Timespec, count uint32, flags uint32) {
	s.Opcode = OpTimeout
	s.Fd = -1
	s.Addr = uint64(uintptr(unsafe.Pointer(ts)))
	s.Len = 1
	s.Off = uint64(count)
	s.OpFlags = flags
}

// PrepLinkTimeout prepares a timeout for the previous SQE, which must have
// SQEIOLink set. If it fires first, the linked request completes with
// -ECANCELED (or its own error) and this one with -ETIME; if the request
// finishes first, this one completes with -ECANCELED. ts must stay alive
// until the CQE.
func (s *SQE) PrepLinkTimeout(ts *Timespec, flags uint32) {
	s.Opcode = OpLinkTimeout
	s.Fd = -1
	s.Addr = uint64(uintptr(unsafe.Pointer(ts)))
	s.Len = 1
	s.OpFlags = flags
}

// PrepCancel prepares cancellation of the in-flight request(s) whose
// user_data is userData (IORING_OP_ASYNC_CANCEL; flags may add CancelAll).
// Res is 0 if found and cancelled, -ENOENT if not found, -EALREADY if it
// was already running; the cancelled request completes with -ECANCELED.
func (s *SQE) PrepCancel(userData uint64, flags uint32) {
	s.Opcode = OpAsyncCancel
	s.Fd = -1
	s.Addr = userData
	s.OpFlags = flags
}

// PrepCancelFd prepares cancellation of requests on fd (CancelFd; add
// CancelAll for all of them, CancelFdFixed if fd is a registered index).
func (s *SQE) PrepCancelFd(fd int32, flags uint32) {
	s.Opcode = OpAsyncCancel
	s.Fd = fd
	s.OpFlags = flags | CancelFd
}

// PrepSocket prepares socket(domain, typ, proto) (Linux 5.19+; check
// Supports(OpSocket)). Res is the new fd.
func (s *SQE) PrepSocket(domain, typ, proto int) {
	s.Opcode = OpSocket
	s.Fd = int32(domain)
	s.Off = uint64(typ)
	s.Len = uint32(proto)
}

// PrepSocketDirect is PrepSocket that installs the socket straight into
// registered-file slot (or FileIndexAlloc to let the kernel choose; Res is
// then the slot) instead of the fd table.
func (s *SQE) PrepSocketDirect(domain, typ, proto int, slot uint32) {
	s.PrepSocket(domain, typ, proto)
	if slot == FileIndexAlloc {
		s.FileIndex = FileIndexAlloc
	} else {
		s.FileIndex = slot + 1
	}
}
