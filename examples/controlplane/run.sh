#!/usr/bin/env bash
# The worked example of docs/scenarios.md ("The control-plane benchmark, end to
# end"): three implementations of one VM API — Python REST (Flask), Go REST
# (hail serve's /items) and Go gRPC (hail serve --grpc's hail.v1.Items) — each
# run ROUNDS times with examples/controlplane/{rest,grpc}.yaml, a fresh server
# for every run pinned to CPU 1, hail pinned to CPU 0, the sides alternating
# round by round; then the three-way comparison.
#
#   ROUNDS=3 OUT=/tmp/cp bash examples/controlplane/run.sh
#
# Needs python3 with Flask for the Python side. Writes $OUT/{py,go,grpc}N.json
# and $OUT/compare.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
HAIL=${HAIL:-hail}
ROUNDS=${ROUNDS:-3}
OUT=${OUT:-/tmp/controlplane}
mkdir -p "$OUT"
wait_port() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return; sleep 0.1; done; echo "port $1 never opened" >&2; exit 1; }
for round in $(seq 1 "$ROUNDS"); do
  for side in py go grpc; do
    case $side in
      py)   taskset -c 1 python3 examples/controlplane/flask_items.py --port 5000 >/dev/null 2>&1 & pid=$!; wait_port 5000
            args=(examples/controlplane/rest.yaml --base http://127.0.0.1:5000) ;;
      go)   taskset -c 1 "$HAIL" serve --addr 127.0.0.1:8081 >/dev/null 2>&1 & pid=$!; wait_port 8081
            args=(examples/controlplane/rest.yaml --base http://127.0.0.1:8081) ;;
      grpc) taskset -c 1 "$HAIL" serve --addr 127.0.0.1:8082 --grpc 127.0.0.1:9090 >/dev/null 2>&1 & pid=$!; wait_port 9090
            args=(examples/controlplane/grpc.yaml) ;;
    esac
    code=0
    taskset -c 0 "$HAIL" run "${args[@]}" --target-pid "$pid" --no-tui -j -o "$OUT/$side$round.json" || code=$?
    echo "$side$round: exit $code"
    kill "$pid"; wait "$pid" 2>/dev/null || true
  done
done
sides() { local s=$1; seq -f "$OUT/$s%g.json" 1 "$ROUNDS" | paste -sd, -; }
"$HAIL" compare "Python REST=$(sides py)" "Go REST=$(sides go)" "Go gRPC=$(sides grpc)" --output-format markdown -o "$OUT/compare.md"
echo "$OUT/compare.md"
