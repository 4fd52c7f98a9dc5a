package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mdlayher/vsock"
)

// VSOCK: two ways of reaching a service inside a virtual machine without the
// machine's network.
//
//   - AF_VSOCK (--vsock-addr CID:PORT): the kernel's virtio socket family, as
//     QEMU/KVM guests get it from vhost-vsock. The host connects to the
//     guest's context ID and port directly.
//   - Hybrid vsock (--vsock-uds PATH:PORT): Firecracker and Cloud Hypervisor
//     expose a guest's vsock device on the host as a unix socket. The host
//     connects to it, writes "CONNECT <PORT>\n" and reads one line that must
//     be "OK <host_port>\n"; after that the stream is the guest's.
//
// Either way the URL still gives the Host header and the request target.

// Reserved VSOCK context IDs.
const (
	vsockCIDHypervisor = 0
	vsockCIDLocal      = 1
	vsockCIDHost       = 2
	vsockCIDAny        = math.MaxUint32
)

// ParseVsockAddr parses --vsock-addr "CID:PORT" (both decimal numbers).
func ParseVsockAddr(s string) (cid, port uint32, err error) {
	c, p, ok := strings.Cut(s, ":")
	if !ok || c == "" || p == "" {
		return 0, 0, fmt.Errorf("--vsock-addr %q: write it as CID:PORT, e.g. 3:8080 (the guest's context ID and port)", s)
	}
	cid64, err1 := strconv.ParseUint(c, 10, 32)
	port64, err2 := strconv.ParseUint(p, 10, 32)
	if err1 != nil {
		return 0, 0, fmt.Errorf("--vsock-addr %q: the CID %q is not a number from 0 to 4294967294", s, c)
	}
	if err2 != nil {
		return 0, 0, fmt.Errorf("--vsock-addr %q: the port %q is not a number from 0 to 4294967294", s, p)
	}
	if cid64 == vsockCIDAny || port64 == math.MaxUint32 {
		return 0, 0, fmt.Errorf("--vsock-addr %q: 4294967295 means 'any' and cannot be connected to", s)
	}
	return uint32(cid64), uint32(port64), nil
}

// ParseVsockUDS parses --vsock-uds "PATH:PORT": the VMM's unix socket and the
// guest's vsock port. The path may itself contain colons; the port follows
// the last one.
func ParseVsockUDS(s string) (path string, port uint32, err error) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 || i == len(s)-1 {
		return "", 0, fmt.Errorf("--vsock-uds %q: write it as PATH:PORT, e.g. /tmp/firecracker.vsock:8080 (the VMM's unix socket and the guest port)", s)
	}
	p, err := strconv.ParseUint(s[i+1:], 10, 32)
	if err != nil || p == math.MaxUint32 {
		return "", 0, fmt.Errorf("--vsock-uds %q: the guest port %q is not a number from 0 to 4294967294", s, s[i+1:])
	}
	return s[:i], uint32(p), nil
}

// vsockDial opens an AF_VSOCK stream; tests replace it (they never connect
// to any context ID).
var vsockDial = func(ctx context.Context, cid, port uint32) (net.Conn, error) {
	return vsock.DialContext(ctx, cid, port, nil)
}

// VsockUnavailableError is an AF_VSOCK dial that failed because the host has
// no usable vsock transport (no kernel support, or no vhost_vsock device).
type VsockUnavailableError struct{ Err error }

func (e *VsockUnavailableError) Error() string {
	return "AF_VSOCK is not available on this host (is the vhost_vsock module loaded and /dev/vhost-vsock present?): " + e.Err.Error()
}
func (e *VsockUnavailableError) Unwrap() error { return e.Err }

// dialVsock connects over AF_VSOCK and names its failures.
func dialVsock(ctx context.Context, cid, port uint32) (net.Conn, error) {
	c, err := vsockDial(ctx, cid, port)
	if err == nil {
		return c, nil
	}
	return nil, vsockDialError(cid, port, err)
}

// vsockDialError turns an AF_VSOCK dial failure into the error the report
// names: no vsock support, nothing listening (the guest resets the
// connection), or the error as it is.
func vsockDialError(cid, port uint32, err error) error {
	switch {
	case errors.Is(err, syscall.EAFNOSUPPORT), errors.Is(err, syscall.ENODEV), errors.Is(err, syscall.ESOCKTNOSUPPORT),
		errors.Is(err, syscall.EPROTONOSUPPORT):
		return &VsockUnavailableError{Err: err}
	case errors.Is(err, syscall.ECONNRESET):
		// A guest with nothing listening on the port resets the connection.
		return fmt.Errorf("vsock %d:%d: nothing listening on the guest port: %w", cid, port, syscall.ECONNREFUSED)
	}
	return fmt.Errorf("vsock %d:%d: %w", cid, port, err)
}

