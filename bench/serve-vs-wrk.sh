#!/usr/bin/env bash
# bench/serve-vs-wrk.sh: does `hail serve` keep up with wrk on one core, as nginx does?
#
# `hail serve` and a private nginx (one worker) both run pinned to CPU $SERVER_CPU (1); wrk -t1 runs
# pinned to CPU $CLIENT_CPU (0) against each in turn, $ROUNDS rounds with the order alternating. Prints
# wrk's requests/s for each server (median across rounds) and each server's CPU µs per request (from
# /proc/PID/stat). With one wrk thread the client, not the server, should be the limit: hail serve's
# number should then be close to nginx's.
#
#   bash bench/serve-vs-wrk.sh                 # -c 64, 5 s, 3 rounds
#   SECS=2 ROUNDS=1 bash bench/serve-vs-wrk.sh
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

CONNS=${CONNS:-64}
SECS=${SECS:-5}
ROUNDS=${ROUNDS:-3}
positive_ints CONNS SECS ROUNDS

TMPD=$(mktemp -d "${TMPDIR:-/tmp}/hail-serve-bench.XXXXXX")
HAIL_PID=
CHILD_PID=
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [ -n "$CHILD_PID" ] && kill -0 "$CHILD_PID" 2>/dev/null; then
		kill -TERM "$CHILD_PID" 2>/dev/null || true
		wait "$CHILD_PID" 2>/dev/null || true
	fi
	if [ -n "$HAIL_PID" ] && kill -0 "$HAIL_PID" 2>/dev/null; then
		kill -TERM "$HAIL_PID" 2>/dev/null || true
		sleep 0.2
		kill -KILL "$HAIL_PID" 2>/dev/null || true
		wait "$HAIL_PID" 2>/dev/null || true
	fi
	nginx_stop
	if [ "${KEEP_TMP:-0}" = 1 ]; then note "kept $TMPD"; else rm -rf "$TMPD"; fi
	exit "$rc"
}
set_traps

have taskset || die "taskset is needed"
apt_ensure nginx nginx || die "nginx is needed"
apt_ensure wrk wrk || die "wrk is needed"
build_hail "$TMPD/hail"
raise_nofile $((CONNS * 2 + 1024))

nginx_start "$TMPD/nginx" "$CONNS"
NGINX_PORT=$PORT
NGINX_WORKER=$(cat "/proc/$NGINX_PID/task/$NGINX_PID/children" 2>/dev/null || ps -o pid= --ppid "$NGINX_PID")
NGINX_WORKER=$(echo "$NGINX_WORKER" | awk '{ print $1 }')
[ -n "$NGINX_WORKER" ] || die "cannot find nginx's worker process"

HAIL_PORT=$(free_port) || die "no free port"
taskset -c "$SERVER_CPU" "$TMPD/hail" serve --addr "127.0.0.1:$HAIL_PORT" </dev/null >"$TMPD/serve.log" 2>&1 &
HAIL_PID=$!
for _ in $(seq 1 100); do
	if grep -q 'listening on' "$TMPD/serve.log" 2>/dev/null; then break; fi
	kill -0 "$HAIL_PID" 2>/dev/null || die "hail serve exited: $(cat "$TMPD/serve.log")"
	sleep 0.05
done
grep -q 'listening on' "$TMPD/serve.log" || die "hail serve did not start: $(cat "$TMPD/serve.log")"
note "hail serve (pid $HAIL_PID) on 127.0.0.1:$HAIL_PORT, CPU $SERVER_CPU"

TICK=$(getconf CLK_TCK)
cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; } # utime + stime, all threads

# one SERVER ROUND: wrk against SERVER; prints "rps requests server_cpu_us_per_req errors"
RESULTS=$TMPD/results.txt
: >"$RESULTS"
one() {
	local server=$1 round=$2 port pid t0 t1 out rps n errs cpu
	case $server in
	hail-serve) port=$HAIL_PORT pid=$HAIL_PID ;;
	nginx) port=$NGINX_PORT pid=$NGINX_WORKER ;;
	esac
	out=$TMPD/wrk-$server-$round.txt
	t0=$(cpu_ticks "$pid")
	timeout -k 5 $((SECS * 3 + 30)) taskset -c "$CLIENT_CPU" wrk -t1 -c "$CONNS" -d "${SECS}s" "http://127.0.0.1:$port/" </dev/null >"$out" 2>&1 &
	CHILD_PID=$!
	wait "$CHILD_PID" || note "wrk against $server exited $?: $(tail -n 2 "$out" | tr '\n' ' ')"
	CHILD_PID=
	sleep 0.2 # let the server finish with the closed connections
	t1=$(cpu_ticks "$pid")
	rps=$(awk '/^Requests\/sec:/ { print $2 }' "$out")
	n=$(awk '/ requests in / { print $1; exit }' "$out")
	errs=$(awk '/Socket errors:/ { gsub(/[^0-9 ]/, " "); s = 0; for (i = 1; i <= NF; i++) s += $i; e += s } /Non-2xx or 3xx/ { e += $NF } END { print e + 0 }' "$out")
	cpu=$(awk -v d=$((t1 - t0)) -v hz="$TICK" -v n="${n:-0}" 'BEGIN { if (n > 0) printf "%.2f", d / hz * 1e6 / n; else print "" }')
	echo "$server $round ${rps:-0} ${n:-0} ${cpu:-} $errs" >>"$RESULTS"
	note "round $round: $server ${rps:-?} requests/s (${n:-?} requests, server CPU ${cpu:-?} µs/req, $errs errors)"
}

for ((round = 1; round <= ROUNDS; round++)); do
	if ((round % 2)); then order="hail-serve nginx"; else order="nginx hail-serve"; fi
	for s in $order; do one "$s" "$round"; done
done

echo "## hail serve vs nginx under wrk -t1 -c $CONNS -d ${SECS}s, $ROUNDS round(s), medians"
echo
echo "Server on CPU $SERVER_CPU (nginx: 1 worker), wrk on CPU $CLIENT_CPU; $(date -Is), $(uname -r)."
echo
awk '
function median(s, a, n, i, j, t) {
	n = split(s, a, " ")
	if (n == 0) return ""
	for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
	return (n % 2) ? a[(n + 1) / 2] + 0 : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ rps[$1] = rps[$1] " " $3; if ($5 != "") cpu[$1] = cpu[$1] " " $5; err[$1] += $6 }
END {
	print "| server | requests/s | server CPU µs/req | wrk errors (all rounds) |"
	print "| --- | ---: | ---: | ---: |"
	split("hail-serve nginx", order, " ")
	for (k = 1; k <= 2; k++) { s = order[k]; printf "| %s | %.0f | %s | %d |\n", s, median(rps[s]), (cpu[s] == "" ? "–" : sprintf("%.2f", median(cpu[s]))), err[s] }
	h = median(rps["hail-serve"]); g = median(rps["nginx"])
	if (g > 0) printf "\nhail serve / nginx requests/s: %.3f\n", h / g
}' "$RESULTS"
