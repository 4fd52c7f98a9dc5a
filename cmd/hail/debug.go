package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/transport"
)

// debugExchange sends one request (req, the run's first) and prints both
// sides, secrets redacted unless show is set. Output is bounded: at most
// 64 KiB of response body is shown.
func debugExchange(ctx context.Context, p *plan.Plan, req []byte, w io.Writer, show bool) error {
	opt, err := p.TransportOptions(p.URL)
	if err != nil {
		return err
	}
	d, err := transport.NewDialer(ctx, opt)
	if err != nil {
		return err
	}
	c, tm, err := d.Dial(ctx)
	if err != nil {
		return fmt.Errorf("connect to %s: %v", p.URL.Host, err)
	}
	defer c.Close()
	fmt.Fprintf(w, "* connected in %s (dns %s)\n", tm.Total, tm.DNS)
	writeDebugRequest(w, req, show)
	timeout := p.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	_ = c.SetDeadline(time.Now().Add(timeout))
	start := time.Now()
	if _, err := c.Write(req); err != nil {
		return fmt.Errorf("send: %v", err)
	}
	var ps http1.Parser
	ps.Reset(p.Method == "HEAD")
	if err := readDebugResponse(c, &ps, w, show); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n* status %d, %d body bytes, %s\n", ps.Status, ps.BodyBytes, time.Since(start).Round(time.Microsecond))
	return nil
}

// writeDebugRequest prints req, each line after "> ". Unless show is set,
// the request line's query and secret headers are redacted.
func writeDebugRequest(w io.Writer, req []byte, show bool) {
	for i, line := range strings.SplitAfter(string(req), "\n") {
		if line == "" {
			continue
		}
		if i == 0 && !show {
			if m, rest, ok := strings.Cut(line, " "); ok {
				if target, proto, ok := strings.Cut(rest, " "); ok {
					if path, q, ok := strings.Cut(target, "?"); ok {
						line = m + " " + path + "?" + redactQuery(q) + " " + proto
					}
				}
			}
		}
		if name, _, ok := strings.Cut(line, ":"); ok && isSecret(name) && !show {
			line = name + ": [redacted]\r\n"
		}
		fmt.Fprintf(w, "> %s", line)
	}
	fmt.Fprintln(w)
}

// readDebugResponse reads the response from c into ps, printing the first
// 64 KiB of it as it arrives (writeDebugResponse), until ps has it whole.
func readDebugResponse(c io.Reader, ps *http1.Parser, w io.Writer, show bool) error {
	buf := make([]byte, 64<<10)
	var have int
	var shown int
	for {
		n, rerr := c.Read(buf[have:])
		if n > 0 {
			if shown < 64<<10 {
				part := buf[have : have+n]
				if shown+len(part) > 64<<10 {
					part = part[:64<<10-shown]
				}
				shown += len(part)
				writeDebugResponse(w, part, show)
			}
			have += n
			m, done, err := ps.Feed(buf[:have])
			if err != nil {
				return fmt.Errorf("bad response: %v", err)
			}
			have = copy(buf, buf[m:have])
			if done {
				return nil
			}
			if have == len(buf) {
				return fmt.Errorf("bad response: header line longer than %d bytes", len(buf))
			}
			continue
		}
		if errors.Is(rerr, io.EOF) {
			done, err := ps.EOF()
			if err != nil {
				return fmt.Errorf("bad response: %v", err)
			}
			if done {
				return nil
			}
		}
		if rerr != nil {
			return fmt.Errorf("read response: %v", rerr)
		}
	}
}

// writeDebugResponse prints the response bytes b, each line after "< ",
// secret headers redacted unless show is set.
func writeDebugResponse(w io.Writer, b []byte, show bool) {
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line == "" {
			continue
		}
		if name, _, ok := strings.Cut(line, ":"); ok && isSecret(name) && !show && !strings.ContainsAny(name, " \t") {
			line = name + ": [redacted]\r\n"
		}
		fmt.Fprintf(w, "< %s", line)
	}
}
