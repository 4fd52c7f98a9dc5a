package result

// OriginResult is one server of a run that sent to several (a scenario
// whose steps name their targets): its own counts, rates, latency, status
// codes, errors and verdict. The run's totals are the sum of its
// origins'.
type OriginResult struct {
	// Name is the target's name ("api"), "base", or the URL's host:port;
	// URL its scheme, host and port (and path prefix).
	Name string `json:"name"`
	URL  string `json:"url"`
	// Protocol is what its connections spoke ("HTTP/1.1", "h2c", "h2");
	// Engine the engine that ran them.
	Protocol string `json:"protocol"`
	Engine   string `json:"engine,omitempty"`
	// Steps are the steps sent to it.
	Steps []string `json:"steps"`
	// Connections is its part of the run's connections (the most it had
	// open at once); Connects how many it opened.
	Connections int   `json:"connections"`
	Connects    int64 `json:"connects"`
	// Streams is how many requests each of its connections carried at
	// once (HTTP/2; absent: one).
	Streams int `json:"streams_per_connection,omitempty"`
	// Share is its part of the run's requests (0 to 1).
	Share float64 `json:"share"`
	// Counts are its exact totals.
	Counts OriginCounts `json:"counts"`
	// RPS is its requests ended per second over the run; ErrorRate its
	// failed over its requests (cut-off ones aside); Rates what ended,
	// completed and succeeded per second of the run.
	RPS       float64 `json:"rps"`
	ErrorRate float64 `json:"error_rate"`
	Rates     Rates   `json:"rates"`
	// Latency is of its responses; AllSent of every request sent to it,
	// failures at their elapsed time; SendDelay its requests' lateness
	// (open model).
	Latency   StepLatency `json:"latency"`
	AllSent   AllSent     `json:"all_sent"`
	SendDelay SendDelay   `json:"send_delay"`
	// StatusCodeDistribution and ErrorDistribution are its, as the
	// Result's.
	StatusCodeDistribution map[string]int64 `json:"statusCodeDistribution"`
	ErrorDistribution      map[string]int64 `json:"errorDistribution"`
	// Histograms are its HdrHistograms.
	Histograms Histograms `json:"histograms"`
	// GRPC counts its gRPC calls and their messages (nil without).
	GRPC *GRPCStats `json:"grpc,omitempty"`
	// Verdict judges it as a run of its own by the run's rules: its
	// requests' lateness, connection waits and stalls, beside what the
	// origins share (hail's CPU, the machine's, the target's processes).
	Verdict Verdict `json:"verdict"`
}
