#!/usr/bin/env bash
# bench/grpc.sh: hail grpc against ghz, and against hail's own HTTP/2 (h2c) cost per request.
#
# Servers, pinned to CPU $SERVER_CPU: `hail serve --grpc` (grpc-go's own transport, with reflection)
# for the gRPC rows, and a private nginx (one worker) answering "hello world\n" over h2c for the
# HTTP/2 row. Clients pinned to CPU $CLIENT_CPU, round by round in turn, $SECS seconds each, with the
# same calls in flight ($INFLIGHT) over the same $CONNS connections:
#   hail-grpc  hail grpc --insecure --call $CALL -c $CONNS -p $((INFLIGHT/CONNS))
#   ghz        ghz --insecure --call $CALL -c $INFLIGHT --connections $CONNS   (ghz's -c is workers)
#   hail-h2c   hail --http2 -c $CONNS -p $((INFLIGHT/CONNS)) http://nginx/   (HTTP/2, no gRPC)
# Client CPU (user + system) comes from GNU time for every tool alike, so hail's start (the probe and
# the reflection questions) is in its number as ghz's is in ghz's; calls are each tool's own count.
# ghz is installed with `go install` at a pinned version into a temporary directory, for this
# benchmark only. The checks: hail-grpc's CPU per call is at most $GHZ_LIMIT× ghz's and at most
# $H2C_LIMIT× hail-h2c's CPU per request.
#
#   bash bench/grpc.sh                        # 5 s runs, 3 rounds
#   SECS=2 ROUNDS=1 bash bench/grpc.sh        # a quick trial
#   CALL=hail.v1.Target/Echo DATA='{"payload":"hello"}' bash bench/grpc.sh
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

SECS=${SECS:-5}
ROUNDS=${ROUNDS:-3}
INFLIGHT=${INFLIGHT:-64}
CONNS=${CONNS:-4}
CALL=${CALL:-grpc.health.v1.Health/Check}
DATA=${DATA:-}
GHZ_LIMIT=${GHZ_LIMIT:-0.25}
H2C_LIMIT=${H2C_LIMIT:-1.3}
GHZ_MOD=${GHZ_MOD:-github.com/bojand/ghz/cmd/ghz@v0.120.0}
positive_ints SECS ROUNDS INFLIGHT CONNS
streams_per_conn INFLIGHT CONNS

on_exit() { nginx_stop; }
bench_tmp grpc

have taskset || die "taskset is needed"
apt_ensure time /usr/bin/time || die "GNU time is needed"
HAIL="$TMPD/hail"
build_hail "$HAIL"
GHZ=$(go_tool ghz "$GHZ_MOD") || GHZ=
[ -n "$GHZ" ] || note "no ghz: its rows are skipped"
apt_ensure nginx nginx || note "no nginx: the hail-h2c row is skipped"
raise_nofile 65536

# ---- servers -------------------------------------------------------------------------------------
GP=$(free_port) || die "no free port"
serve_start "$HAIL" --grpc "127.0.0.1:$GP"
wait_log "$TMPD/serve.log" "gRPC on" || die "hail serve --grpc did not start: $(cat "$TMPD/serve.log")"
NP=
if have nginx; then
	NP=$(free_port) || die "no free port"
	nginx_start "$TMPD/ngx" "$CONNS" "$NP"
fi
note "hail serve --grpc on 127.0.0.1:$GP${NP:+, nginx h2c on 127.0.0.1:$NP}; servers on CPU $SERVER_CPU, clients on CPU $CLIENT_CPU"
note "$CALL, $INFLIGHT calls in flight over $CONNS connections, $SECS s runs, $ROUNDS round(s)"

# ---- runs ----------------------------------------------------------------------------------------
CSV="$TMPD/runs.csv"
echo "round,tool,calls,rps,cpu_s,errors" >"$CSV"

# row ROUND TOOL OUT CMD...: run CMD pinned to the client CPU under GNU time and add its CSV row:
# calls (hail: hail.counts.requests; ghz: count), calls/s, CPU seconds and calls not OK (hail's
# aborted at the end of -z excluded).
row() {
	local round=$1 tool=$2 out=$3
	shift 3
	taskset -c "$CLIENT_CPU" /usr/bin/time -f '%U %S' -o "$out.cpu" "$@" >"$out" 2>"$out.err" ||
		note "$tool failed: $(tail -n 2 "$out.err" | tr '\n' ' ')"
	python3 - "$out" "$round" "$tool" >>"$CSV" <<'PY'
import json, sys
out, rnd, tool = sys.argv[1:]
try:
    d = json.load(open(out))
    u, s = map(float, open(out + ".cpu").read().split()[-2:])
except Exception:
    sys.exit(0)
if tool == "ghz":
    calls, rps, ok = d["count"], d["rps"], d.get("statusCodeDistribution", {}).get("OK", 0)
else:
    calls, rps = d["hail"]["counts"]["requests"], d["summary"]["requestsPerSec"]
    # calls in flight at the end of -z are aborted, not failed
    ok = d["statusCodeDistribution"].get("200" if tool == "hail-h2c" else "OK", 0) + d["hail"]["counts"]["aborted"]
print(f"{rnd},{tool},{calls},{rps:.0f},{u + s:.3f},{calls - ok}")
PY
}

DATA_ARGS=()
[ -z "$DATA" ] || DATA_ARGS=(-d "$DATA")

for round in $(seq 1 "$ROUNDS"); do
	note "round $round/$ROUNDS"
	row "$round" hail-grpc "$TMPD/r$round-hail-grpc.json" "$HAIL" grpc --no-tui -j --insecure --call "$CALL" "${DATA_ARGS[@]}" \
		-c "$CONNS" -p "$STREAMS" -z "${SECS}s" "127.0.0.1:$GP"
	[ -z "$GHZ" ] || row "$round" ghz "$TMPD/r$round-ghz.json" "$GHZ" --insecure --call "$CALL" "${DATA_ARGS[@]}" \
		-c "$INFLIGHT" --connections "$CONNS" -z "${SECS}s" -O json "127.0.0.1:$GP"
	[ -z "$NP" ] || row "$round" hail-h2c "$TMPD/r$round-hail-h2c.json" "$HAIL" --no-tui -j --http2 -c "$CONNS" -p "$STREAMS" \
		-z "${SECS}s" "http://127.0.0.1:$NP/"
done

# ---- summary -------------------------------------------------------------------------------------
python3 "$BENCH_DIR/summary.py" "$CSV" calls/s 'cpu us/call' hail-grpc,ghz,hail-h2c \
	--check hail-grpc ghz "$GHZ_LIMIT" 'hail grpc / ghz CPU per call' \
	--check hail-grpc hail-h2c "$H2C_LIMIT" 'hail grpc / hail-h2c CPU per call'
if [ -n "${OUT:-}" ]; then cp "$CSV" "$OUT"; note "runs written to $OUT"; fi
