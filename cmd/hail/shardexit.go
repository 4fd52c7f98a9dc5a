package main

import (
	"fmt"
	"time"

	"github.com/hail-loadgen/hail/result"
)

// exitInterruptedShard is the exit status of a shard (--shard) whose run
// was interrupted — SIGTERM or SIGINT: its pod deleted or evicted, its
// node drained, or hail kube stopping the run. Its result is written in
// full, marked interrupted; the status is not 0 so that a scheduler (a
// Kubernetes Job) counts the shard as not completed.
const exitInterruptedShard = 4

// shardExit is how a run ends when it was a shard: exitInterruptedShard
// when it was interrupted, else nothing to say.
func shardExit(r *resultFlags, res *result.Result) error {
	if r.shard == "" || !res.Hail.Interrupted {
		return nil
	}
	return &exitError{code: exitInterruptedShard, msg: fmt.Sprintf("shard %s was interrupted after %s: its result is written, marked interrupted",
		r.shard, res.Summary.Total.Round(time.Millisecond))}
}

// runExit is how a finished load or gRPC run ends: a shard that was
// interrupted first (exitInterruptedShard: its scheduler must count it as
// not completed), then a run in which no request succeeded (exit 3).
func runExit(r *resultFlags, res *result.Result) error {
	if err := shardExit(r, res); err != nil {
		return err
	}
	return noSuccess(res)
}
