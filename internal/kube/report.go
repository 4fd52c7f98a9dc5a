package kube

// report tells Report, when set, the run's phase and its shards' states.
func (r *Runner) report(phase string, s *Spec, v view) {
	if r.Report == nil {
		return
	}
	shards := make([]ShardStatus, len(v.shards))
	for i, st := range v.shards {
		shards[i] = st.status(s)
	}
	r.Report(phase, shards)
}

// status is the shard's state and its reason, as a HailRun's status
// shows it while the run goes on.
func (st shardState) status(s *Spec) ShardStatus {
	out := ShardStatus{Index: st.index, Pod: st.pod}
	switch {
	case st.pod == "":
		out.State, out.Reason = ShardPending, "no pod yet"
	case st.fatal(s) != "":
		out.State, out.Reason = ShardFailed, st.fatal(s)
	case st.ended && st.exit == exitOK && st.started:
		out.State = ShardComplete
	case st.ended && st.exit == exitInterrupted:
		out.State, out.Reason = ShardInterrupted, st.ending(s, nil, false, true)
	case st.ended:
		out.State, out.Reason = ShardFailed, st.ending(s, nil, false, true)
	case st.running:
		out.State = ShardRunning
	default:
		out.State, out.Reason = ShardPending, st.waitingFor()
	}
	return out
}
