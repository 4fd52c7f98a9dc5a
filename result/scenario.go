package result

// ThresholdResult is one pass/fail check of a run and what it measured.
type ThresholdResult struct {
	// Expr is the expression as written ("p99 < 12ms").
	Expr string `json:"expr"`
	// Step is the step it judged; "" for the whole run.
	Step string `json:"step,omitempty"`
	// Stage is the stage it judged, as it was named (its number from 1,
	// or its name); "" for none.
	Stage string `json:"stage,omitempty"`
	// Value is the measured value in the metric's unit: seconds for
	// latencies, a fraction for error_rate, requests per second for rps,
	// a count for errors and requests.
	Value float64 `json:"value"`
	// Measured is Value as the report prints it ("12.3ms").
	Measured string `json:"measured"`
	// Pass says whether the run met it.
	Pass bool `json:"pass"`
	// AbortOnFail is set when its failure stops the run.
	AbortOnFail bool `json:"abort_on_fail,omitempty"`
}

// ScenarioInfo describes the scenario a Result came from.
type ScenarioInfo struct {
	// Name is the scenario's name key, File the file it was loaded from.
	Name string `json:"name,omitempty"`
	File string `json:"file,omitempty"`
	// Pools and Feeds are their state at the end of the load.
	Pools []PoolInfo `json:"pools,omitempty"`
	Feeds []FeedInfo `json:"feeds,omitempty"`
	// EndedBy says why the run ended before its length: its data ran out.
	EndedBy string `json:"ended_by,omitempty"`
}

// FeedInfo is a data feed at the end of the run.
type FeedInfo struct {
	// Name and Order ("sequential", "random", "unique") are the feed's.
	Name  string `json:"name"`
	Order string `json:"order"`
	// Rows are its rows, Used how many were handed out, Refused how many
	// requests found a unique feed used up.
	Rows    int   `json:"rows"`
	Used    int64 `json:"used"`
	Refused int64 `json:"refused,omitempty"`
}

// PoolInfo is a pool of captured values at the end of the run.
type PoolInfo struct {
	// Name is the pool's; Live its values, Max its capacity, Dropped the
	// values it dropped for new ones when full.
	Name    string `json:"name"`
	Live    int    `json:"live"`
	Max     int    `json:"max"`
	Dropped int64  `json:"dropped"`
}
