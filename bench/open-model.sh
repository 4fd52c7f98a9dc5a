#!/usr/bin/env bash
# bench/open-model.sh: the open model's capacity and cost on one core, side by side with wrk2 and vegeta.
#
# A private nginx (one worker) runs pinned to CPU $SERVER_CPU (1); every client runs pinned to CPU
# $CLIENT_CPU (0), over $CONNS connections, for $SECS s, $ROUNDS rounds with the tool order rotating
# each round; tables show medians. Three parts, in one run:
#
#   ceiling  each tool asked for far more than one core can send (-q / -R $ASK): the rate it reaches,
#            next to hail's own closed-model rate (-c $CONNS, no -q) — "the highest rate it sustains";
#   fixed    every tool at $RATE requests/s: client CPU µs per request (GNU time over the requests
#            nginx answered), the rate reached, latency p99, and hail's own lateness p99 — next to the
#            closed model's CPU µs per request;
#   half     hail at half its ceiling: its own lateness p99 (is it on time when it can be?).
#
# wrk2 (giltene/wrk2, -R) is not packaged: build it from its source and give WRK2=/path/to/wrk.
# Nothing of it is part of hail. Without WRK2 its rows are left out (said so).
#
#   WRK2=/tmp/wrk2/wrk bash bench/open-model.sh          # 50,000/s, -c 64, 5 s, 3 rounds
#   WRK2=/tmp/wrk2/wrk RATE=20000 SECS=3 ROUNDS=1 bash bench/open-model.sh
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

RATE=${RATE:-50000}
ASK=${ASK:-1000000}
CONNS=${CONNS:-64}
SECS=${SECS:-5}
ROUNDS=${ROUNDS:-3}
WRK2=${WRK2:-}
PARTS=${PARTS:-"ceiling fixed half"}
VEGETA_MOD=github.com/tsenart/vegeta/v12@v12.12.0
positive_ints RATE ASK CONNS SECS ROUNDS

bench_tmp open-bench
on_exit() { nginx_stop; }

have taskset || die "taskset is needed"
have python3 || die "python3 is needed for the tables"
apt_ensure time /usr/bin/time || die "GNU time is needed"
apt_ensure nginx nginx || die "nginx is needed"
HAIL=$TMPD/hail
build_hail "$HAIL"
VEGETA=$(go_tool vegeta "$VEGETA_MOD") || die "cannot install vegeta"
if [ -n "$WRK2" ] && ! [ -x "$WRK2" ]; then die "WRK2=$WRK2 is not an executable"; fi
[ -n "$WRK2" ] || note "WRK2 not set: wrk2's rows are left out (build giltene/wrk2 and give WRK2=path)"
raise_nofile $((CONNS * 2 + 1024))
nginx_start "$TMPD/nginx" "$CONNS"
URL="http://127.0.0.1:$PORT/"
note "nginx on 127.0.0.1:$PORT (CPU $SERVER_CPU); clients on CPU $CLIENT_CPU, -c $CONNS, ${SECS}s, $ROUNDS round(s)"

# one PART TOOL ROUND RATE: one run; appends "part tool round rate cpu_s answered reached p99_ms own_p99_ms" to rows.
one() {
	local part=$1 tool=$2 r=$3 rate=$4 out="$TMPD/$1-$2-$3" cpu before answered
	nginx_status || die "nginx does not answer"
	before=$NG_REQUESTS
	STATUS_FETCHES=0
	case $tool in
	hail-uring | hail-net)
		/usr/bin/time -f '%U %S' -o "$out.time" taskset -c "$CLIENT_CPU" "$HAIL" -z "${SECS}s" -q "$rate" -c "$CONNS" \
			--engine "${tool#hail-}" --no-tui -j -o "$out.json" "$URL"
		;;
	hail-closed)
		/usr/bin/time -f '%U %S' -o "$out.time" taskset -c "$CLIENT_CPU" "$HAIL" -z "${SECS}s" -c "$CONNS" \
			--engine uring --no-tui -j -o "$out.json" "$URL"
		;;
	wrk2)
		/usr/bin/time -f '%U %S' -o "$out.time" taskset -c "$CLIENT_CPU" "$WRK2" -t1 -c "$CONNS" -d "${SECS}s" -R "$rate" \
			--latency "$URL" >"$out.txt"
		;;
	vegeta)
		echo "GET $URL" | /usr/bin/time -f '%U %S' -o "$out.time" taskset -c "$CLIENT_CPU" "$VEGETA" attack \
			-rate "$rate" -duration "${SECS}s" -connections "$CONNS" -max-connections "$CONNS" -workers "$CONNS" >"$out.bin"
		"$VEGETA" report -type json "$out.bin" >"$out.json"
		;;
	esac
	nginx_wait_idle
	answered=$((NG_REQUESTS - before - STATUS_FETCHES))
	cpu=$(awk '{ print $1 + $2 }' "$out.time")
	python3 - "$part" "$tool" "$r" "$rate" "$cpu" "$answered" "$out" >>"$TMPD/rows" <<'EOF'
import json, re, sys
part, tool, r, rate, cpu, answered, out = sys.argv[1:8]
own = float('nan')
if tool.startswith('hail'):
    d = json.load(open(out + '.json'))
    reached = d['hail']['counts']['sent'] / d['summary']['total']
    p99 = d['latencyPercentiles']['p99'] * 1e3
    if tool != 'hail-closed':
        own = d['hail']['send_delay']['own']['p99'] * 1e3
