package report

import (
	"fmt"
	"github.com/hail-loadgen/hail/result"
	"strings"
)

// listedProcesses is how many of the target's processes the text report
// names (the JSON holds up to 20).
const listedProcesses = 5

// writeTargetProcesses writes what a target of several processes (or a
// cgroup) adds to the text report: what was followed, how many processes,
// their PSS beside their RSS, the cgroup's memory, and the processes that
// used the most CPU.
func writeTargetProcesses(b *strings.Builder, t *result.TargetUse) {
	if t.Follows != "" {
		fmt.Fprintf(b, "  Follows:\t%s\n", followed(t))
	}
	if t.PeakPSSBytes > 0 {
		fmt.Fprintf(b, "  PSS:\tpeak %s, mean %s, %s at the end (shared pages divided among the processes; RSS counts them in each)\n",
			bytesHuman(float64(t.PeakPSSBytes)), bytesHuman(float64(t.MeanPSSBytes)), bytesHuman(float64(t.EndPSSBytes)))
	}
	if t.PeakCgroupMemoryBytes > 0 {
		fmt.Fprintf(b, "  Cgroup memory:\tpeak %s, %s at the end (page cache included)\n", bytesHuman(float64(t.PeakCgroupMemoryBytes)), bytesHuman(float64(t.EndCgroupMemoryBytes)))
	}
	if len(t.Processes) < 2 {
		return
	}
	fmt.Fprintf(b, "  Processes, most CPU first:\n")
	for i, p := range t.Processes {
		if i == listedProcesses {
			fmt.Fprintf(b, "    … %d more\n", len(t.Processes)-listedProcesses+t.ProcessesNotListed)
			break
		}
		end := ""
		if p.Exited {
			end = fmt.Sprintf(", ended by %.1fs", p.LastSeen.Seconds())
		}
		pss := ""
		if p.PeakPSSBytes > 0 {
			pss = ", PSS peak " + bytesHuman(float64(p.PeakPSSBytes))
		}
		fmt.Fprintf(b, "    pid %-7d %-15s %.2f s CPU, RSS peak %s%s (from %.1fs%s)\n", p.PID, p.Command, p.CPU.Seconds(),
			bytesHuman(float64(p.PeakRSSBytes)), pss, p.FirstSeen.Seconds(), end)
	}
}

// targetRows are what a target of several processes (or a cgroup) adds to
// the HTML and markdown reports, as label and value.
func targetRows(t *result.TargetUse) [][2]string {
	var rows [][2]string
	if t.Follows != "" {
		rows = append(rows, [2]string{"follows", followed(t)})
	}
	if t.PeakPSSBytes > 0 {
		rows = append(rows, [2]string{"PSS", fmt.Sprintf("peak %s, mean %s, %s at the end", bytesHuman(float64(t.PeakPSSBytes)), bytesHuman(float64(t.MeanPSSBytes)), bytesHuman(float64(t.EndPSSBytes)))})
	}
	if t.PeakCgroupMemoryBytes > 0 {
		rows = append(rows, [2]string{"cgroup memory", fmt.Sprintf("peak %s, %s at the end", bytesHuman(float64(t.PeakCgroupMemoryBytes)), bytesHuman(float64(t.EndCgroupMemoryBytes)))})
	}
	if len(t.Processes) > 1 {
		var parts []string
		for i, p := range t.Processes {
			if i == listedProcesses {
				break
			}
			parts = append(parts, fmt.Sprintf("%d %s %.2f s", p.PID, p.Command, p.CPU.Seconds()))
		}
		rows = append(rows, [2]string{"most CPU", strings.Join(parts, ", ")})
	}
	return rows
}

// followed says what the target's sampler followed and how many processes
// it saw: "pid 12 and its descendants: 3 processes seen, at most 2 at
// once".
func followed(t *result.TargetUse) string {
	seen := fmt.Sprintf("%d processes seen", t.ProcessesSeen)
	if t.ProcessesSeen == 1 {
		seen = "1 process seen"
	}
	return fmt.Sprintf("%s: %s, at most %d at once", t.Follows, seen, t.PeakProcesses)
}
