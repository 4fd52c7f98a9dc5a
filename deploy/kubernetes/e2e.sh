#!/usr/bin/env bash
# deploy/kubernetes/e2e.sh: distributed runs on a real Kubernetes cluster, checked end to end.
#
#   KUBECONFIG=~/.kube/config bash deploy/kubernetes/e2e.sh [--shards "2 3"] [--late] [--pvc CLAIM]
#
# In a namespace that enforces the "restricted" Pod Security Standard (checked: a root pod is
# refused), it starts `hail serve` as a pod (target-pod.yaml) and, for each shard count, runs
# run.sh with the shards aimed at that pod's IP: the load stays inside the cluster's own pod
# network. Each run must have:
#   - every shard completed (the Job's succeeded count), on time (hail.shard.late_ns < 1 s);
#   - merged request count == the sum of the shards' == the server's own count (its /stats,
#     read through the API server's pod proxy), with no errors;
#   - the per-second series aligned: each merged second is the sum of the shards' seconds that
#     fall in it by wall clock, and the seconds add up to the count;
#   - the report rendered (HTML with charts and the distributed section, and text).
# --late adds a run whose shards cannot all fit at once (each asks for more than half of the
# largest node's CPU): the second starts late; run.sh must name it, exit 2, and the merged
# result must be marked incomplete while still counting every request the server saw.
# --interrupt adds a run one of whose shards is stopped mid-run by SIGTERM (as an eviction or a
# node drain stops it; sent by `kubectl debug` from an ephemeral container, restricted profile):
# it reports what it did, and the merged result must say it was interrupted, marked incomplete.
# --fail adds a run one of whose shards fails: two SIGTERMs while it waits for slow responses
# (the second makes hail exit at once, status 130, no result). run.sh must name it with the pod's reason and last log line, merge the
# other with --failed, exit 2, and the result be marked incomplete.
# --pvc CLAIM adds a run whose results go through that shared volume (run.sh --results pvc:).
#
# Settings (environment): NAMESPACE (hail-e2e), IMAGE (hail:local), LOAD (the whole run's load,
# default "-z 10s -q 2000 -c 16 -w"), CPU (per shard, 100m), MEMORY (128Mi), LEAD (20), OUT (a
# temporary directory), KEEP=1 keeps the namespace's Jobs and the target pod.
# Needs kubectl, jq, and hail here (HAIL=path, on the PATH, or built with go). Exit 0 when every
# check passed; the last lines say what was checked.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SHARDS_LIST="2 3" LATE= PVC= INTERRUPT= FAIL=
NAMESPACE=${NAMESPACE:-hail-e2e} IMAGE=${IMAGE:-hail:local} LOAD=${LOAD:--z 10s -q 2000 -c 16 -w}
CPU=${CPU:-100m} MEMORY=${MEMORY:-128Mi} LEAD=${LEAD:-20} KEEP=${KEEP:-}
while [ $# -gt 0 ]; do
	case $1 in
	--shards) SHARDS_LIST=$2; shift 2 ;;
	--late) LATE=1; shift ;;
	--interrupt) INTERRUPT=1; shift ;;
	--fail) FAIL=1; shift ;;
	--pvc) PVC=$2; shift 2 ;;
	--help | -h) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "e2e.sh: unknown setting $1 (see --help)" >&2; exit 1 ;;
	esac
done
for tool in kubectl jq; do command -v $tool >/dev/null || { echo "e2e.sh: $tool is not on the PATH" >&2; exit 1; }; done
HAIL=${HAIL:-$(command -v hail || true)}
if [ -z "$HAIL" ]; then
	HAIL=$(mktemp -d)/hail
	(cd "$HERE/../.." && CGO_ENABLED=0 go build -o "$HAIL" ./cmd/hail)
fi
export HAIL
OUT=${OUT:-$(mktemp -d)}
k() { kubectl --namespace "$NAMESPACE" "$@"; }
passed=0 failed=0
ok() { echo "e2e: ok    $*"; passed=$((passed + 1)); }
bad() { echo "e2e: FAIL  $*"; failed=$((failed + 1)); }
check() { # description, then a command that must succeed
	local what=$1; shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}

# ---------------------------------------------------------------- namespace, restricted
kubectl get namespace "$NAMESPACE" >/dev/null 2>&1 || kubectl create namespace "$NAMESPACE" >/dev/null
kubectl label --overwrite namespace "$NAMESPACE" pod-security.kubernetes.io/enforce=restricted \
	pod-security.kubernetes.io/enforce-version=latest pod-security.kubernetes.io/warn=restricted >/dev/null
refused=$(k run pss-probe --image=busybox:1.36 --restart=Never --dry-run=server -- true 2>&1 || true)
check "namespace $NAMESPACE enforces restricted (a root pod is refused: ${refused:0:80}…)" grep -q 'violates PodSecurity "restricted' <<<"$refused"

