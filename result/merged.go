package result

import "time"

// Merged describes a Result that hail merge made from several.
type Merged struct {
	// Results is how many results were merged; Shards their shard indices.
	Results int   `json:"results"`
	Shards  []int `json:"shards,omitempty"`
	// Notes say how fields that cannot add exactly were combined.
	Notes []string `json:"notes"`
	// Incomplete says, one line per shard, why the merged result is not
	// the whole run as asked.
	Incomplete []string `json:"incomplete,omitempty"`
	// PerShard says, for a run of shards, what the merge got from each
	// shard 0…N-1, in order.
	PerShard []ShardOutcome `json:"per_shard,omitempty"`
}

// ShardOutcome is what a merge got from one shard of a run.
type ShardOutcome struct {
	// Index is the shard's index, from 0.
	Index int `json:"index"`
	// Outcome is how the shard ended: "complete", "interrupted" (stopped,
	// deleted, evicted: its partial result merged when it wrote one),
	// "failed" (with or without a result), "missing" or "late".
	Outcome string `json:"outcome"`
	// Merged says the shard's result is in the merge.
	Merged bool `json:"merged"`
	// Requests are the requests its result holds (0 without one).
	Requests int64 `json:"requests"`
	// Duration is how long it ran (0 without a result).
	Duration time.Duration `json:"seconds,omitempty" unit:"s"`
	// Reason says why it is not complete, as its scheduler told it.
	Reason string `json:"reason,omitempty"`
}
