package h2engine_test

import (
	"testing"
	"time"
)

// A gRPC call's status, from a raw HTTP/2 server answering in every way a
// proxy, a load balancer or a broken server does: grpc-status when the
// server sent one; otherwise the gRPC spec's HTTP → gRPC table
// (doc/http-grpc-status-mapping.md), the body of an HTTP error never read
// as gRPC messages (a 503 with a text body and a 404 with an HTML page
// were Internal); and a message framing that breaks the protocol —
// compressed without grpc-encoding, a flag byte other than 0 or 1, a
// response that ends inside a message — is Internal, however OK its
// trailers say it is (a compressed message was counted OK).
func TestGRPCStatusFromHTTP(t *testing.T) {
	t.Parallel()
	msg := grpcFrame(0, []byte("hello"))
	for _, tc := range []struct {
		name   string
		answer func(r *rawConn, id uint32)
		want   string
		msgs   int64 // response messages counted
	}{
		{name: "503-text", answer: httpError("503", "text/plain", "service unavailable\n"), want: "Unavailable"},
		{name: "404-html", answer: httpError("404", "text/html", "<html><body><h1>Not Found</h1></body></html>"), want: "Unimplemented"},
		{name: "400", answer: httpError("400", "text/plain", "bad request"), want: "Internal"},
		{name: "401", answer: httpError("401", "text/plain", "who are you"), want: "Unauthenticated"},
		{name: "403", answer: httpError("403", "text/plain", "no"), want: "PermissionDenied"},
		{name: "429", answer: httpError("429", "text/plain", "slow down"), want: "Unavailable"},
		{name: "502", answer: httpError("502", "text/html", "<html>bad gateway</html>"), want: "Unavailable"},
		{name: "504", answer: httpError("504", "text/html", "<html>gateway timeout</html>"), want: "Unavailable"},
		{name: "500", answer: httpError("500", "text/plain", "oops"), want: "Unknown"},
		{name: "200-html", answer: httpError("200", "text/html", "<html>a login page</html>"), want: "Unknown"},
		// grpc-status, when sent, is the status whatever the HTTP status.
		{name: "503-with-grpc-status", answer: func(r *rawConn, id uint32) {
			r.headers(id, true, ":status", "503", "content-type", "application/grpc", "grpc-status", "8")
		}, want: "ResourceExhausted"},
		{name: "trailers-only", answer: func(r *rawConn, id uint32) {
			r.headers(id, true, ":status", "200", "content-type", "application/grpc", "grpc-status", "5")
		}, want: "NotFound"},
		{name: "ok", answer: grpcAnswer(nil, msg, "0"), want: "OK", msgs: 1},
		{name: "compressed-without-encoding", answer: grpcAnswer(nil, grpcFrame(1, []byte("hello")), "0"), want: "Internal", msgs: 1},
		{name: "compressed-with-encoding", answer: grpcAnswer([]string{"grpc-encoding", "gzip"}, grpcFrame(1, []byte("hello")), "0"), want: "OK", msgs: 1},
		{name: "identity-encoding-compressed", answer: grpcAnswer([]string{"grpc-encoding", "identity"}, grpcFrame(1, []byte("hello")), "0"), want: "Internal", msgs: 1},
		{name: "flag-2", answer: grpcAnswer(nil, grpcFrame(2, []byte("hello")), "0"), want: "Internal", msgs: 1},
		{name: "ends-inside-a-message", answer: grpcAnswer(nil, msg[:7], "0"), want: "Internal"},
		{name: "no-trailers", answer: grpcAnswer(nil, msg, ""), want: "Unknown", msgs: 1},
		{name: "content-type-suffix", answer: func(r *rawConn, id uint32) {
			r.headers(id, false, ":status", "200", "content-type", "application/grpc+proto")
			r.data(id, false, msg)
			r.headers(id, true, "grpc-status", "0")
		}, want: "OK", msgs: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := serveRaw(t, eachRequest(func(r *rawConn, id uint32) bool {
				tc.answer(r, id)
				return true
			}))
			p := grpcPlan(t, base)
			p.Requests, p.Connections, p.Streams, p.Timeout = 4, 1, 2, 5*time.Second
			res := runBounded(t, p, 15*time.Second)
			outcome{status: tc.want}.check(t, res, 4)
			if g := res.Hail.GRPC; g == nil || g.MessagesReceived != 4*tc.msgs {
				t.Errorf("hail.grpc %+v: want %d messages received", g, 4*tc.msgs)
			}
		})
	}
}

// httpError answers with an HTTP status and a body of the content type
// given, without grpc-status: what a proxy in front of a gRPC server says.
func httpError(status, contentType, body string) func(r *rawConn, id uint32) {
	return func(r *rawConn, id uint32) {
		r.headers(id, false, ":status", status, "content-type", contentType)
		r.data(id, true, []byte(body))
	}
}

// grpcAnswer answers a 200 gRPC response with the extra head fields given,
// the DATA body, and trailers with grpc-status (none when "": the stream
// ends with the body).
func grpcAnswer(extra []string, body []byte, status string) func(r *rawConn, id uint32) {
	return func(r *rawConn, id uint32) {
		r.headers(id, false, append([]string{":status", "200", "content-type", "application/grpc"}, extra...)...)
		r.data(id, status == "", body)
		if status != "" {
			r.headers(id, true, "grpc-status", status)
		}
	}
}
