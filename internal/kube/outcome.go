package kube

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// Exit statuses of a shard that hail gives a meaning (README's table).
const (
	exitOK          = 0
	exitBadInput    = 1
	exitThresholds  = 2 // a scenario threshold failed; or a Go crash (a panic), told apart by the log
	exitNoSuccess   = 3 // no request succeeded: the result is written
	exitInterrupted = 4 // a shard interrupted (SIGTERM, SIGINT): the result is written, marked so
	exitTwice       = 130
)

// wroteResult reports whether a shard that exited with code, its log
// saying so or not, wrote its result: hail writes it whole or not at all.
func wroteResult(code int32, log []byte) bool {
	switch code {
	case exitOK, exitNoSuccess, exitInterrupted:
		return true
	case exitThresholds:
		return crashLine(log) == ""
	}
	return false
}

// ending says in one line how a shard that ran ended, when that is not
// plainly complete: why it was interrupted, killed, crashed or failed, as
// its pod and its log say — the container's real reason, hail's own error
// line, a crash's first line ("panic: …"), not the last line of a dump.
// stopped is set when hail kube stopped the run itself; result says the
// shard's result was found.
func (st shardState) ending(s *Spec, log []byte, stopped, result bool) string {
	if !st.started {
		if why := st.fatal(s); why != "" {
			return why
		}
		if st.pod == "" {
			return "the Job made no pod for it"
		}
		return "never started: " + st.podEnd()
	}
	if !st.ended {
		return "still running"
	}
	if len(log) == 0 {
		log = []byte(st.message) // the tail of the log the kubelet kept (FallbackToLogsOnError)
	}
	code := fmt.Sprintf("exit code %d", st.exit)
	switch {
	case st.reason == "OOMKilled":
		return fmt.Sprintf("OOMKilled (%s): it went over its memory limit of %s", code, s.Memory)
	case st.exit == exitOK:
		return ""
	case st.exit == exitInterrupted:
		return "interrupted (" + code + "): " + st.interruptedBy(stopped)
	case st.exit == exitTwice:
		return fmt.Sprintf("interrupted twice, exited at once (%s): %s", code, st.interruptedBy(stopped))
	case st.exit == exitThresholds && crashLine(log) != "":
		return fmt.Sprintf("crashed (%s): %s", code, crashLine(log))
	case st.exit == exitThresholds && result:
		return "" // thresholds failed: its result says which
	case st.exit == exitThresholds:
		return fmt.Sprintf("crashed (%s; no result, and no crash message left: %s)", code, s.hint("logs", st.pod))
	case st.exit == exitNoSuccess:
		return ""
	case st.exit == 137 || st.exit == 143:
		return fmt.Sprintf("killed by a signal (%s, %s): %s", code, st.reason, st.interruptedBy(stopped))
	}
	why := hailLine(log)
	if why == "" {
		why = crashLine(log)
	}
	if why == "" {
		why = "no message (" + s.hint("logs", st.pod) + ")"
	}
	return fmt.Sprintf("%s (%s): %s", st.reason, code, why)
}

// interruptedBy names what stopped a shard from outside.
func (st shardState) interruptedBy(stopped bool) string {
	switch {
	case st.disruption != "":
		return "evicted or preempted: " + st.disruption
	case st.podReason == "Evicted":
		return strings.TrimSuffix("evicted: "+st.podMessage, ": ")
	case stopped:
		return "the run was stopped (hail kube)"
	case st.deleted:
		return "its pod was deleted"
	case st.podReason == "DeadlineExceeded":
		return "the Job's deadline passed: " + st.podMessage
	}
	return "a signal from outside (SIGTERM or SIGINT)"
}

// crashLine is the first line of a Go crash in log ("panic: …", "fatal
// error: …"), or "".
func crashLine(log []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		for _, p := range []string{"panic: ", "fatal error: ", "runtime: out of memory"} {
			if strings.HasPrefix(l, p) {
				return strings.TrimSpace(l)
			}
		}
	}
	return ""
}

// hailLine is hail's last own message in log ("hail: …"), or "".
func hailLine(log []byte) string {
	last := ""
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, "hail: ") {
			last = strings.TrimSpace(l)
		}
	}
	return last
}
