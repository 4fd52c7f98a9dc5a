#!/usr/bin/env bash
# deploy/kubernetes/run.sh: one distributed hail run on Kubernetes, as an Indexed Job.
#
#   bash deploy/kubernetes/run.sh --shards 4 --target http://my-svc.my-ns.svc:8080/ \
#        --cpu 2 --memory 512Mi -- -z 60s -q 20000 -c 400
#
# 1. renders shards-job.yaml from the settings below and creates the Job: SHARDS pods, each
#    `hail --shard I/SHARDS --start-at START_AT` with the whole run's load flags (after --);
# 2. waits for it, failing fast: a shard still Pending at START_AT is named with the
#    scheduler's reason, a failed Job is not waited on (every index runs to its end, then the
#    failed ones are named with the pod's reason and last log lines);
# 3. collects each shard's result from its log (or, with --results pvc:CLAIM, from a shared
#    volume), merges them with `hail merge` and renders the report, in OUT/RUN/.
#
# Settings: flags, or the environment variables named in brackets.
#   --shards N         [SHARDS]     shards (pods); default 2
#   --target URL       [TARGET]     what to load (required); hail's load flags go after --
#   --cpu Q            [CPU]        CPU request per shard (default 500m); the scheduler must fit
#                                   every shard at once, or the late ones start late (reported)
#   --cpu-limit Q      [CPU_LIMIT]  CPU limit per shard (default none: a limit throttles the generator)
#   --memory Q         [MEMORY]     memory request and limit per shard (default 256Mi)
#   --lead S           [LEAD]       seconds from now to START_AT, for scheduling and image pulls (default 30)
#   --namespace NS     [NAMESPACE]  default: the kubeconfig's
#   --image IMAGE      [IMAGE]      default hail:local (build deploy/Dockerfile, push where the cluster pulls)
#   --run NAME         [RUN]        a DNS label naming the Jobs (default hail-YYYYmmdd-HHMMSS)
#   --out DIR          [OUT]        where RUN/ is written (default: the current directory)
#   --results MODE     [RESULTS]    logs (default: no volume needed) or pvc:CLAIM (a shared volume,
#                                   writable by uid 65532; merged in the cluster by merge-job.yaml)
#   --timeout S        [TIMEOUT]    seconds to wait after START_AT beyond the run's -z (default 300)
#   --delete           [DELETE=1]   delete the Jobs (and their pods) once the results are collected
#   --print                         print the rendered manifests and exit (nothing is applied)
#   -- FLAGS...        [LOAD]       the whole run's hail load flags, e.g. -z 60s -q 20000 -c 400
#                                   (default -z 30s -c 50); each shard takes its 1/N share
# Needs kubectl, and hail on this machine (HAIL=path, on the PATH, or built here with go) to merge
# (logs mode) and render the report.
# Exit status: 0 the run completed and is merged; 2 it is incomplete (a shard failed, started
# late or was interrupted): the merged result and report are still written, marked so; 1 an error.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

SHARDS=${SHARDS:-2} TARGET=${TARGET:-} CPU=${CPU:-500m} CPU_LIMIT=${CPU_LIMIT:-} MEMORY=${MEMORY:-256Mi}
LEAD=${LEAD:-30} NAMESPACE=${NAMESPACE:-} IMAGE=${IMAGE:-hail:local} RUN=${RUN:-hail-$(date +%Y%m%d-%H%M%S)}
OUT=${OUT:-$PWD} RESULTS=${RESULTS:-logs} TIMEOUT=${TIMEOUT:-300} DELETE=${DELETE:-} PRINT=
read -ra load <<<"${LOAD:--z 30s -c 50}"

