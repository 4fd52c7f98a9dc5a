//go:build linux

package uring

import "unsafe"

// Prep helpers fill an SQE returned by GetSQE (which is already zeroed); fd
// is a file descriptor.
//
// Pointer arguments are stored in the SQE as integers: the memory they
// point to must stay valid and unmoved until the request's CQE is reaped
// (see the package doc; use Arena memory).

// SetUserData sets the value returned in the CQE.
func (s *SQE) SetUserData(v uint64) { s.UserData = v }

// SetFlags ORs IOSQE_* flags (SQEIOHardlink, SQEBufferSelect) into the SQE.
func (s *SQE) SetFlags(f uint8) { s.Flags |= f }

// PrepSend prepares send(fd, buf[:n], msgFlags) (IORING_OP_SEND). buf is
// read by the kernel asynchronously: keep it alive until the CQE.
func (s *SQE) PrepSend(fd int32, buf unsafe.Pointer, n uint32, msgFlags uint32) {
	s.Opcode = OpSend
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

// PrepConnect prepares connect(fd, sa, saLen) (IORING_OP_CONNECT). The
// sockaddr is owned by the caller and is read by the kernel after submission
// (possibly after Submit returns): it must stay alive and unmoved until this
// request's CQE is reaped: Arena memory.
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

// PrepShutdown prepares shutdown(fd, how).
func (s *SQE) PrepShutdown(fd int32, how int) {
	s.Opcode = OpShutdown
	s.Fd = fd
	s.Len = uint32(how)
}

// PrepCancel prepares cancellation of the in-flight request(s) whose
// user_data is userData (IORING_OP_ASYNC_CANCEL; flags are
// IORING_ASYNC_CANCEL_* bits, 0 for the first match).
// Res is 0 if found and cancelled, -ENOENT if not found, -EALREADY if it
// was already running; the cancelled request completes with -ECANCELED.
func (s *SQE) PrepCancel(userData uint64, flags uint32) {
	s.Opcode = OpAsyncCancel
	s.Fd = -1
	s.Addr = userData
	s.OpFlags = flags
}
