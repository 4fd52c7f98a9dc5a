package hailtest

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hail-loadgen/hail"
)

// AssertExact checks res against the server's own counts: the server sent
// exactly the responses res counts, status by status (a scenario's setup
// and teardown included), and res counts no response it did not send. A
// response that failed a scenario step's check is an error in res (of
// kind "check failed: …"), its status unrecorded: such responses make up
// the statuses the server sent beyond res's. AssertExact reports each
// difference with tb.Errorf and returns whether there was none.
//
// The counts are exact for a run that ended by itself (Plan.Requests) or
// let its requests finish (Plan.WaitOngoing): a request the run's end cut
// off may have had its response sent and never read. When several runs
// share a server, call ResetStats before each.
func AssertExact(tb testing.TB, srv *Server, res *hail.Result) bool {
	tb.Helper()
	st := srv.Stats()
	c := res.Hail.Counts
	responses, checked, status := c.Responses, checkFailures(res.ErrorDistribution), maps.Clone(res.StatusCodeDistribution)
	for _, ph := range []*hail.Phase{res.Hail.Setup, res.Hail.Teardown} {
		if ph == nil {
			continue
		}
		for _, s := range ph.Steps {
			responses += s.Counts.Responses
			checked += checkFailures(s.ErrorDistribution)
			for k, n := range s.StatusCodeDistribution {
				status[k] += n
			}
		}
	}
	var diffs []string
	if uint64(responses+checked) != st.Requests {
		diffs = append(diffs, fmt.Sprintf("the server sent %d responses, the run counted %d%s", st.Requests, responses+checked, checkedWords(checked)))
	}
	codes := map[string]bool{}
	var beyond int64 // responses of a status beyond the run's: those that failed a check
	for code, n := range st.ByStatus {
		k := strconv.Itoa(code)
		codes[k] = true
		got := status[k]
		switch {
		case checked == 0 && uint64(got) != n, uint64(got) > n:
			diffs = append(diffs, fmt.Sprintf("status %s: the server sent %d, the run counted %d", k, n, got))
		default:
			beyond += int64(n) - got
		}
	}
	if checked > 0 && beyond != checked {
		diffs = append(diffs, fmt.Sprintf("the server sent %d responses beyond the statuses the run counted, and %d failed a check", beyond, checked))
	}
	for k, n := range status {
		if !codes[k] && n > 0 {
			diffs = append(diffs, fmt.Sprintf("status %s: the run counted %d, the server sent none", k, n))
		}
	}
	if len(diffs) == 0 {
		return true
	}
	sort.Strings(diffs)
	hint := ""
	if c.Aborted > 0 {
		hint = fmt.Sprintf(" (%d requests were cut off by the run's end: their responses may have been sent and never read; bound the run by Requests, or set WaitOngoing)", c.Aborted)
	}
	tb.Errorf("hailtest: the run's counts differ from the server's%s:\n\t%s", hint, strings.Join(diffs, "\n\t"))
	return false
}

// checkFailures counts the responses that failed a check, among errors.
func checkFailures(errs map[string]int64) int64 {
	var n int64
	for k, c := range errs {
		if strings.HasPrefix(k, "check failed: ") {
			n += c
		}
	}
	return n
}

func checkedWords(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d of them responses that failed a check)", n)
}

// AssertVerdict checks that res's verdict names one of kinds (the
// hail.Bottleneck constants) as the run's bottleneck; otherwise it reports
// the verdict and its evidence with tb.Errorf. It returns whether it did.
func AssertVerdict(tb testing.TB, res *hail.Result, kinds ...string) bool {
	tb.Helper()
	v := res.Hail.Verdict
	if slices.Contains(kinds, v.Bottleneck) {
		return true
	}
	tb.Errorf("hailtest: the verdict is %q, want %s:\n\t%s", v.Bottleneck, strings.Join(kinds, " or "), strings.Join(v.Reasons, "\n\t"))
	return false
}

// AssertNoErrors checks that no request of res failed; otherwise it
// reports the errors by kind, and hail's hints, with tb.Errorf. It returns
// whether none did.
func AssertNoErrors(tb testing.TB, res *hail.Result) bool {
	tb.Helper()
	if res.Hail.Counts.Errors == 0 {
		return true
	}
	kinds := make([]string, 0, len(res.ErrorDistribution))
	for k, n := range res.ErrorDistribution {
		kinds = append(kinds, fmt.Sprintf("%s ×%d", k, n))
	}
	sort.Strings(kinds)
	tb.Errorf("hailtest: %d of %d requests failed: %s%s", res.Hail.Counts.Errors, res.Hail.Counts.Requests, strings.Join(kinds, ", "),
		strings.Join(append([]string{""}, res.Hail.Hints...), "\n\t"))
	return false
}