die() { echo "run.sh: $*" >&2; exit 1; }
say() { echo "run.sh: $*" >&2; }
need() { [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a value (see --help)"; }
while [ $# -gt 0 ]; do
	case $1 in
	--shards) need "$@"; SHARDS=$2; shift 2 ;;
	--target) need "$@"; TARGET=$2; shift 2 ;;
	--cpu) need "$@"; CPU=$2; shift 2 ;;
	--cpu-limit) need "$@"; CPU_LIMIT=$2; shift 2 ;;
	--memory) need "$@"; MEMORY=$2; shift 2 ;;
	--lead) need "$@"; LEAD=$2; shift 2 ;;
	--namespace | -n) need "$@"; NAMESPACE=$2; shift 2 ;;
	--image) need "$@"; IMAGE=$2; shift 2 ;;
	--run) need "$@"; RUN=$2; shift 2 ;;
	--out) need "$@"; OUT=$2; shift 2 ;;
	--results) need "$@"; RESULTS=$2; shift 2 ;;
	--timeout) need "$@"; TIMEOUT=$2; shift 2 ;;
	--delete) DELETE=1; shift ;;
	--print) PRINT=1; shift ;;
	--help | -h) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	--) shift; load=("$@"); break ;;
	*) die "unknown setting $1: hail's load flags go after -- (see --help)" ;;
	esac
done

# ---------------------------------------------------------------- settings, checked up front
[[ $SHARDS =~ ^[1-9][0-9]{0,3}$ ]] || die "--shards $SHARDS: give a number of shards from 1 to 9999"
[[ $TARGET =~ ^https?://[^[:space:]]+$ ]] || die "--target '$TARGET': give the URL to load, e.g. --target http://my-svc.my-ns.svc:8080/"
qty='^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$'
[[ $CPU =~ $qty ]] || die "--cpu $CPU: give a Kubernetes quantity, e.g. 500m or 2"
[ -z "$CPU_LIMIT" ] || [[ $CPU_LIMIT =~ $qty ]] || die "--cpu-limit $CPU_LIMIT: give a Kubernetes quantity, e.g. 2"
[[ $MEMORY =~ $qty ]] || die "--memory $MEMORY: give a Kubernetes quantity, e.g. 256Mi"
[[ $LEAD =~ ^[0-9]+$ ]] || die "--lead $LEAD: give whole seconds"
[[ $TIMEOUT =~ ^[0-9]+$ ]] || die "--timeout $TIMEOUT: give whole seconds"
[[ $RUN =~ ^[a-z0-9]([-a-z0-9]{0,49}[a-z0-9])?$ ]] || die "--run $RUN: give a DNS label of at most 51 characters: lowercase letters, digits and '-'"
case $RESULTS in
logs) CLAIM= ;;
pvc:?*) CLAIM=${RESULTS#pvc:} ;;
*) die "--results $RESULTS: give logs or pvc:CLAIM (a ReadWriteMany claim writable by uid 65532)" ;;
esac
for a in "${load[@]}"; do
	case $a in
	-o | --output | --output=* | -o=* | -o?* | --output-format* | -j | --json | --shard* | --start-at* | --no-tui | --db-url* | --metrics-addr* | --target-pid* | http://* | https://*)
		die "load flag $a: run.sh sets the shard, start, output and target itself (give the target with --target)" ;;
	esac
done
# The run's duration (-z), for the deadlines: seconds, or 0 when not given.
duration=0
for ((i = 0; i < ${#load[@]}; i++)); do
	v=
	case ${load[i]} in
	-z | --duration) v=${load[i + 1]:-} ;;
	-z=* | --duration=*) v=${load[i]#*=} ;;
	-z?*) v=${load[i]#-z} ;;
	esac
	[ -n "$v" ] || continue
	if [[ $v =~ ^([0-9]+)(ms|s|m|h)?$ ]]; then
		case ${BASH_REMATCH[2]} in
		ms) duration=1 ;;
		h) duration=$((BASH_REMATCH[1] * 3600)) ;;
		m) duration=$((BASH_REMATCH[1] * 60)) ;;
		*) duration=${BASH_REMATCH[1]} ;;
		esac
	else
		duration=0 # another of hail's forms (1m30s, 2.5s): hail checks it; wait as for no -z
	fi
done
budget=$((duration > 0 ? duration + TIMEOUT : 3600 + TIMEOUT))

