// Package values holds what a scenario's templates draw from besides what
// they generate: pools of values captured from responses (Pool, read by
// {{pick POOL}} and {{take POOL}}) and data files whose rows fill
// templates (Feed, {{feed.NAME.COLUMN}}). Both are shared by every worker
// of a run: a pool locks one of its shards per call, a feed hands out a
// row with one atomic add.
package values
