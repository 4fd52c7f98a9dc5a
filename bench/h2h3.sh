#!/usr/bin/env bash
# bench/h2h3.sh: hail's HTTP/2 and HTTP/3 against its own HTTP/1.1 and against h2load.
#
# One private nginx (one worker pinned to CPU $SERVER_CPU) listens twice: HTTP/1.1 and h2c with prior
# knowledge (`listen ... http2` without ssl), both answering "hello world\n". The clients run pinned
# to CPU $CLIENT_CPU, round by round in turn, $SECS seconds each, with the same number of requests in
# flight ($INFLIGHT = c × p):
#   hail-h1   hail -c $INFLIGHT                      (HTTP/1.1, engine auto)
#   hail-h2   hail -c $H2C -p $((INFLIGHT/H2C)) --http2  (h2c, the h2 engine)
#   h2load    h2load -c $H2C -m $((INFLIGHT/H2C))      (nghttp2's h2 benchmark, Debian nghttp2-client)
# and for HTTP/3, against the in-repo quic-go server (`hail serve --h3`, pinned to $SERVER_CPU):
#   hail-h3   hail -c $H2C -p $((INFLIGHT/H2C)) --http-version 3
# Reported per tool: median requests/s and, for hail, its own CPU per request
# (hail.generator.cpu_per_request_us). The check: hail-h2's CPU per request is at most $LIMIT× hail-h1's.
#
#   bash bench/h2h3.sh                    # 5 s runs, 3 rounds
#   SECS=2 ROUNDS=1 bash bench/h2h3.sh    # a quick trial
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

SECS=${SECS:-5}
ROUNDS=${ROUNDS:-3}
INFLIGHT=${INFLIGHT:-64}
H2C=${H2C:-4}
LIMIT=${LIMIT:-2}
positive_ints SECS ROUNDS INFLIGHT H2C
streams_per_conn INFLIGHT H2C

on_exit() { nginx_stop; }
bench_tmp h2h3

have taskset || die "taskset is needed"
apt_ensure nginx nginx || die "nginx is needed"
apt_ensure nghttp2-client h2load || note "no h2load: its rows are skipped"
HAIL="$TMPD/hail"
build_hail "$HAIL"
raise_nofile 65536

# ---- servers -------------------------------------------------------------------------------------
P2=$(free_port) || die "no free port"
nginx_start "$TMPD/ngx" "$INFLIGHT" "$P2"
P1=$PORT
P3=$(free_port) || die "no free port"
H3CA="$TMPD/h3ca.pem"
serve_start "$HAIL" --h3 "127.0.0.1:$P3"
wait_log "$TMPD/serve.log" "HTTP/3 on udp" || die "hail serve --h3 did not start: $(cat "$TMPD/serve.log")"
cp "$(sed -n 's/.*--cacert \([^ ]*\) .*/\1/p' "$TMPD/serve.log")" "$H3CA"
note "nginx on 127.0.0.1:$P1 (HTTP/1.1) and :$P2 (h2c); hail serve --h3 on udp :$P3; servers on CPU $SERVER_CPU, clients on CPU $CLIENT_CPU"

# ---- runs ----------------------------------------------------------------------------------------
CSV="$TMPD/runs.csv"
echo "round,tool,rps,cpu_us_per_req,errors" >"$CSV"

hail_row() { # hail_row ROUND TOOL ARGS...
	local round=$1 tool=$2 out="$TMPD/r$1-$2.json"
	shift 2
	taskset -c "$CLIENT_CPU" "$HAIL" --no-tui -z "${SECS}s" -j -o "$out" "$@" || {
		note "$tool failed"
		return 0
	}
	python3 - "$out" "$round" "$tool" >>"$CSV" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
h = d["hail"]
errs = sum(v for k, v in d["errorDistribution"].items() if k != "aborted due to deadline")
print(f'{sys.argv[2]},{sys.argv[3]},{d["summary"]["requestsPerSec"]:.0f},{h["generator"]["cpu_per_request_us"]:.1f},{errs}')
PY
}

h2load_row() {
	local round=$1 out="$TMPD/r$1-h2load.txt"
	have h2load || return 0
	taskset -c "$CLIENT_CPU" h2load -D "$SECS" -c "$H2C" -m "$STREAMS" -t 1 "http://127.0.0.1:$P2/" >"$out" 2>&1 || true
	awk -v r="$round" '/finished in/ { gsub(",", "", $4); rps = $4 } /^requests:/ { err = $12 + $14 }
		END { printf "%s,h2load,%.0f,,%d\n", r, rps, err }' "$out" >>"$CSV"
}

for round in $(seq 1 "$ROUNDS"); do
	note "round $round/$ROUNDS"
	hail_row "$round" hail-h1 -c "$INFLIGHT" "http://127.0.0.1:$P1/"
	hail_row "$round" hail-h2 -c "$H2C" -p "$STREAMS" --http2 "http://127.0.0.1:$P2/"
	h2load_row "$round"
	hail_row "$round" hail-h3 -c "$H2C" -p "$STREAMS" --http-version 3 --cacert "$H3CA" "https://127.0.0.1:$P3/"
done

# ---- summary -------------------------------------------------------------------------------------
echo "h2/h3 bench: $INFLIGHT requests in flight (h2/h3: $H2C connections x $STREAMS streams), $SECS s runs, $ROUNDS round(s), medians"
python3 "$BENCH_DIR/summary.py" "$CSV" req/s 'cpu us/req' hail-h1,hail-h2,h2load,hail-h3 \
	--check hail-h2 hail-h1 "$LIMIT" 'hail h2 / h1 CPU per request'
if [ -n "${OUT:-}" ]; then cp "$CSV" "$OUT"; note "runs written to $OUT"; fi
