//go:build !linux

package llmserve

import "time"

// shardTimer is a shard's wake-up; without a timerfd it is a Go timer
// (which may oversleep by up to a millisecond).
type shardTimer struct{ *goTimer }

func newShardTimer(start time.Time) *shardTimer { return &shardTimer{newGoTimer(start)} }
