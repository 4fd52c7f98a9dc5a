#!/usr/bin/env bash
# bench/scenario.sh: does a scenario cost throughput? The vm-lifecycle scenario (70% POST /items with
# a templated JSON body and the new id captured into a pool, 20% GET /items/{{pick}}, 10% DELETE
# /items/{{take}}) against plain single-URL runs, all against `hail serve`:
#   plain  GET $PLAIN_PATH (/), the cheapest request the server answers;
#   post   POST /items with a fixed JSON body (-d): the scenario's most expensive request for the
#          server, without any of the scenario's machinery (templates, mix, captures, pools);
#   grpc   the same lifecycle over gRPC ($GRPC_SCENARIO, examples/vm-lifecycle-grpc.yaml: Create with
#          templated data and its id captured, Get and Delete of captured ids) against
#          `hail serve --grpc`, on the h2 engine;
#   hailgrpc  hail grpc calling Items/Create with fixed data (encoded once): what a gRPC call costs
#          hail outside a scenario, without templates, captures or pools;
#   grpcmux  the gRPC scenario as gRPC clients run it: $GRPC_STREAMS calls in flight on each HTTP/2
#          connection (-p), $CONNS / $GRPC_STREAMS connections, so the same calls are in flight.
#
# `hail serve` runs pinned to CPU $SERVER_CPU (1), hail pinned to CPU $CLIENT_CPU (0), in the closed
# model with -c $CONNS connections for $SECS seconds per run (the scenario's stages replaced by -c,
# so every run has the same concurrency). The server is restarted for every run, so every run starts
# with an empty item store. $ROUNDS rounds, the order rotating each round; the table shows medians of
# hail's requests/s, of hail's CPU µs per request (from its report) and of the server's CPU µs per
# request (from /proc/PID/stat). The goals: scenario ≥ 0.8 × plain GET requests/s; the gRPC scenario's
# hail CPU per call ≤ $GRPC_GOAL × the REST scenario's, judged on grpcmux (every ratio are printed, with the gRPC
# scenario's against hail grpc's, and the machine's load average). The example's setup
# (50 creates) and teardown (deletes what the load left) run too, one request at a time: hail's
# numbers exclude them, the server's count and CPU include them.
#
# STAGES=1 measures connection stages instead: a scenario that opens 256 connections and ramps
# down to 64 (192 parked), against a constant -c 64, with fast responses and with 100 ms ones, the
# uring engine's CPU µs per request side by side. The check: stages ≤ 1.2 × constant, for both
# (ok or FAIL; exit 1 on FAIL).
#
#   bash bench/scenario.sh                       # -c 64, 5 s, 3 rounds
#   SECS=2 ROUNDS=2 bash bench/scenario.sh       # a short trial
#   ENGINE=net PLAIN_PATH=/items bash bench/scenario.sh
#   STAGES=1 bash bench/scenario.sh
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

CONNS=${CONNS:-64}
SECS=${SECS:-5}
ROUNDS=${ROUNDS:-3}
ENGINE=${ENGINE:-auto}
PLAIN_PATH=${PLAIN_PATH:-/}
SCENARIO=${SCENARIO:-$REPO/examples/vm-lifecycle.yaml}
GRPC_SCENARIO=${GRPC_SCENARIO:-$REPO/examples/vm-lifecycle-grpc.yaml}
GRPC_GOAL=1.3 # the gRPC scenario's hail CPU per call ≤ 1.3 × the REST scenario's
GRPC_STREAMS=${GRPC_STREAMS:-16} # grpcmux: calls in flight per connection
STAGES_GOAL=1.2 # STAGES=1: stages ≤ 1.2 × constant CPU µs per request
positive_ints CONNS SECS ROUNDS GRPC_STREAMS
[ $((CONNS % GRPC_STREAMS)) = 0 ] || die "CONNS ($CONNS) must be a multiple of GRPC_STREAMS ($GRPC_STREAMS): the grpcmux row keeps the calls in flight equal"