elif tool == 'wrk2':
    t = open(out + '.txt').read()
    reached = float(re.search(r'Requests/sec:\s*([0-9.]+)', t).group(1))
    m = re.search(r'99\.000%\s+([0-9.]+)(us|ms|s)\b', t)
    p99 = float(m.group(1)) * {'us': 1e-3, 'ms': 1, 's': 1e3}[m.group(2)] if m else float('nan')
else:  # vegeta: latencies in ns
    d = json.load(open(out + '.json'))
    reached, p99 = d['throughput'], d['latencies']['99th'] / 1e6
print(part, tool, r, rate, cpu, answered, reached, p99, own)
EOF
	tail -n 1 "$TMPD/rows" | awk '{ printf "bench: %s round %s %s at %s/s: %.2f s CPU, %d answered, %.0f/s reached, p99 %.2f ms, own lateness p99 %s ms\n", $1, $3, $2, $4, $5, $6, $7, $8, $9 }' >&2
}

# part NAME RATE TOOL...: ROUNDS rounds of the tools, rotating.
part() {
	local name=$1 rate=$2 r i
	shift 2
	local tools=("$@")
	for r in $(seq 1 "$ROUNDS"); do
		for i in "${!tools[@]}"; do
			one "$name" "${tools[$(((i + r) % ${#tools[@]}))]}" "$r" "$rate"
		done
	done
}

with_wrk2() { if [ -n "$WRK2" ]; then echo wrk2; fi; }
: >"$TMPD/rows"
case " $PARTS " in *" ceiling "*)
	# shellcheck disable=SC2046
	part ceiling "$ASK" hail-uring hail-closed $(with_wrk2)
	;;
esac
case " $PARTS " in *" fixed "*)
	# shellcheck disable=SC2046
	part fixed "$RATE" hail-uring hail-net hail-closed vegeta $(with_wrk2)
	;;
esac
case " $PARTS " in *" half "*)
	if grep -q '^ceiling hail-uring ' "$TMPD/rows"; then
		half=$(awk '$1 == "ceiling" && $2 == "hail-uring" { print $7 }' "$TMPD/rows" | median | awk '{ printf "%d", $1 / 2 }')
		part half "$half" hail-uring
	fi
	;;
esac

python3 - "$TMPD/rows" "$RATE" "$ASK" "$CONNS" "$SECS" "$ROUNDS" <<'EOF'
import math, sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
rate, ask, conns, secs, rounds = sys.argv[2:7]
def sel(part, tool): return [r for r in rows if r[0] == part and r[1] == tool]
def med(rs, k): return st.median(float(r[k]) for r in rs)
def cpu_us(rs): return st.median(float(r[4]) / max(int(r[5]), 1) * 1e6 for r in rs)
def fmt(v, f): return '-' if math.isnan(v) else f.format(v)
head = f"-c {conns}, {secs} s runs, {rounds} rounds, medians; nginx on one core, the client on the other"
if any(r[0] == 'ceiling' for r in rows):
    print(f"\n## ceiling: asked for {int(ask):,}/s ({head})\n")
    print("| client | rate reached | CPU µs/request | ÷ hail closed rate |")
    print("| --- | ---: | ---: | ---: |")
    closed = med(sel('ceiling', 'hail-closed'), 6)
    for t in ('hail-uring', 'hail-closed', 'wrk2'):
        rs = sel('ceiling', t)
        if rs:
            name = {'hail-uring': 'hail (open model)', 'hail-closed': 'hail (closed model, no -q)', 'wrk2': 'wrk2 -R'}[t]
            print(f"| {name} | {med(rs, 6):,.0f}/s | {cpu_us(rs):.1f} | {med(rs, 6) / closed:.2f} |")
    if sel('ceiling', 'wrk2'):
        print(f"\nhail open / wrk2 = {med(sel('ceiling', 'hail-uring'), 6) / med(sel('ceiling', 'wrk2'), 6):.2f}")
if any(r[0] == 'fixed' for r in rows):
    print(f"\n## fixed rate: {int(rate):,} requests/s ({head})\n")
    print("| client | CPU µs/request | ÷ hail closed | rate reached | latency p99 | own lateness p99 |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    closed = cpu_us(sel('fixed', 'hail-closed'))
    for t in ('hail-uring', 'hail-net', 'hail-closed', 'wrk2', 'vegeta'):
        rs = sel('fixed', t)
        if not rs:
            continue
        name = {'hail-uring': 'hail uring -q', 'hail-net': 'hail net -q', 'hail-closed': 'hail closed (no -q, full speed)',
                'wrk2': 'wrk2 -R', 'vegeta': 'vegeta'}[t]
        reached = '-' if t == 'hail-closed' else f"{med(rs, 6):,.0f}/s"
        print(f"| {name} | {cpu_us(rs):.1f} | {cpu_us(rs) / closed:.2f} | {reached} | {med(rs, 7):.2f} ms | {fmt(med(rs, 8), '{:.2f} ms')} |")
if any(r[0] == 'half' for r in rows):
    rs = sel('half', 'hail-uring')
    print(f"\n## half the ceiling: hail uring at {int(rs[0][3]):,}/s: own lateness p99 {med(rs, 8):.2f} ms, "
          f"rate reached {med(rs, 6):,.0f}/s, CPU {cpu_us(rs):.1f} µs/request")
EOF
