//go:build linux

package uring

import (
	"time"
	"unsafe"
)

// Opcodes (enum io_uring_op) that hail's engine submits or needs.
const (
	OpRecvmsg     uint8 = 10
	OpAsyncCancel uint8 = 14
	OpConnect     uint8 = 16
	OpClose       uint8 = 19
	OpRead        uint8 = 22
	OpSend        uint8 = 26
	OpShutdown    uint8 = 34
)

// SQE flags (sqe->flags, IOSQE_*).
const (
	SQEIOHardlink   uint8 = 1 << 3 // IOSQE_IO_HARDLINK: the next SQE starts after this one, even if it fails
	SQEBufferSelect uint8 = 1 << 5 // IOSQE_BUFFER_SELECT: pick a buffer from group BufIndex
)

// io_uring_setup flags (IORING_SETUP_*) that New asks for.
const (
	SetupSQPoll       uint32 = 1 << 1
	SetupCQSize       uint32 = 1 << 3
	SetupSubmitAll    uint32 = 1 << 7
	SetupCoopTaskrun  uint32 = 1 << 8
	SetupTaskrunFlag  uint32 = 1 << 9
	SetupSingleIssuer uint32 = 1 << 12
	SetupDeferTaskrun uint32 = 1 << 13
	SetupNoSQArray    uint32 = 1 << 16
)

// Features reported by the kernel (IORING_FEAT_*) that this package or
// hail's engine check.
const (
	FeatSingleMmap uint32 = 1 << 0
	FeatNoDrop     uint32 = 1 << 1
	FeatExtArg     uint32 = 1 << 8
)

// io_uring_enter flags (IORING_ENTER_*).
const (
	EnterGetEvents uint32 = 1 << 0
	EnterSQWakeup  uint32 = 1 << 1
	EnterExtArg    uint32 = 1 << 3
)

// SQ ring flags (IORING_SQ_*).
const (
	SQNeedWakeup uint32 = 1 << 0
	SQCQOverflow uint32 = 1 << 1
	SQTaskrun    uint32 = 1 << 2
)

// CQE flags (IORING_CQE_F_*).
const (
	CQEFBuffer     uint32 = 1 << 0 // upper 16 bits of Flags hold the buffer id
	CQEFMore       uint32 = 1 << 1 // the (multishot) request will post more CQEs
	CQEBufferShift        = 16
)

// RecvMultishot is IORING_RECV_MULTISHOT, a receive flag in sqe->ioprio.
const RecvMultishot uint16 = 1 << 1

// Register opcodes used here (IORING_REGISTER_*).
const (
	regProbe              = 8
	regPbufRing           = 22
	opSupportedFlag       = 1 // IO_URING_OP_SUPPORTED
	probeOps              = 256
	offSQRing       int64 = 0
	offCQRing       int64 = 0x8000000
	offSQEs         int64 = 0x10000000
)

// SQE is a submission queue entry, laid out exactly as struct io_uring_sqe
// (64 bytes). Unions are represented by their most common member; the
// comments name the other views.
type SQE struct {
	Opcode      uint8
	Flags       uint8
	IoPrio      uint16 // also send/recv flags (RecvMultishot, ...)
	Fd          int32  // also the domain for OpSocket
	Off         uint64 // off / addr2 (connect: addrlen; socket: type; timeout: count)
	Addr        uint64 // addr (buffer, sockaddr, timespec, user_data to cancel)
	Len         uint32
	OpFlags     uint32 // rw_flags / msg_flags / timeout_flags / cancel_flags ...
	UserData    uint64
	BufIndex    uint16 // buf_index / buf_group
	Personality uint16
	FileIndex   uint32 // splice_fd_in / file_index / optlen / addr_len
	Addr3       uint64
	_           uint64
}

// CQE is a completion queue entry, laid out exactly as struct io_uring_cqe
// (16 bytes; CQE32 rings are not supported).
type CQE struct {
	UserData uint64
	Res      int32 // result, or -errno
	Flags    uint32
}

// More reports IORING_CQE_F_MORE: the multishot request is still armed.
func (c *CQE) More() bool { return c.Flags&CQEFMore != 0 }

// HasBuffer reports IORING_CQE_F_BUFFER: a provided buffer was consumed.
func (c *CQE) HasBuffer() bool { return c.Flags&CQEFBuffer != 0 }

// BufferID returns the provided-buffer id (Flags >> 16); valid if HasBuffer.
func (c *CQE) BufferID() uint16 { return uint16(c.Flags >> CQEBufferShift) }

// Timespec is struct __kernel_timespec.
type Timespec struct {
	Sec  int64
	Nsec int64
}

// SetDuration stores d (relative timeouts).
func (ts *Timespec) SetDuration(d time.Duration) {
	if d < 0 {
		d = 0
	}
	ts.Sec = int64(d / time.Second)
	ts.Nsec = int64(d % time.Second)
}

// SQRingOffsets is struct io_sqring_offsets.
type SQRingOffsets struct {
	Head, Tail, RingMask, RingEntries, Flags, Dropped, Array, Resv1 uint32
	UserAddr                                                        uint64
}

// CQRingOffsets is struct io_cqring_offsets.
type CQRingOffsets struct {
	Head, Tail, RingMask, RingEntries, Overflow, CQEs, Flags, Resv1 uint32
	UserAddr                                                        uint64
}

// Params is struct io_uring_params (120 bytes), used by Setup.
type Params struct {
	SQEntries    uint32
	CQEntries    uint32
	Flags        uint32
	SQThreadCPU  uint32
	SQThreadIdle uint32 // milliseconds
	Features     uint32
	WQFd         uint32
	Resv         [3]uint32
	SQOff        SQRingOffsets
	CQOff        CQRingOffsets
}

// getEventsArg is struct io_uring_getevents_arg.
type getEventsArg struct {
	sigmask     uint64
	sigmaskSz   uint32
	minWaitUsec uint32
	ts          uint64
}

type probeOp struct {
	op    uint8
	resv  uint8
	flags uint16
	resv2 uint32
}

type probeHdr struct {
	lastOp uint8
	opsLen uint8
	resv   uint16
	resv2  [3]uint32
}

type bufReg struct {
	ringAddr    uint64
	ringEntries uint32
	bgid        uint16
	flags       uint16
	resv        [3]uint64
}

// bufEntry is struct io_uring_buf.
type bufEntry struct {
	addr uint64
	len  uint32
	bid  uint16
	resv uint16
}

// Compile-time layout checks: each expression is a negative constant (a
// compile error) if the size differs from the kernel's.
var (
	_ [unsafe.Sizeof(SQE{}) - 64]byte
	_ [64 - unsafe.Sizeof(SQE{})]byte
	_ [unsafe.Sizeof(CQE{}) - 16]byte
	_ [16 - unsafe.Sizeof(CQE{})]byte
	_ [unsafe.Sizeof(Params{}) - 120]byte
	_ [120 - unsafe.Sizeof(Params{})]byte
	_ [unsafe.Sizeof(getEventsArg{}) - 24]byte
	_ [24 - unsafe.Sizeof(getEventsArg{})]byte
	_ [unsafe.Sizeof(bufReg{}) - 40]byte
	_ [40 - unsafe.Sizeof(bufReg{})]byte
	_ [unsafe.Sizeof(bufEntry{}) - 16]byte
	_ [16 - unsafe.Sizeof(bufEntry{})]byte
	_ [unsafe.Sizeof(probeHdr{}) - 16]byte
	_ [unsafe.Sizeof(probeOp{}) - 8]byte
	_ [unsafe.Sizeof(Timespec{}) - 16]byte
)