bench_tmp scenario-bench

have taskset || die "taskset is needed"
HAIL=$TMPD/hail
build_hail "$HAIL"
raise_nofile $((CONNS * 2 + 1024))

# server_cpu: the server's user + system CPU so far, in µs.
server_cpu() {
	local f
	read -r -a f <"/proc/$SERVE_PID/stat"
	echo $(((f[13] + f[14]) * 1000000 / $(getconf CLK_TCK)))
}

# served: the server's request count (GET /stats over bash's /dev/tcp; /stats is not counted).
served() {
	local fd body
	exec {fd}<>"/dev/tcp/127.0.0.1/$PORT"
	printf 'GET /stats HTTP/1.0\r\n\r\n' >&"$fd"
	body=$(cat <&"$fd")
	exec {fd}>&-
	sed -n 's/.*"requests":\([0-9]*\).*/\1/p' <<<"$body" | head -n 1
}

# one KIND ROUND: one run on a fresh server; appends "KIND ROUND rps served hail_us server_us" to runs.txt.
one() {
	local kind=$1 round=$2 out=$TMPD/$1-$2.json rps n cpu0 cpu1 hus sus gport=
	case $kind in
	grpc | grpcmux | hailgrpc)
		gport=$(free_port) || die "no free port"
		serve_start "$HAIL" --grpc "127.0.0.1:$gport"
		for _ in $(seq 1 100); do (: <"/dev/tcp/127.0.0.1/$gport") 2>/dev/null && break || sleep 0.05; done
		;;
	*) serve_start "$HAIL" ;;
	esac
	cpu0=$(server_cpu)
	case $kind in
	grpc)
		taskset -c "$CLIENT_CPU" "$HAIL" run "$GRPC_SCENARIO" --base "http://127.0.0.1:$gport" -c "$CONNS" -z "${SECS}s" \
			--no-tui -j -o "$out" || [ $? = 2 ]
		;;
	grpcmux)
		taskset -c "$CLIENT_CPU" "$HAIL" run "$GRPC_SCENARIO" --base "http://127.0.0.1:$gport" -c $((CONNS / GRPC_STREAMS)) -p "$GRPC_STREAMS" \
			-z "${SECS}s" --no-tui -j -o "$out" || [ $? = 2 ]
		;;
	hailgrpc)
		taskset -c "$CLIENT_CPU" "$HAIL" grpc --insecure --call hail.v1.Items/Create -t 2s \
			-d '{"name":"vm-1","tenant":"acme","cpus":4}' -m '{"x-tenant":"acme"}' \
			-c "$CONNS" -z "${SECS}s" --no-tui -j -o "$out" "127.0.0.1:$gport"
		;;
	scenario)
		taskset -c "$CLIENT_CPU" "$HAIL" run "$SCENARIO" --base "http://127.0.0.1:$PORT" -c "$CONNS" -z "${SECS}s" \
			--engine "$ENGINE" --no-tui -j -o "$out" || [ $? = 2 ] # a failed threshold is still a measurement
		;;
	post)
		taskset -c "$CLIENT_CPU" "$HAIL" -c "$CONNS" -z "${SECS}s" --engine "$ENGINE" --no-tui -j -o "$out" \
			-m POST -T application/json -d '{"name":"vm-1","tenant":"acme","cpus":4}' "http://127.0.0.1:$PORT/items"
		;;
	*)
		taskset -c "$CLIENT_CPU" "$HAIL" -c "$CONNS" -z "${SECS}s" --engine "$ENGINE" --no-tui -j -o "$out" \
			"http://127.0.0.1:$PORT$PLAIN_PATH"
		;;
	esac
	cpu1=$(server_cpu)
	if [ -n "$gport" ]; then # gRPC calls: hail's count of those it sent (the server counts them the same)
		n=$(sed -n 's/.*"sent": *\([0-9]*\).*/\1/p' "$out" | head -n 1)
	else
		n=$(served)
	fi
	serve_stop
	rps=$(sed -n 's/.*"requestsPerSec": *\([0-9.e+]*\).*/\1/p' "$out" | head -n 1)
	hus=$(sed -n 's/.*"cpu_per_request_us": *\([0-9.e+]*\).*/\1/p' "$out" | head -n 1)
	sus=$(awk -v c=$((cpu1 - cpu0)) -v n="$n" 'BEGIN { printf "%.2f", (n > 0 ? c / n : 0) }')
	note "round $round $kind: $rps requests/s (server counted $n); hail $hus µs/request, server $sus µs/request"
	echo "$kind $round $rps $n $hus $sus" >>"$TMPD/runs.txt"
}

