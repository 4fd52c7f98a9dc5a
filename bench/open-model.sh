#!/usr/bin/env bash
# bench/open-model.sh: what does a constant request rate cost the generator?
#
# `hail serve` runs pinned to CPU $SERVER_CPU (1); each client runs pinned to CPU $CLIENT_CPU (0) and
# sends $RATE requests/s for $SECS s over $CONNS connections, open model: hail --engine uring,
# hail --engine net and vegeta (the open-model tool hail's users come from), alternating round by
# round, $ROUNDS rounds. CPU per request is user + system time (GNU time) over the requests the tool
# completed; the table also has the rate reached and each tool's own latency p50/p99, which shows
# when a client could not keep up (its queue, not the server, makes the latency).
#
#   bash bench/open-model.sh                     # 10,000 req/s, -c 64, 5 s, 3 rounds
#   RATE=20000 SECS=3 ROUNDS=1 bash bench/open-model.sh
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

RATE=${RATE:-10000}
CONNS=${CONNS:-64}
SECS=${SECS:-5}
ROUNDS=${ROUNDS:-3}
VEGETA_MOD=github.com/tsenart/vegeta/v12@v12.12.0
positive_ints RATE CONNS SECS ROUNDS

bench_tmp open-bench

have taskset || die "taskset is needed"
have python3 || die "python3 is needed for the table"
apt_ensure time /usr/bin/time || die "GNU time is needed"
HAIL=$TMPD/hail
build_hail "$HAIL"
VEGETA=$(go_tool vegeta "$VEGETA_MOD") || die "cannot install vegeta"
raise_nofile $((CONNS * 2 + 1024))
serve_start "$HAIL"
URL="http://127.0.0.1:$PORT/"
note "hail serve on 127.0.0.1:$PORT (CPU $SERVER_CPU); clients on CPU $CLIENT_CPU at $RATE req/s, -c $CONNS, ${SECS}s, $ROUNDS round(s)"

# one TOOL ROUND: appends "tool round cpu_s requests rate p50_ms p99_ms" to $TMPD/rows.
one() {
	local tool=$1 r=$2 out="$TMPD/$1-$2" cpu
	case $tool in
	hail-*)
		/usr/bin/time -f '%U %S' -o "$out.time" taskset -c "$CLIENT_CPU" "$HAIL" -z "${SECS}s" -q "$RATE" -c "$CONNS" \
			--engine "${tool#hail-}" --no-tui -j -o "$out.json" "$URL"
		;;
	vegeta)
		echo "GET $URL" | /usr/bin/time -f '%U %S' -o "$out.time" taskset -c "$CLIENT_CPU" "$VEGETA" attack \
			-rate "$RATE" -duration "${SECS}s" -connections "$CONNS" -max-connections "$CONNS" -workers "$CONNS" >"$out.bin"
		"$VEGETA" report -type json "$out.bin" >"$out.json"
		;;
	esac
	cpu=$(awk '{ print $1 + $2 }' "$out.time")
	python3 - "$tool" "$r" "$cpu" "$out.json" >>"$TMPD/rows" <<'EOF'
import json, sys
tool, r, cpu, path = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
d = json.load(open(path))
if tool.startswith('hail'):
    n = d['hail']['counts']['responses']
    rate = d['summary']['requestsPerSec']
    p50, p99 = d['latencyPercentiles']['p50'] * 1e3, d['latencyPercentiles']['p99'] * 1e3
else:  # vegeta's report: latencies in ns
    n = round(d['requests'] * d['success'])
    rate = d['throughput']
    p50, p99 = d['latencies']['50th'] / 1e6, d['latencies']['99th'] / 1e6
print(tool, r, cpu, n, rate, p50, p99)
EOF
	tail -n 1 "$TMPD/rows" | awk '{ printf "bench: round %s %s: %.2f s CPU, %d responses, %.0f/s, p50 %.2f ms, p99 %.2f ms\n", $2, $1, $3, $4, $5, $6, $7 }' >&2
}

tools=(hail-uring hail-net vegeta)
: >"$TMPD/rows"
for r in $(seq 1 "$ROUNDS"); do
	for i in "${!tools[@]}"; do
		one "${tools[$(((i + r) % ${#tools[@]}))]}" "$r"
	done
done

python3 - "$TMPD/rows" "$RATE" "$CONNS" "$SECS" "$ROUNDS" <<'EOF'
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
rate, conns, secs, rounds = sys.argv[2:6]
print(f"\n## open model: {rate} requests/s, -c {conns}, {secs} s runs, {rounds} rounds, medians; client on one core\n")
print("| client | CPU µs/request | rate reached | latency p50 | latency p99 | ÷ hail-uring CPU |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
cpu = {}
for t in ("hail-uring", "hail-net", "vegeta"):
    rs = [r for r in rows if r[0] == t]
    cpu[t] = st.median(float(r[2]) / max(int(r[3]), 1) * 1e6 for r in rs)
for t in ("hail-uring", "hail-net", "vegeta"):
    rs = [r for r in rows if r[0] == t]
    med = lambda k: st.median(float(r[k]) for r in rs)
    print(f"| {t} | {cpu[t]:.1f} | {med(4):,.0f}/s | {med(5):.2f} ms | {med(6):.2f} ms | {cpu[t] / cpu['hail-uring']:.2f} |")
EOF