// VsockRefusedError is a hybrid-vsock handshake the VMM ended without a
// word: nothing listens on that guest port.
type VsockRefusedError struct {
	Path string
	Port uint32
}

func (e *VsockRefusedError) Error() string {
	return fmt.Sprintf("vsock handshake refused: %s closed the connection after CONNECT %d (nothing listening on guest port %d)", e.Path, e.Port, e.Port)
}

// VsockGarbledError is a hybrid-vsock handshake whose reply was not
// "OK <port>\n".
type VsockGarbledError struct {
	Path  string
	Port  uint32
	Reply string
}

func (e *VsockGarbledError) Error() string {
	return fmt.Sprintf("vsock handshake garbled: %s answered CONNECT %d with %q, want \"OK <port>\\n\"", e.Path, e.Port, e.Reply)
}

// MaxVsockReply bounds the VMM's reply line to CONNECT ("OK 4294967295\n" is 14 bytes): a
// longer line without a newline is a garbled reply.
const MaxVsockReply = 64

// dialHybridVsock connects to a Firecracker / Cloud Hypervisor hybrid vsock
// socket and performs the CONNECT handshake. The reply is read a byte at a
// time so nothing of the HTTP stream that follows is consumed: the returned
// connection is the unix socket itself.
func dialHybridVsock(ctx context.Context, nd *net.Dialer, path string, port uint32) (net.Conn, error) {
	c, err := nd.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	if err := VsockHandshake(ctx, c, path, port); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// VsockHandshake performs the hybrid-vsock CONNECT handshake on c, a fresh
// connection to the VMM's unix socket at path. Engines that open their own
// sockets call it before using the stream.
func VsockHandshake(ctx context.Context, c net.Conn, path string, port uint32) error {
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
		defer c.SetDeadline(noDeadline)
	}
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(pastDeadline) })
	defer stop()
	// One write: the VMM reads the request line in one go.
	if _, err := c.Write([]byte("CONNECT " + strconv.FormatUint(uint64(port), 10) + "\n")); err != nil {
		if errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) {
			return &VsockRefusedError{Path: path, Port: port}
		}
		return ctxErr(ctx, err)
	}
	var line [MaxVsockReply]byte
	n := 0
	for {
		k, err := c.Read(line[n : n+1])
		n += k
		if k > 0 && line[n-1] == '\n' {
			break
		}
		if err != nil {
			if n == 0 && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)) {
				return &VsockRefusedError{Path: path, Port: port}
			}
			if n > 0 && errors.Is(err, io.EOF) {
				return &VsockGarbledError{Path: path, Port: port, Reply: string(line[:n])}
			}
			return ctxErr(ctx, err)
		}
		if n == len(line) {
			return &VsockGarbledError{Path: path, Port: port, Reply: string(line[:n])}
		}
	}
	if !VsockReplyOK(line[:n]) {
		return &VsockGarbledError{Path: path, Port: port, Reply: string(line[:n])}
	}
	return nil
}

// VsockReplyOK reports whether line, the VMM's whole reply to CONNECT including its newline, is
// the success answer "OK <port>\n" with port a decimal 32-bit number. Both engines judge the
// reply with it.
func VsockReplyOK(line []byte) bool {
	digits, ok := bytes.CutPrefix(line, []byte("OK "))
	if !ok || len(digits) < 2 || digits[len(digits)-1] != '\n' {
		return false
	}
	digits = digits[:len(digits)-1]
	if len(digits) > 10 {
		return false
	}
	var v uint64
	for _, b := range digits {
		if b < '0' || b > '9' {
			return false
		}
		v = v*10 + uint64(b-'0')
	}
	return v <= math.MaxUint32
}

var (
	noDeadline   time.Time
	pastDeadline = time.Unix(1, 0)
)

// ctxErr names err as a connect timeout when ctx ran out of time.
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() == context.DeadlineExceeded {
		return &ConnectTimeoutError{Err: err}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &ConnectTimeoutError{Err: err}
	}
	return err
}
