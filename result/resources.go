package result

import "time"

// Generator is hail's own resource use over the run (the process's: a
// library's caller's work in the same process counts too).
type Generator struct {
	// User and System are CPU time.
	User   time.Duration `json:"cpu_user_seconds" unit:"s"`
	System time.Duration `json:"cpu_system_seconds" unit:"s"`
	// CPUPerRequest is User + System per request that ended, to the
	// nanosecond (cpu_per_request_us: microseconds in the JSON).
	CPUPerRequest time.Duration `json:"cpu_per_request_us" unit:"us"`
	// Cores are the CPUs hail could use; Utilization the share of them it
	// used over the run (0 to 1).
	Cores       int     `json:"cores"`
	Utilization float64 `json:"cpu_utilization"`
	// VoluntarySwitches and ForcedSwitches are context switches;
	// MaxRSSBytes the peak resident memory.
	VoluntarySwitches int64 `json:"voluntary_context_switches"`
	ForcedSwitches    int64 `json:"involuntary_context_switches"`
	MaxRSSBytes       int64 `json:"max_rss_bytes"`
	// OthersCPU is the share of hail's CPUs other processes used, Steal
	// the share the hypervisor stole, CPUPressure the share of the time
	// some task waited for a CPU (-1: unknown). Linux only.
	OthersCPU   float64 `json:"others_cpu"`
	Steal       float64 `json:"steal"`
	CPUPressure float64 `json:"cpu_pressure"`
	// Machine identifies the machine (its kernel's boot id) and
	// MachineCPUs counts its CPUs.
	Machine     string `json:"machine,omitempty"`
	MachineCPUs int    `json:"machine_cpus,omitempty"`
}

// TargetUse is the target's resource use over the run: its processes
// (WithTargetPID, WithTargetCmd, WithTargetCgroup), sampled once a second.
type TargetUse struct {
	// PID and Command name its first process; Samples is how many times
	// it was read (once a second).
	PID     int    `json:"pid"`
	Command string `json:"command"`
	Samples int    `json:"samples"`
	// PeakRSSBytes and MeanRSSBytes are over the samples, StartRSSBytes
	// and EndRSSBytes the first and last: the sum over its processes.
	PeakRSSBytes  int64 `json:"peak_rss_bytes"`
	MeanRSSBytes  int64 `json:"mean_rss_bytes"`
	StartRSSBytes int64 `json:"start_rss_bytes"`
	EndRSSBytes   int64 `json:"end_rss_bytes"`
	// CPU is its CPU time during the run; MeanCPU and PeakCPU its use in
	// cores.
	CPU     time.Duration `json:"cpu_seconds" unit:"s"`
	MeanCPU float64       `json:"cpu_mean_cores"`
	PeakCPU float64       `json:"cpu_peak_cores"`
	// Exited is set when its processes ended during the run.
	Exited bool `json:"exited,omitempty"`
	// Source says how hail knew the processes: the flags that named them
	// ("--target-pid", "--target-cmd", "--target-cgroup": the options
	// WithTargetPID, WithTargetCmd, WithTargetCgroup), "hail demo",
	// "loopback listener".
	Source string `json:"source,omitempty"`
	// OnHailCPUs is the share of hail's CPUs the target used.
	OnHailCPUs float64 `json:"on_hail_cpus"`
	// Follows says which processes were sampled, in words.
	Follows string `json:"follows,omitempty"`
	// PeakPSSBytes, MeanPSSBytes and EndPSSBytes are the processes'
	// proportional set size (shared pages divided among their sharers;
	// 0 when it could not be read).
	PeakPSSBytes int64 `json:"peak_pss_bytes,omitempty"`
	MeanPSSBytes int64 `json:"mean_pss_bytes,omitempty"`
	EndPSSBytes  int64 `json:"end_pss_bytes,omitempty"`
	// PeakCgroupMemoryBytes and EndCgroupMemoryBytes are the memory its
	// cgroups were charged (WithTargetCgroup).
	PeakCgroupMemoryBytes int64 `json:"peak_cgroup_memory_bytes,omitempty"`
	EndCgroupMemoryBytes  int64 `json:"end_cgroup_memory_bytes,omitempty"`
	// PeakProcesses is the most processes sampled at once; ProcessesSeen
	// how many different ones were.
	PeakProcesses int `json:"peak_processes,omitempty"`
	ProcessesSeen int `json:"processes_seen,omitempty"`
	// Processes break it down, the most CPU first (at most 20;
	// ProcessesNotListed counts the others).
	Processes          []TargetProcess `json:"processes,omitempty"`
	ProcessesNotListed int             `json:"processes_not_listed,omitempty"`
}

// TargetProcess is one process of the target over the run.
type TargetProcess struct {
	// PID and Command name it.
	PID     int    `json:"pid"`
	Command string `json:"command"`
	// CPU is its CPU time during the run.
	CPU time.Duration `json:"cpu_seconds" unit:"s"`
	// PeakRSSBytes and PeakPSSBytes are its largest samples.
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	PeakPSSBytes int64 `json:"peak_pss_bytes,omitempty"`
	// FirstSeen and LastSeen are when it was sampled first and last,
	// from the start of sampling; Exited says it ended.
	FirstSeen time.Duration `json:"first_seen" unit:"s"`
	LastSeen  time.Duration `json:"last_seen" unit:"s"`
	Exited    bool          `json:"exited,omitempty"`
}