# stages_one KIND DELAY ROUND: a stages or constant run on a fresh server; appends
# "KIND DELAY ROUND hail_us requests" to stages.txt.
stages_one() {
	local kind=$1 delay=$2 round=$3 out=$TMPD/st-$1-$2-$3.json yaml=$TMPD/stages.yaml path=/ us n
	[ "$delay" = 0 ] || path="/?delay=$delay"
	serve_start "$HAIL"
	if [ "$kind" = stages ]; then
		printf 'name: stages\nbase: http://127.0.0.1:%s\nsteps:\n  - name: get\n    path: "%s"\nstages:\n  - {duration: 500ms, connections: 256}\n  - {duration: 500ms, connections: %s}\n  - {duration: %ss, connections: %s}\n' \
			"$PORT" "$path" "$CONNS" "$SECS" "$CONNS" >"$yaml"
		taskset -c "$CLIENT_CPU" "$HAIL" run "$yaml" --engine uring --no-tui -j -o "$out"
	else
		taskset -c "$CLIENT_CPU" "$HAIL" -c "$CONNS" -z "$((SECS + 1))s" --engine uring --no-tui -j -o "$out" "http://127.0.0.1:$PORT$path"
	fi
	serve_stop
	us=$(sed -n 's/.*"cpu_per_request_us": *\([0-9.e+]*\).*/\1/p' "$out" | head -n 1)
	n=$(sed -n 's/.*"sent": *\([0-9]*\).*/\1/p' "$out" | head -n 1)
	note "round $round $kind, delay $delay: hail $us µs/request over $n requests"
	echo "$kind $delay $round $us $n" >>"$TMPD/stages.txt"
}

if [ "${STAGES:-0}" = 1 ]; then
	note "connection stages (256 opened, ramped to $CONNS) vs constant -c $CONNS, uring, ${SECS}s hold, $ROUNDS rounds"
	for r in $(seq 1 "$ROUNDS"); do
		for d in 0 100ms; do
			if [ $((r % 2)) = 1 ]; then
				stages_one stages "$d" "$r"
				stages_one constant "$d" "$r"
			else
				stages_one constant "$d" "$r"
				stages_one stages "$d" "$r"
			fi
		done
	done
	printf '\n| responses | constant -c %d: µs/request | stages (256 → %d, 192 parked): µs/request | stages ÷ constant |\n| --- | ---: | ---: | ---: |\n' "$CONNS" "$CONNS"
	verdict=ok ratios=
	for d in 0 100ms; do
		c=$(awk -v d="$d" '$1 == "constant" && $2 == d { print $4 }' "$TMPD/stages.txt" | median)
		st=$(awk -v d="$d" '$1 == "stages" && $2 == d { print $4 }' "$TMPD/stages.txt" | median)
		name=fast
		[ "$d" = 0 ] || name="$d"
		ratio=$(awk -v a="$st" -v b="$c" 'BEGIN { print a / b }')
		printf '| %s | %.2f | %.2f | %.2f |\n' "$name" "$c" "$st" "$ratio"
		ratios="$ratios${ratios:+, }$name $(printf '%.2f' "$ratio")"
		awk -v r="$ratio" -v g="$STAGES_GOAL" 'BEGIN { exit !(r <= g) }' || verdict=FAIL
	done
	printf '\nstages ÷ constant: %s (limit %s): %s\n' "$ratios" "$STAGES_GOAL" "$verdict"
	[ "$verdict" = ok ] || exit 1
	exit 0
