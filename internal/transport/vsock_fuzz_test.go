package transport_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/transport"
)

// okReply is what a VMM answers to a CONNECT it accepted.
var okReply = regexp.MustCompile(`^OK ([0-9]{1,10})\n$`)

func TestVsockReplyOK(t *testing.T) {
	for reply, want := range map[string]bool{
		"OK 1\n": true, "OK 4294967295\n": true, "OK 0001073\n": true,
		"OK 4294967296\n": false, "OK 12345678901\n": false, "OK \n": false, "OK 1": false, "OK 1\r\n": false,
		"ok 1\n": false, "OK -1\n": false, "OK 1 \n": false, " OK 1\n": false, "NO 1\n": false, "": false,
	} {
		if got := transport.VsockReplyOK([]byte(reply)); got != want {
			t.Errorf("VsockReplyOK(%q) = %v, want %v", reply, got, want)
		}
	}
}

// FuzzVsockHandshake plays a VMM that answers CONNECT with arbitrary bytes and then closes. The
// handshake must end (never hang), succeed exactly when the first line is "OK <32-bit port>\n",
// and otherwise fail as a refused or garbled handshake, never anything unnamed.
func FuzzVsockHandshake(f *testing.F) {
	for _, s := range []string{"OK 1073741824\n", "OK 52\nHTTP/1.1 200 OK\r\n", "", "NOPE\n", "OK 99999999999\n",
		"OK 12", "OK 1\r\n", string(bytes.Repeat([]byte("x"), 100))} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, reply []byte) {
		client, server := net.Pipe()
		defer client.Close()
		go func() {
			defer server.Close()
			buf := make([]byte, 64)
			if _, err := server.Read(buf); err != nil { // CONNECT <port>\n, in one write
				return
			}
			server.SetWriteDeadline(time.Now().Add(time.Second))
			server.Write(reply)
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		err := transport.VsockHandshake(ctx, client, "/fuzz.sock", 52)

		line := reply
		if i := bytes.IndexByte(reply, '\n'); i >= 0 {
			line = reply[:i+1]
		}
		want := false
		if m := okReply.FindSubmatch(line); m != nil {
			_, perr := strconv.ParseUint(string(m[1]), 10, 32)
			want = perr == nil && len(line) <= transport.MaxVsockReply
		}
		if (err == nil) != want {
			t.Fatalf("reply %q: err = %v, want success %v", reply, err, want)
		}
		if err == nil {
			return
		}
		var refused *transport.VsockRefusedError
		var garbled *transport.VsockGarbledError
		if !errors.As(err, &refused) && !errors.As(err, &garbled) {
			t.Fatalf("reply %q: unnamed error %T %v", reply, err, err)
		}
		if len(reply) == 0 && garbled != nil {
			t.Fatalf("no reply at all should be a refusal, got %v", err)
		}
	})
}
