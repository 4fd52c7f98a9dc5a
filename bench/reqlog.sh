#!/usr/bin/env bash
# bench/reqlog.sh: what does the per-request log (--db-url) cost?
#
# `hail serve` runs pinned to CPU $SERVER_CPU (1); hail runs pinned to CPU $CLIENT_CPU (0) against it,
# once with --db-url FILE (every request written to SQLite) and once without, $ROUNDS rounds with the
# order alternating. The CPU is the whole hail process's user + system time (bash's `time`, so the
# SQLite writer's final flush and close count too), divided by the requests the JSON report counts.
# Logging every request must cost at most 1.3 × the CPU per request of a run without it.
#
#   bash bench/reqlog.sh                       # -c 32, 10 s, 3 rounds
#   SECS=3 ROUNDS=1 bash bench/reqlog.sh       # a quick trial
#   MODE=-q RATE=20000 bash bench/reqlog.sh    # open model at a fixed rate instead of closed
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

CONNS=${CONNS:-32}
SECS=${SECS:-10}
ROUNDS=${ROUNDS:-3}
TARGET_PATH=${TARGET_PATH:-/}
LIMIT=${LIMIT:-1.3}
ENGINE=${ENGINE:-auto}
RATE=${RATE:-}
positive_ints CONNS SECS ROUNDS

bench_tmp reqlog-bench

have taskset || die "taskset is needed"
HAIL="$TMPD/hail"
build_hail "$HAIL"

# The target: hail serve on its own core.
serve_start "$HAIL"
URL="http://127.0.0.1:$PORT$TARGET_PATH"
LOAD=(-z "${SECS}s" -c "$CONNS" --engine "$ENGINE")
if [ -n "$RATE" ]; then LOAD+=(-q "$RATE"); fi
note "hail serve on 127.0.0.1:$PORT (CPU $SERVER_CPU); hail on CPU $CLIENT_CPU, ${LOAD[*]}, $ROUNDS round(s)"

# json_num FILE KEY: the first number under "KEY" in a JSON report.
json_num() {
	local v
	v=$(grep -o "\"$2\": *[0-9.eE+-]*" "$1" | head -n 1 | sed 's/.*: *//')
	[ -n "$v" ] || die "no $2 in $1"
	printf '%s\n' "$v"
}

# run_one MODE ROUND: one run; prints "CPU-µs-per-request requests requests-per-second rows".
run_one() {
	local mode=$1 r=$2 out="$TMPD/$1-$2.json" db="$TMPD/$1-$2.db" extra=() t reqs rows=-
	if [ "$mode" = db ]; then extra=(--db-url "$db"); fi
	t=$({
		TIMEFORMAT='%U %S'
		time timeout $((SECS + 120)) taskset -c "$CLIENT_CPU" "$HAIL" --no-tui "${LOAD[@]}" "${extra[@]}" -o "$out" -j "$URL" \
			</dev/null >/dev/null 2>"$TMPD/$mode-$r.err"
	} 2>&1) || die "the $mode run failed: $(cat "$TMPD/$mode-$r.err")"
	reqs=$(json_num "$out" requests)
	if [ "$mode" = db ]; then
		rows=$(stat -c %s "$db")
	fi
	awk -v t="$t" -v n="$reqs" -v rps="$(json_num "$out" requestsPerSec)" -v rows="$rows" \
		'BEGIN { split(t, a, " "); printf "%.3f %d %.0f %s\n", (a[1] + a[2]) * 1e6 / n, n, rps, rows }'
	rm -f "$db" "$db-wal" "$db-shm"
}

DB_VALUES=()
PLAIN_VALUES=()
printf '%-6s %-6s %16s %10s %12s %12s\n' round mode 'cpu µs/request' requests 'requests/s' 'db bytes'
for r in $(seq 1 "$ROUNDS"); do
	if [ $((r % 2)) = 1 ]; then order="db plain"; else order="plain db"; fi
	for mode in $order; do
		read -r v n rps rows < <(run_one "$mode" "$r")
		[ -n "${v:-}" ] || die "round $r ($mode) gave no result"
		if [ "$mode" = db ]; then DB_VALUES+=("$v"); else PLAIN_VALUES+=("$v"); fi
		printf '%-6s %-6s %16.2f %10d %12.0f %12s\n' "$r" "$mode" "$v" "$n" "$rps" "$rows"
	done
done
db=$(printf '%s\n' "${DB_VALUES[@]}" | median)
plain=$(printf '%s\n' "${PLAIN_VALUES[@]}" | median)
ratio=$(awk -v a="$db" -v b="$plain" 'BEGIN { printf "%.3f", a / b }')
printf '\nmedian cpu µs/request (whole process): --db-url %s, without %s; ratio %s (limit %s)\n' "$db" "$plain" "$ratio" "$LIMIT"
if awk -v r="$ratio" -v l="$LIMIT" 'BEGIN { exit !(r <= l) }'; then
	echo "PASS: logging every request costs at most ${LIMIT}× the CPU per request"
else
	echo "FAIL: logging every request costs more than ${LIMIT}× the CPU per request"
	exit 1
fi
