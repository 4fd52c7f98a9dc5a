package result

// The bottleneck kinds of a Verdict.
const (
	// BottleneckNone: nothing limited the test; the target kept up.
	BottleneckNone = "none"
	// BottleneckTarget: the target limited the test (its backpressure,
	// errors, or no answer at all).
	BottleneckTarget = "target"
	// BottleneckGenerator: hail itself was too busy to send on time.
	BottleneckGenerator = "generator"
	// BottleneckOthers: other processes took hail's CPUs (or the target's
	// own process, or the hypervisor: Verdict.TakenBy).
	BottleneckOthers = "other-processes"
	// BottleneckWakeup: the operating system woke hail late.
	BottleneckWakeup = "timer-wakeup"
)

// Who took hail's CPUs in an other-processes verdict (Verdict.TakenBy);
// "" is other processes.
const (
	// TakenByTarget: the target's own process.
	TakenByTarget = "target"
	// TakenByHypervisor: the hypervisor's steal (other guests on the
	// host).
	TakenByHypervisor = "hypervisor"
)

// Verdict says who limited the test, with the evidence.
type Verdict struct {
	// Bottleneck is one of the Bottleneck constants.
	Bottleneck string `json:"bottleneck"`
	// GeneratorLimited is true for the generator-side kinds (generator,
	// other-processes, timer-wakeup): the numbers understate the target.
	GeneratorLimited bool `json:"generator_limited"`
	// Reasons are the evidence, sentences with numbers.
	Reasons []string `json:"reasons"`
	// TakenBy names who took hail's CPUs in an other-processes verdict,
	// the largest taker: TakenByTarget (the target's own process),
	// TakenByHypervisor (steal), or "" (other processes).
	TakenBy string `json:"cpu_taken_by,omitempty"`
	// ReadLate is set when hail read streaming responses' events late
	// (its read lag p99 above 1 ms and a tenth of the median gap between
	// events): evidence that hail was slowed, and inter-token latency is
	// affected, whatever the bottleneck.
	ReadLate bool `json:"read_late,omitempty"`
}