fi

note "scenario $SCENARIO vs plain runs, and $GRPC_SCENARIO: -c $CONNS, ${SECS}s, $ROUNDS rounds, engine $ENGINE, server on CPU $SERVER_CPU, hail on CPU $CLIENT_CPU"
note "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
KINDS=(plain scenario post grpc grpcmux hailgrpc)
for r in $(seq 1 "$ROUNDS"); do
	for i in "${!KINDS[@]}"; do
		one "${KINDS[$(((r - 1 + i) % ${#KINDS[@]}))]}" "$r"
	done
done

col() { awk -v k="$1" -v c="$2" '$1 == k { print $c }' "$TMPD/runs.txt" | median; }
engine_used=$(sed -n 's/.*"engine": *"\([a-z0-9]*\)".*/\1/p' "$TMPD/scenario-1.json" | head -n 1)
printf '\n| run (medians of %d) | requests/s | hail µs/request | server µs/request |\n| --- | ---: | ---: | ---: |\n' "$ROUNDS"
for k in plain post scenario grpc grpcmux hailgrpc; do
	case $k in
	plain) name="plain GET $PLAIN_PATH" ;;
	post) name="plain POST /items (fixed body)" ;;
	grpc) name="vm-lifecycle-grpc scenario (h2, -c $CONNS, one call per connection)" ;;
	grpcmux) name="vm-lifecycle-grpc scenario (h2, -c $((CONNS / GRPC_STREAMS)) -p $GRPC_STREAMS)" ;;
	hailgrpc) name="hail grpc Items/Create (fixed data)" ;;
	*) name="vm-lifecycle scenario" ;;
	esac
	printf '| %s | %.0f | %.2f | %.2f |\n' "$name" "$(col $k 3)" "$(col $k 5)" "$(col $k 6)"
done
ratio=$(awk -v a="$(col scenario 3)" -v b="$(col plain 3)" 'BEGIN { printf "%.2f", a / b }')
ratio2=$(awk -v a="$(col scenario 3)" -v b="$(col post 3)" 'BEGIN { printf "%.2f", a / b }')
printf '\nscenario / plain GET = %s (goal ≥ 0.80); scenario / plain POST = %s; engine %s, -c %d, %ds runs\n' \
	"$ratio" "$ratio2" "$engine_used" "$CONNS" "$SECS"
awk -v r="$ratio" 'BEGIN { exit !(r >= 0.8) }' || note "below the 0.8 goal"
# CPU per call: the median over rounds of each round's gRPC ÷ REST (and ÷ hail grpc) ratio.
ratios() { # ratios KIND BASE: one KIND÷BASE hail µs/request ratio per round
	awk -v k="$1" -v b="$2" '$1 == k { a[$2] = $5 } $1 == b { c[$2] = $5 } END { for (r in a) if (c[r] > 0) print a[r] / c[r] }' "$TMPD/runs.txt"
}
g=$(ratios grpc scenario | median)
m=$(ratios grpcmux scenario | median)
h=$(ratios grpc hailgrpc | median)
verdict=ok
awk -v r="$m" -v l="$GRPC_GOAL" 'BEGIN { exit !(r <= l) }' || verdict="above the $GRPC_GOAL goal"
printf 'hail CPU per call, medians of per-round ratios: gRPC scenario -p %d ÷ REST scenario = %.2f (goal ≤ %s: %s); one call per connection ÷ REST = %.2f; gRPC scenario ÷ hail grpc = %.2f; load average after: %s\n' \
	"$GRPC_STREAMS" "$m" "$GRPC_GOAL" "$verdict" "$g" "$h" "$(cut -d' ' -f1-3 /proc/loadavg)"
