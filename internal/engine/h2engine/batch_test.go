package h2engine

import (
	"io"
	"net"
	"testing"
	"time"
)

// A server that never reads hail's acknowledgements: once more than max
// wait unsent, writeAcks waits its patience for them to drain and reports
// false; a server that reads them lets every call return true.
func TestWriteAcksUnread(t *testing.T) {
	t.Parallel()
	ack := make([]byte, 9)
	for _, read := range []bool{false, true} {
		client, server := net.Pipe() // a write blocks until the other end reads
		b := newBatchConn(client)
		if read {
			go io.Copy(io.Discard, server)
		}
		const max = 10
		ok, calls := true, 0
		start := time.Now()
		for ; ok && calls < 1000; calls++ {
			ok = b.writeAcks(ack, 1, max, 50*time.Millisecond)
		}
		took := time.Since(start)
		b.Close()
		server.Close()
		switch {
		case read && !ok:
			t.Errorf("server reads: writeAcks reported a flood after %d calls", calls)
		case !read && ok:
			t.Errorf("server never reads: %d calls, no flood reported", calls)
		case !read && (calls > max+2 || took < 50*time.Millisecond):
			t.Errorf("server never reads: flood after %d calls and %v, want ≤ %d calls after the 50ms patience", calls, took, max+2)
		}
	}
}

// A closed connection ends the wait at once: the reader ends anyway.
func TestWriteAcksClosed(t *testing.T) {
	t.Parallel()
	client, server := net.Pipe()
	defer server.Close()
	b := newBatchConn(client)
	for range 20 { // queued, not waited for: the write under way blocks
		b.write(make([]byte, 9), 1)
	}
	done := make(chan bool)
	go func() { done <- b.writeAcks(make([]byte, 9), 1, 10, time.Hour) }()
	b.Close()
	select {
	case ok := <-done:
		if !ok {
			t.Error("writeAcks on a closed connection reported a flood")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("writeAcks still waiting 10s after the connection closed")
	}
}
