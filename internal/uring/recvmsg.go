//go:build linux

package uring

import (
	"encoding/binary"
	"unsafe"

	"golang.org/x/sys/unix"
)

// PrepRecvmsgMultishot prepares a multishot recvmsg (Linux 6.0+) that picks
// a buffer from provided-buffer group bgid for every chunk of data: each
// CQE carries CQEFBuffer with the buffer id (CQE.BufferID) and CQEFMore
// while the request stays armed; a CQE without CQEFMore ends it (a buffer
// with no payload: the peer's end; -ENOBUFS: the group ran dry; another
// -errno). Each buffer holds an io_uring_recvmsg_out header, then
// msg.Namelen bytes of the peer's address, msg.Controllen bytes of control
// messages (such as the receive time) and the payload: Recvmsg splits them.
// msg is read by the kernel when the request is issued: Arena memory.
func (s *SQE) PrepRecvmsgMultishot(fd int32, msg *unix.Msghdr, bgid uint16) {
	s.Opcode = OpRecvmsg
	s.Fd = fd
	s.Addr = uint64(uintptr(unsafe.Pointer(msg)))
	s.Len = 1
	s.IoPrio = RecvMultishot
	s.Flags |= SQEBufferSelect
	s.BufIndex = bgid
}

// recvmsgOutSize is sizeof(struct io_uring_recvmsg_out).
const recvmsgOutSize = 16

// Recvmsg splits a buffer filled by a multishot recvmsg (res bytes of it)
// into its control messages and its payload, for the msg it was armed
// with. ok is false when the buffer is too short to hold the header the
// kernel writes.
func Recvmsg(buf []byte, msg *unix.Msghdr) (control, payload []byte, ok bool) {
	if len(buf) < recvmsgOutSize {
		return nil, nil, false
	}
	// struct io_uring_recvmsg_out { namelen, controllen, payloadlen, flags }
	controllen := binary.NativeEndian.Uint32(buf[4:8])
	payloadlen := binary.NativeEndian.Uint32(buf[8:12])
	off := recvmsgOutSize + int(msg.Namelen)
	end := off + int(msg.Controllen)
	if end > len(buf) || int(controllen) > int(msg.Controllen) {
		return nil, nil, false
	}
	control = buf[off : off+int(controllen)]
	payload = buf[end:]
	if int(payloadlen) < len(payload) {
		payload = payload[:payloadlen]
	}
	return control, payload, true
}

// RxTime returns the kernel's receive time (CLOCK_REALTIME, ns) from an
// SCM_TIMESTAMPNS control message (SO_TIMESTAMPNS), or 0.
func RxTime(control []byte) int64 {
	for len(control) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&control[0]))
		n := int(h.Len)
		if n < unix.SizeofCmsghdr || n > len(control) {
			return 0
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && n >= unix.CmsgLen(16) {
			data := control[unix.CmsgLen(0):]
			sec := int64(binary.NativeEndian.Uint64(data[0:8]))
			nsec := int64(binary.NativeEndian.Uint64(data[8:16]))
			return sec*1e9 + nsec
		}
		control = control[min(unix.CmsgSpace(n-unix.CmsgLen(0)), len(control)):]
	}
	return 0
}
