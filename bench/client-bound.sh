#!/usr/bin/env bash
# bench/client-bound.sh: requests/s when the generator, not the server, is the limit.
#
# `hail serve` runs unpinned (its goroutines may use both cores), each client is pinned to CPU
# $CLIENT_CPU (0): the client has one core, the server more than one, so the client's efficiency sets
# the rate. hail uring, hail net and wrk (-t1) alternate round by round, -c $CONNS, $SECS s per run,
# $ROUNDS rounds; the table has medians of requests/s (from each tool's own report) and hail's own
# CPU µs per request.
#
#   bash bench/client-bound.sh               # -c 64, 5 s, 3 rounds
#   SECS=2 ROUNDS=1 bash bench/client-bound.sh
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"
SERVER_CPU="0-$(($(nproc) - 1))" # the server may use every core
CONNS=${CONNS:-64}
SECS=${SECS:-5}
ROUNDS=${ROUNDS:-3}
positive_ints CONNS SECS ROUNDS
bench_tmp client-bound
tmp=$TMPD
have taskset || die "taskset is needed"
have python3 || die "python3 is needed for the table"
apt_ensure wrk wrk || die "wrk is needed"
hail=$TMPD/hail
build_hail "$hail"
serve_start "$hail"
port=$PORT
url="http://127.0.0.1:$port/"
tools=(hail-uring hail-net wrk)
: >"$tmp/rows"
for r in $(seq 1 "$ROUNDS"); do
	for i in "${!tools[@]}"; do
		t=${tools[$(((i + r) % ${#tools[@]}))]}
		case $t in
		hail-*)
			taskset -c "$CLIENT_CPU" "$hail" -z "${SECS}s" -c "$CONNS" --engine "${t#hail-}" --no-tui -j -o "$tmp/r.json" "$url"
			python3 -c "import json,sys; d=json.load(open('$tmp/r.json')); print('$t', d['summary']['requestsPerSec'], d['hail']['generator']['cpu_per_request_us'])" >>"$tmp/rows"
			;;
		wrk)
			rps=$(taskset -c "$CLIENT_CPU" wrk -t1 -c "$CONNS" -d "${SECS}s" "$url" | awk '/Requests\/sec/ {print $2}')
			echo "wrk $rps -" >>"$tmp/rows"
			;;
		esac
		tail -1 "$tmp/rows" | sed "s/^/bench: round $r: /" >&2
	done
done
python3 - "$tmp/rows" "$CONNS" "$SECS" "$ROUNDS" <<'PY'
import sys, statistics
rows = [l.split() for l in open(sys.argv[1])]
print(f"## client-bound: one client core, hail serve unpinned, -c {sys.argv[2]}, {sys.argv[3]} s runs, {sys.argv[4]} rounds, medians\n")
print("| client | requests/s | client CPU µs/req (hail's own) |\n| --- | ---: | ---: |")
for t in ("hail-uring", "hail-net", "wrk"):
    rps = [float(r[1]) for r in rows if r[0] == t]
    cpu = [float(r[2]) for r in rows if r[0] == t and r[2] != "-"]
    print(f"| {t} | {statistics.median(rps):,.0f} | {statistics.median(cpu):.2f} |" if cpu else f"| {t} | {statistics.median(rps):,.0f} | – |")
PY
