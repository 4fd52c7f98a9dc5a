#!/usr/bin/env bash
# bench/soak.sh: a long open-model run, watching hail's memory and the per-second series.
#
# `hail serve` runs pinned to CPU $SERVER_CPU (1); hail runs pinned to CPU $CLIENT_CPU (0) against it
# for $DUR at $RATE requests/s over $CONNS connections with --no-tui and a JSON report (-o). While it
# runs, hail's resident memory (VmRSS in /proc/PID/status) is sampled every $EVERY seconds into
# $OUT/rss.tsv. At the end it prints: requests, success rate, per-second entries and gaps, latency
# p50/p99/p99.9/max, schedule lag p99, the generator verdict, and RSS after the first minute, at the
# end, its maximum, and the growth in percent. Files go to $OUT (bench/out/soak-DATE). Exit status 1 when the series has a gap, a request
# failed, or RSS grew more than $RSS_LIMIT percent after the first minute (a quarter of a short run).
#
#   bash bench/soak.sh                         # one hour at 10,000 requests/s, -c 64
#   DUR=2m bash bench/soak.sh                  # a short trial
#   ENGINE=net DUR=1h bash bench/soak.sh       # the net engine
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

DUR=${DUR:-1h}
RATE=${RATE:-10000}
CONNS=${CONNS:-64}
EVERY=${EVERY:-15}
ENGINE=${ENGINE:-auto}
RSS_LIMIT=${RSS_LIMIT:-10}
positive_ints RATE CONNS EVERY RSS_LIMIT
case $DUR in
'' | *[!0-9hms]*) die "DUR must be a duration like 1h, 45m or 90s (got '$DUR')" ;;
esac

bench_tmp soak
OUT=${OUT:-$REPO/bench/out/soak-$(date +%Y%m%d-%H%M%S)} # report, hail.log, rss.tsv
mkdir -p "$OUT"
HAIL_PID=
on_exit() { # an interrupted soak still writes its report: hail gets SIGINT and is waited for
	if [ -n "$HAIL_PID" ] && kill -0 "$HAIL_PID" 2>/dev/null; then
		kill -INT "$HAIL_PID" 2>/dev/null || true
		wait "$HAIL_PID" 2>/dev/null || true
	fi
	note "results in $OUT"
}

have taskset || die "taskset is needed"
have python3 || die "python3 is needed to summarise the report"
HAIL="$TMPD/hail"
build_hail "$HAIL"
serve_start "$HAIL"

note "soak: $DUR at $RATE req/s, -c $CONNS, engine $ENGINE; hail on CPU $CLIENT_CPU, hail serve on CPU $SERVER_CPU"
taskset -c "$CLIENT_CPU" "$HAIL" -z "$DUR" -q "$RATE" -c "$CONNS" --engine "$ENGINE" --no-tui -j \
	-o "$OUT/soak.json" "http://127.0.0.1:$PORT/" >"$OUT/hail.log" 2>&1 &
HAIL_PID=$!
printf 'seconds\trss_kib\n' >"$OUT/rss.tsv"
start=$(date +%s)
while kill -0 "$HAIL_PID" 2>/dev/null; do
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$HAIL_PID/status" 2>/dev/null || true)
	[ -n "$rss" ] && printf '%d\t%s\n' "$(($(date +%s) - start))" "$rss" >>"$OUT/rss.tsv"
	sleep "$EVERY" & wait $! || true
done
rc=0
wait "$HAIL_PID" || rc=$?
HAIL_PID=
[ "$rc" = 0 ] || die "hail exited with status $rc: $(tail -n 3 "$OUT/hail.log")"

python3 - "$OUT/soak.json" "$OUT/rss.tsv" "$RSS_LIMIT" <<'EOF'
import json, sys
rep = json.load(open(sys.argv[1]))
limit = float(sys.argv[3])
rss = [tuple(map(int, l.split('\t'))) for l in open(sys.argv[2]).read().splitlines()[1:] if l.strip()]
h, s, lat = rep['hail'], rep['summary'], rep['latencyPercentiles']
series = h['series']
ts = [e['t'] for e in series]
gaps = sum(1 for a, b in zip(ts, ts[1:]) if b != a + 1)
empty = sum(1 for e in series[:-1] if e['requests'] == 0)
warmup = min(60, rss[-1][0] // 4) if rss else 0  # the first minute, or a quarter of a short run
warm = [k for t, k in rss if t >= warmup] or [k for _, k in rss]
first, last, peak = warm[0], warm[-1], max(warm)
growth = 100.0 * (peak - first) / first
ms = lambda x: '%.2f ms' % (x * 1e3)
print('requests        %d (errors %d, success rate %.6f)' % (h['counts']['requests'], h['counts']['errors'], s['successRate']))
print('rate            %.1f req/s over %.0f s' % (s['requestsPerSec'], s['total']))
print('series          %d entries, %d gaps, %d seconds without a response' % (len(series), gaps, empty))
print('latency         p50 %s  p99 %s  p99.9 %s  max %s' % (ms(lat['p50']), ms(lat['p99']), ms(lat['p99.9']), ms(s['slowest'])))
print('schedule lag    p99 %s  max %s' % (ms(h['schedule_lag']['p99']), ms(h['schedule_lag']['max'])))
print('generator       cpu %.1f%%, %.2f us/request, limited: %s %s' % (100 * h['generator']['cpu_utilization'], h['generator']['cpu_per_request_us'], h['verdict']['generator_limited'], '; '.join(h['verdict']['reasons'])))
print('hail RSS        %.1f MiB after %d s, %.1f MiB at the end, max %.1f MiB (+%.1f%%), %d samples' % (first / 1024, warmup, last / 1024, peak / 1024, growth, len(rss)))
bad = []
if gaps or empty: bad.append('the series has gaps')
if h['counts']['errors']: bad.append('%d requests failed' % h['counts']['errors'])
if growth > limit: bad.append('RSS grew %.1f%% (> %g%%)' % (growth, limit))
if bad:
    print('FAIL: ' + '; '.join(bad)); sys.exit(1)
print('PASS')
EOF