# ---------------------------------------------------------------- rendering
# yamlq quotes one word as a YAML double-quoted string; $( is doubled, so
# Kubernetes passes it on instead of expanding a variable.
yamlq() {
	local s=${1//\\/\\\\}
	s=${s//\"/\\\"}
	s=${s//\$(/\$\$(}
	printf '"%s"' "$s"
}
lines() { local a; for a in "$@"; do printf -- '- %s\n' "$(yamlq "$a")"; done; }
# render FILE: words __NAME__ become $R_NAME; a line "#__NAME__" becomes $R_NAME's lines,
# indented as the marker is.
render() {
	awk '
	/^ *#__[A-Z][A-Z_]*__$/ {
		ind = $0; sub(/#.*/, "", ind); k = $0; sub(/^ *#__/, "", k); sub(/__$/, "", k)
		n = split(ENVIRON["R_" k], l, "\n")
		for (i = 1; i <= n; i++) if (l[i] != "") print ind l[i]
		next
	}
	{
		out = ""
		while (match($0, /__[A-Z][A-Z_]*__/)) {
			out = out substr($0, 1, RSTART - 1) ENVIRON["R_" substr($0, RSTART + 2, RLENGTH - 4)]
			$0 = substr($0, RSTART + RLENGTH)
		}
		print out $0
	}' "$1"
}
START_AT=$(($(date +%s) + LEAD))
export R_RUN=$RUN R_SHARDS=$SHARDS R_START_AT=$START_AT R_IMAGE=$IMAGE R_CPU=$CPU R_MEMORY=$MEMORY
export R_DEADLINE=$((LEAD + budget)) R_CLAIM=$CLAIM R_CPULIMIT= R_MOUNTS= R_VOLUMES=
[ -z "$CPU_LIMIT" ] || R_CPULIMIT="cpu: \"$CPU_LIMIT\""
if [ -n "$CLAIM" ]; then
	R_ARGS=$(lines "${load[@]}" "$TARGET")$'\n'"- --output=/results/$RUN.shard-\$(JOB_COMPLETION_INDEX).json"
	R_MOUNTS=$'volumeMounts:\n  - {name: results, mountPath: /results}'
	R_VOLUMES=$'volumes:\n  - name: results\n    persistentVolumeClaim: {claimName: '"$CLAIM"'}'
else
	R_ARGS=$(lines "${load[@]}" "$TARGET")
fi
export R_ARGS
if [ -n "$PRINT" ]; then
	render "$HERE/shards-job.yaml"
	if [ -n "$CLAIM" ]; then echo ---; R_ARGS= render "$HERE/merge-job.yaml"; fi
	exit 0
fi

# ---------------------------------------------------------------- the run
command -v kubectl >/dev/null || die "kubectl is not on the PATH"
k() { kubectl ${NAMESPACE:+--namespace "$NAMESPACE"} "$@"; }
HAIL=${HAIL:-$(command -v hail || true)}
if [ -z "$HAIL" ] && command -v go >/dev/null && [ -f "$HERE/../../cmd/hail/main.go" ]; then
	say "building hail to merge and render the results (set HAIL=path to skip)"
	HAIL=$(mktemp -d)/hail
	(cd "$HERE/../.." && CGO_ENABLED=0 go build -o "$HAIL" ./cmd/hail) || die "could not build hail"
fi
[ -n "$HAIL" ] || [ -n "$CLAIM" ] || die "hail is needed here to merge the shards: put it on the PATH or set HAIL=path (go build ./cmd/hail)"
dir=$OUT/$RUN
[ ! -e "$dir" ] || die "$dir exists: give another --run or --out"
mkdir -p "$dir"
job=hail-shards-$RUN
[ -z "$CLAIM" ] || k get pvc "$CLAIM" >/dev/null || die "--results pvc:$CLAIM: no such claim in the namespace (see docs/distributed.md for the storage it needs)"

say "run $RUN: $SHARDS shards of '${load[*]}' against $TARGET, starting at $(date -u -d "@$START_AT" +%FT%TZ) (in ${LEAD}s)"
render "$HERE/shards-job.yaml" >"$dir/shards-job.yaml"
k apply -f "$dir/shards-job.yaml" >/dev/null

# pods: "INDEX PHASE POD REASON" for every pod of the Job.
pods() {
	k get pods -l "job-name=$job" -o jsonpath='{range .items[*]}{.metadata.annotations.batch\.kubernetes\.io/job-completion-index}{" "}{.status.phase}{" "}{.metadata.name}{" "}{.status.conditions[?(@.type=="PodScheduled")].message}{.status.containerStatuses[0].state.waiting.reason}{"\n"}{end}'
}
# job_state JOB: Complete or Failed once the Job has ended (that condition True), else nothing.
job_state() {
	local st
	st=$(k get job "$1" -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{" "}{end}' || true)
	case " $st " in
	*" Complete "*) echo Complete ;;
	*" Failed "*) echo Failed ;;
	esac
}
# The wait: until the Job is Complete or Failed; a shard still unscheduled at START_AT is named once.
deadline=$((START_AT + budget))
warned=
while :; do
	if [ -n "$(job_state "$job")" ]; then break; fi
	now=$(date +%s)
	if [ "$now" -ge "$START_AT" ]; then
		while read -r idx phase pod why; do
			[ -n "$idx" ] && [ "$phase" = Pending ] || continue
			case " $warned " in *" $idx "*) continue ;; esac
			say "shard $idx is still Pending at the start time (${why:-not started yet}): it will start late, and the run will be reported incomplete"
			warned="$warned $idx"
		done < <(pods)
	fi
	if [ "$now" -gt "$deadline" ]; then
		say "timed out ${TIMEOUT}s after the run's end; the shards not done:"
		pods | awk '$2 != "Succeeded" { print "  shard " $0 }' >&2
		die "the Job is left for inspection: kubectl ${NAMESPACE:+-n $NAMESPACE }describe job $job; delete it with kubectl delete job $job"
	fi
	sleep 2
done

# ---------------------------------------------------------------- collect
# why INDEX POD: the pod's failure in one line, as Kubernetes says it, with its last log line.
why() {
	local s last
	s=$(k get pod "$2" -o jsonpath='{.status.containerStatuses[0].state.terminated.reason}{" (exit code "}{.status.containerStatuses[0].state.terminated.exitCode}{")"}{.status.reason}{" "}{.status.message}' 2>/dev/null || true)
	read -r s <<<"$s" || true
	last=$(k logs "$2" --tail=3 2>/dev/null | grep -v '^[[:space:]{}]' | tail -1 || true)
	echo "pod $2: ${s:-gone}${last:+: $last}" | tr -s ' '
}
failed=()
declare -A podof=()
while read -r idx phase pod _; do # a succeeded pod of an index wins over others
	[ -n "$idx" ] || continue
	cur=${podof[$idx]:-}
	[ "${cur%% *}" = Succeeded ] || podof[$idx]="$phase $pod"
done < <(pods)
for ((i = 0; i < SHARDS; i++)); do
	read -r phase pod <<<"${podof[$i]:-none -}"
	if [ "$phase" != Succeeded ]; then
		if [ "$pod" = - ]; then w="no pod (the Job ended before it was created)"; else w=$(why "$i" "$pod"); fi
		say "shard $i FAILED: $w"
		failed+=("--failed=$i=$w")
		continue
	fi
	[ -n "$CLAIM" ] && { say "shard $i: done (pod $pod)"; continue; }
	k logs "$pod" >"$dir/shard-$i.log" || true
	# The result is the JSON object from a line "{" to a line "}"; hail's own messages (stderr,
	# in the same log) are lines of their own outside it.
	awk '/^\{$/ { on = 1 } on { print } /^\}$/ { exit }' "$dir/shard-$i.log" >"$dir/shard-$i.json"
	if ! "$HAIL" report "$dir/shard-$i.json" --output-format json >/dev/null 2>&1; then
		rm -f "$dir/shard-$i.json"
		w="pod $pod: its log holds no complete result (see $dir/shard-$i.log)"
		say "shard $i FAILED: $w"
		failed+=("--failed=$i=$w")
		continue
	fi
	grep -v '^[[:space:]{}]' "$dir/shard-$i.log" | sed "s/^/run.sh: shard $i said: /" >&2 || true
	say "shard $i: done (pod $pod)"
done

# ---------------------------------------------------------------- merge
rc=0
if [ -n "$CLAIM" ]; then
	R_ARGS=$(lines "${failed[@]}") render "$HERE/merge-job.yaml" >"$dir/merge-job.yaml"
	k apply -f "$dir/merge-job.yaml" >/dev/null
	while :; do
		if [ -n "$(job_state "hail-merge-$RUN")" ]; then break; fi
		[ "$(date +%s)" -lt $((deadline + 600)) ] || die "the merge Job did not finish in 10 minutes: kubectl describe job hail-merge-$RUN"
		sleep 2
	done
	k logs "job/hail-merge-$RUN" 2>&1 | tee "$dir/merge.log" >&2 || true
	! grep -q '^hail merge: incomplete' "$dir/merge.log" || rc=2
	# Fetch the files through a short-lived pod that mounts the volume; its shell exits on SIGTERM.
	fetch=hail-fetch-$RUN
	k run "$fetch" --image=busybox:1.36 --restart=Never --overrides='{"spec":{"automountServiceAccountToken":false,
		"securityContext":{"runAsNonRoot":true,"runAsUser":65532,"runAsGroup":65532,"seccompProfile":{"type":"RuntimeDefault"}},
		"containers":[{"name":"fetch","image":"busybox:1.36","command":["sh","-c","trap \"exit 0\" TERM; sleep 3600 & wait"],
		"securityContext":{"allowPrivilegeEscalation":false,"readOnlyRootFilesystem":true,"capabilities":{"drop":["ALL"]}},
		"volumeMounts":[{"name":"r","mountPath":"/results","readOnly":true}]}],
		"volumes":[{"name":"r","persistentVolumeClaim":{"claimName":"'"$CLAIM"'","readOnly":true}}]}}' >/dev/null
	k wait --for=condition=Ready "pod/$fetch" --timeout=120s >/dev/null || die "the fetch pod did not start: kubectl describe pod $fetch"
	for ((i = 0; i < SHARDS; i++)); do
		k exec "$fetch" -- cat "/results/$RUN.shard-$i.json" >"$dir/shard-$i.json" 2>/dev/null || rm -f "$dir/shard-$i.json"
	done
	k exec "$fetch" -- cat "/results/$RUN.total.json" >"$dir/total.json" 2>/dev/null || rm -f "$dir/total.json"
	k delete pod "$fetch" --wait=false >/dev/null
	[ -s "$dir/total.json" ] || die "the merge wrote no result: kubectl logs job/hail-merge-$RUN"
	[ "${#failed[@]}" -eq 0 ] || rc=2
else
	compgen -G "$dir/shard-*.json" >/dev/null || die "every shard failed (above): nothing to merge"
	set +e
	"$HAIL" merge "$dir"/shard-*.json "${failed[@]}" -o "$dir/total.json"
	rc=$?
	set -e
	[ "$rc" -le 2 ] && [ -s "$dir/total.json" ] || die "hail merge failed (exit $rc)"
fi
if [ -n "$HAIL" ]; then
	"$HAIL" report "$dir/total.json" --output-format html -o "$dir/report.html"
	"$HAIL" report "$dir/total.json"
fi
if [ -n "$DELETE" ]; then
	k delete job "$job" ${CLAIM:+"hail-merge-$RUN"} --wait=false >/dev/null
fi
if [ "$rc" -ne 0 ]; then
	say "the run is INCOMPLETE (above: which shard and why); merged what there was: $dir/total.json, $dir/report.html"
	exit 2
fi
say "merged result: $dir/total.json; report: $dir/report.html"