# ---------------------------------------------------------------- the target: hail serve as a pod
serve=hail-serve-e2e
k delete pod "$serve" --ignore-not-found --wait=true >/dev/null
sed -e "s/__NAME__/$serve/" -e "s#__IMAGE__#$IMAGE#" "$HERE/target-pod.yaml" | k apply -f - >/dev/null
k wait --for=condition=Ready "pod/$serve" --timeout=120s >/dev/null
ip=$(k get pod "$serve" -o jsonpath='{.status.podIP}')
target=http://$ip:8080/
served() { kubectl get --raw "/api/v1/namespaces/$NAMESPACE/pods/http:$serve:8080/proxy/stats" | jq .requests; }
echo "e2e: target $serve at $target (a pod of this cluster); results in $OUT"

# ---------------------------------------------------------------- one run, checked
# run_checked NAME SHARDS WANT_RC [run.sh settings...]; LOST=1 when shard 1 is to fail;
# RUN_TARGET and RUN_LOAD replace the target and the load.
run_checked() {
	local run=$1 n=$2 want=$3 rc=0 base after; shift 3
	base=$(served)
	set +e
	bash "$HERE/run.sh" --namespace "$NAMESPACE" --shards "$n" --target "${RUN_TARGET:-$target}" --cpu "$CPU" --memory "$MEMORY" \
		--lead "$LEAD" --image "$IMAGE" --run "$run" --out "$OUT" "$@" -- ${RUN_LOAD:-$LOAD} >"$OUT/$run.out" 2>&1
	rc=$?
	set -e
	after=$(served)
	local d=$OUT/$run
	sed 's/^/    | /' "$OUT/$run.out" | grep -E 'run.sh|hail merge|Merged|INCOMPLETE|Success rate|Requests/sec' || true
	check "$run: run.sh exit $rc (want $want)" [ "$rc" -eq "$want" ]
	local lost=${LOST:-0}
	check "$run: $((n - lost)) of $n shards completed (Job .status.succeeded)" \
		[ "$(k get job "hail-shards-$run" -o jsonpath='{.status.succeeded}')" = "$((n - lost))" ]
	local sum merged errors
	sum=$(cat "$d"/shard-*.json | jq -s 'map(.hail.counts.requests) | add')
	merged=$(jq .hail.counts.requests "$d/total.json")
	errors=$(jq .hail.counts.errors "$d/total.json")
	if [ "$lost" = 0 ]; then
		check "$run: merged $merged == sum of shards $sum == server $((after - base)), errors $errors" \
			[ "$merged" = "$sum" -a "$merged" = "$((after - base))" -a "$merged" -gt 0 -a "$errors" = 0 ]
	else # the failed shard's requests reached the server but its result is lost
		check "$run: merged $merged == sum of the shards with a result $sum < server $((after - base)), errors $errors" \
			[ "$merged" = "$sum" -a "$merged" -lt "$((after - base))" -a "$merged" -gt 0 -a "$errors" = 0 ]
	fi
	check "$run: merged shards $(jq -c .hail.merged.shards "$d/total.json")" \
		[ "$(jq -c .hail.merged.shards "$d/total.json")" = "$(jq -nc --argjson l "$lost" "[range($n)] | map(select(\$l == 0 or . != 1))")" ]
	# Every merged second is the sum of the shards' seconds that fall in it by wall clock.
	local aligned
	aligned=$(jq -s --slurpfile total "$d/total.json" '
		(map(.hail.start_unix_nano) | min) as $t0
		| [ .[] | (((.hail.start_unix_nano - $t0) / 1e9) | round) as $sh | .hail.series[] | {k: (.t + $sh), r: .requests} ]
		| group_by(.k) | map({k: .[0].k, r: (map(.r) | add)}) as $want
		| ($total[0].hail.series | map({k: .t, r: .requests})) as $got
		| ($got == $want) and (($got | map(.r) | add) == $total[0].hail.counts.requests)' "$d"/shard-*.json)
	check "$run: per-second series aligned ($(jq '.hail.series | length' "$d/total.json") seconds; starts $(jq -r '.hail.merged.notes[1]' "$d/total.json" | grep -o '[0-9.]*[µm]*s apart'))" \
		[ "$aligned" = true ]
	check "$run: report rendered ($(wc -c <"$d/report.html") bytes of HTML)" \
		grep -q 'Distributed run' "$d/report.html"
	check "$run: text report has the merge" grep -q 'Merged:' "$OUT/$run.out"
}

# signal_shard RUN CMD...: in the background, 3 s into RUN (of 20: a debug container may take
# seconds to start), run CMD in an ephemeral container beside shard 1's hail (`kubectl debug`,
# restricted profile); its output goes to OUT/RUN.debug. hail is PID 1 of the container whose
# process namespace the debug container joins; it handles SIGTERM, so the signal is delivered;
# same uid, so no capability is needed.
signal_shard() {
	local run=$1
	shift
	(
		sleep $((LEAD + 3))
		pod=$(k get pods -l "job-name=hail-shards-$run,batch.kubernetes.io/job-completion-index=1" -o jsonpath='{.items[0].metadata.name}')
		k debug "$pod" --image=busybox:1.36 --target=hail --profile=restricted \
			--custom=<(echo '{"securityContext":{"runAsUser":65532,"runAsGroup":65532}}') -- "$@"
	) >"$OUT/$run.debug" 2>&1 &
}

stamp=$(date +%H%M%S)
for n in $SHARDS_LIST; do
	run=e2e-$n-$stamp
	run_checked "$run" "$n" 0
	check "$run: every shard on time" [ "$(jq -s 'map(.hail.shard.late_ns // 0) | max < 1e9' "$OUT/$run"/shard-*.json)" = true ]
	check "$run: not marked incomplete" [ "$(jq '.hail.merged.incomplete // [] | length' "$OUT/$run/total.json")" = 0 ]
done

if [ -n "$LATE" ]; then
	# Each shard asks for more than half of the largest node's CPU: they cannot run at once.
	milli=$(kubectl get nodes -o json | jq '[.items[].status.allocatable.cpu | if endswith("m") then rtrimstr("m") | tonumber else tonumber * 1000 end] | max')
	schedulable=$(kubectl get nodes -o json | jq '[.items[] | select(.spec.unschedulable != true)] | length')
	if [ "$schedulable" -gt 1 ]; then
		echo "e2e: skip  the late-shard run needs a single schedulable node ($schedulable here)"
	else
		run=e2e-late-$stamp
		CPU=$((milli / 2 + 100))m run_checked "$run" 2 2
		check "$run: run.sh named the Pending shard" grep -q 'is still Pending at the start time' "$OUT/$run.out"
		check "$run: the merge named the late shard" grep -Eq 'hail merge: incomplete: shard [01]/2 started [0-9.]+s after --start-at' "$OUT/$run.out"
		check "$run: marked incomplete in the result ($(jq -r '.hail.merged.incomplete[0]' "$OUT/$run/total.json" | cut -c1-60)…)" \
			[ "$(jq '.hail.merged.incomplete | length' "$OUT/$run/total.json")" = 1 ]
	fi
fi

if [ -n "$INTERRUPT" ]; then
	run=e2e-int-$stamp
	signal_shard "$run" kill -TERM 1
	RUN_LOAD="-z 20s -q 2000 -c 16 -w" run_checked "$run" 2 2
	wait
	check "$run: the merge named the interrupted shard" grep -Eq 'hail merge: incomplete: shard 1/2 was interrupted after [0-9.]+s' "$OUT/$run.out"
	check "$run: marked incomplete in the result" [ "$(jq '.hail.merged.incomplete | length' "$OUT/$run/total.json")" = 1 ]
fi

if [ -n "$FAIL" ]; then
	run=e2e-fail-$stamp
	signal_shard "$run" sh -c 'kill -TERM 1; sleep 0.2; kill -TERM 1'
	# Slow responses (500 ms) and -w: the first SIGTERM leaves hail waiting for its in-flight
	# requests, so the second one, 200 ms later, finds it still running.
	LOST=1 RUN_TARGET="${target}?delay=500ms" RUN_LOAD="-z 20s -q 200 -c 200 -w" run_checked "$run" 2 2
	wait
	check "$run: run.sh named the failed shard and why" grep -Eq 'run.sh: shard 1 FAILED: pod hail-shards-[-a-z0-9]+: Error \(exit code 130\): hail: interrupted twice' "$OUT/$run.out"
	check "$run: the merge named it" grep -q 'hail merge: incomplete: shard 1/2 failed: pod' "$OUT/$run.out"
	check "$run: marked incomplete in the result" [ "$(jq '.hail.merged.incomplete | length' "$OUT/$run/total.json")" = 1 ]
fi

if [ -n "$PVC" ]; then
	run=e2e-pvc-$stamp
	run_checked "$run" 2 0 --results "pvc:$PVC"
	check "$run: the merge Job's log has the summary" grep -q '^hail merge: 2 results' "$OUT/$run/merge.log"
fi

if [ -z "$KEEP" ]; then
	k delete jobs -l app.kubernetes.io/name=hail --wait=false >/dev/null
	k delete pod "$serve" --wait=false >/dev/null
fi
echo "e2e: $passed passed, $failed failed (results in $OUT)"
[ "$failed" -eq 0 ]
