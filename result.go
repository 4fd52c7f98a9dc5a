package hail

import "github.com/hail-loadgen/hail/result"

// Result is a run's outcome: the JSON report the command writes (hail -j,
// hail run -o result.json), as Go values. It is package result's Result
// (declared there, with every part): its first fields are oha's keys,
// with oha's meanings; Hail holds what hail measures beyond them.
// WriteJSON and json.Marshal write a Result exactly as the command does,
// and ReadJSON and json.Unmarshal read back what either wrote.
type Result = result.Result
