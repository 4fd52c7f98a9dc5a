#!/usr/bin/env bash
# bench/tui-overhead.sh: does the live view slow the engine down?
#
# `hail serve` runs pinned to CPU $SERVER_CPU (1); hail runs pinned to CPU $CLIENT_CPU (0) against it,
# once with the live view (inside a detached tmux session, $TUI_W×$TUI_H, colors on) and once with
# --no-tui, $ROUNDS rounds with the order alternating. Both write their JSON report with -o FILE -j
# (with the live view on, the view still shows and the report goes to the file). Compares hail's own
# CPU per request, hail.generator.cpu_per_request_us: the view must cost at most 5% (ratio ≤ 1.05).
#
#   bash bench/tui-overhead.sh                    # -c 32, 10 s, 3 rounds
#   SECS=3 ROUNDS=1 bash bench/tui-overhead.sh    # a quick trial
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

CONNS=${CONNS:-32}
SECS=${SECS:-10}
ROUNDS=${ROUNDS:-3}
FPS=${FPS:-16}
TUI_W=${TUI_W:-120}
TUI_H=${TUI_H:-40}
TARGET_PATH=${TARGET_PATH:-/}
LIMIT=${LIMIT:-1.05}
positive_ints CONNS SECS ROUNDS FPS TUI_W TUI_H

bench_tmp tui-bench
SOCK="$TMPD/tmux.sock" # a private tmux server
on_exit() { tmux -S "$SOCK" kill-server 2>/dev/null || true; }

have taskset || die "taskset is needed"
apt_ensure tmux tmux || die "tmux is needed"
HAIL="$TMPD/hail"
build_hail "$HAIL"

# The target: hail serve on its own core.
serve_start "$HAIL"
URL="http://127.0.0.1:$PORT$TARGET_PATH"
note "hail serve on 127.0.0.1:$PORT (CPU $SERVER_CPU); hail on CPU $CLIENT_CPU, -c $CONNS -z ${SECS}s, $ROUNDS round(s)"

# json_num FILE KEY: the first number under "KEY" in a JSON report.
json_num() {
	local v
	v=$(grep -o "\"$2\": *[0-9.eE+-]*" "$1" | head -n 1 | sed 's/.*: *//')
	[ -n "$v" ] || die "no $2 in $1"
	printf '%s\n' "$v"
}

# cpu_us FILE: "CPU-µs-per-request requests-per-second" from a JSON report
# (hail.generator.cpu_per_request_us and summary.requestsPerSec).
cpu_us() {
	printf '%s %s\n' "$(json_num "$1" cpu_per_request_us)" "$(json_num "$1" requestsPerSec)"
}

# run_tui ROUND: hail with the live view in a detached tmux session.
run_tui() {
	local r=$1 out="$TMPD/tui-$1.json" limit=$((SECS + 90))
	tmux -S "$SOCK" new-session -d -s "run$r" -x "$TUI_W" -y "$TUI_H" \
		"LANG=C.UTF-8 taskset -c $CLIENT_CPU $HAIL -z ${SECS}s -c $CONNS --fps $FPS -o $out -j '$URL' 2>$TMPD/tui-$r.err; echo \$? >$TMPD/tui-$r.rc; tmux -S $SOCK wait-for -S done$r"
	if ! timeout "$limit" tmux -S "$SOCK" wait-for "done$r"; then
		die "the live-view run did not end within ${limit}s"
	fi
	[ "$(cat "$TMPD/tui-$r.rc")" = 0 ] || die "the live-view run failed: $(cat "$TMPD/tui-$r.err")"
	cpu_us "$out"
}

# run_plain ROUND: the same run with --no-tui.
run_plain() {
	local r=$1 out="$TMPD/plain-$1.json"
	timeout $((SECS + 90)) taskset -c "$CLIENT_CPU" "$HAIL" --no-tui -z "${SECS}s" -c "$CONNS" -o "$out" -j "$URL" \
		</dev/null >/dev/null 2>"$TMPD/plain-$r.err" || die "the --no-tui run failed: $(cat "$TMPD/plain-$r.err")"
	cpu_us "$out"
}

TUI_VALUES=()
PLAIN_VALUES=()
printf '%-6s %-8s %16s %14s\n' round mode 'cpu µs/request' 'requests/s'
for r in $(seq 1 "$ROUNDS"); do
	if [ $((r % 2)) = 1 ]; then order="tui plain"; else order="plain tui"; fi
	for mode in $order; do
		if [ "$mode" = tui ]; then
			read -r v rps < <(run_tui "$r")
			TUI_VALUES+=("$v")
		else
			read -r v rps < <(run_plain "$r")
			PLAIN_VALUES+=("$v")
		fi
		[ -n "${v:-}" ] || die "round $r ($mode) gave no result"
		printf '%-6s %-8s %16.2f %14.0f\n' "$r" "$mode" "$v" "$rps"
	done
done
tui=$(printf '%s\n' "${TUI_VALUES[@]}" | median)
plain=$(printf '%s\n' "${PLAIN_VALUES[@]}" | median)
ratio=$(awk -v a="$tui" -v b="$plain" 'BEGIN { printf "%.3f", a / b }')
printf '\nmedian cpu µs/request: live view %s, --no-tui %s; ratio %s (limit %s)\n' "$tui" "$plain" "$ratio" "$LIMIT"
if awk -v r="$ratio" -v l="$LIMIT" 'BEGIN { exit !(r <= l) }'; then
	echo "PASS: the live view costs at most $(awk -v l="$LIMIT" 'BEGIN { printf "%.0f", (l - 1) * 100 }')% CPU per request"
else
	echo "FAIL: the live view costs more than allowed"
	exit 1
fi
