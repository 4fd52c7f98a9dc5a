#!/usr/bin/env bash
# bench/startup.sh: what does every hail run pay before it sends a request?
#
# hail built from this tree, and from the git revision BASE if given, side by side: the binary's size
# (as `go build` makes it, and stripped as deploy/Dockerfile builds it), `hail --version`'s peak RSS
# and CPU (perf's task-clock: the runtime's and every package's init), and a plain run's peak RSS
# (-n $REQS -c $CONNS against hail serve on CPU $SERVER_CPU; hail on CPU $CLIENT_CPU). $ROUNDS rounds,
# the binaries alternating; medians, and hail - BASE. Every package linked into hail runs its init
# in every run, kube or not (internal/kube's TestOnlyRegisteredGroups keeps client-go's scheme out).
# The binaries run from copies (cp): on this machine a file just written by the linker has shown a
# few MB more peak RSS than a copy of it.
#
#   bash bench/startup.sh                  # this tree only
#   BASE=9e8bcbc bash bench/startup.sh     # next to the last main before hail kube
#   ROUNDS=3 REQS=2000 bash bench/startup.sh
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

ROUNDS=${ROUNDS:-11}
REQS=${REQS:-20000}
CONNS=${CONNS:-32}
BASE=${BASE:-}
positive_ints ROUNDS REQS CONNS

bench_tmp startup
have taskset || die "taskset is needed"
apt_ensure time /usr/bin/time || die "GNU time is needed"
PERF=1
apt_ensure linux-perf perf || PERF=0
[ "$PERF" = 1 ] || note "no perf: the start CPU column is left out"
ensure_go || die "no go toolchain"

# build NAME SRC: NAME (a copy of what go build made in SRC) and NAME.stripped's size.
build() {
	local name=$1 src=$2
	note "building $name"
	(cd "$src" && go build -o "$TMPD/$name.built" ./cmd/hail &&
		CGO_ENABLED=0 go build -trimpath -ldflags=-s -o "$TMPD/$name.stripped" ./cmd/hail) || die "go build in $src failed"
	cp "$TMPD/$name.built" "$TMPD/$name"
}
NAMES=(hail)
build hail "$REPO"
if [ -n "$BASE" ]; then
	mkdir "$TMPD/base-src"
	(cd "$REPO" && git archive "$BASE") | tar -x -C "$TMPD/base-src" || die "git archive $BASE failed"
	build base "$TMPD/base-src"
	NAMES+=(base)
fi

serve_start "$TMPD/hail"
URL="http://127.0.0.1:$PORT/"
note "hail serve on 127.0.0.1:$PORT (CPU $SERVER_CPU); the binaries on CPU $CLIENT_CPU, $ROUNDS round(s)"

# peak NAME ARGS...: the peak RSS in KB of one run.
peak() {
	local name=$1
	shift
	taskset -c "$CLIENT_CPU" /usr/bin/time -f %M -o "$TMPD/time.out" "$TMPD/$name" "$@" >/dev/null 2>"$TMPD/run.err" ||
		die "$name $*: $(head -c 300 "$TMPD/run.err")"
	tail -n 1 "$TMPD/time.out"
}
for ((r = 1; r <= ROUNDS; r++)); do
	for n in "${NAMES[@]}"; do
		peak "$n" --version >>"$TMPD/$n.version"
		peak "$n" -n "$REQS" -c "$CONNS" --no-tui "$URL" >>"$TMPD/$n.run"
	done
done

mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
printf '%-9s %9s %13s %17s %12s %13s\n' binary "size MiB" "stripped MiB" "--version RSS MiB" "run RSS MiB" "start CPU ms"
declare -A SIZE STRIP VER RUN CPU
for n in "${NAMES[@]}"; do
	SIZE[$n]=$(($(stat -c %s "$TMPD/$n") / 1024))
	STRIP[$n]=$(($(stat -c %s "$TMPD/$n.stripped") / 1024))
	VER[$n]=$(median <"$TMPD/$n.version")
	RUN[$n]=$(median <"$TMPD/$n.run")
	CPU[$n]=-
	if [ "$PERF" = 1 ]; then
		CPU[$n]=$(taskset -c "$CLIENT_CPU" perf stat -x, -e task-clock -r $((ROUNDS * 4)) "$TMPD/$n" --version 2>&1 >/dev/null |
			awk -F, '/task-clock/ { printf "%.2f", $1 }')
	fi
	printf '%-9s %9s %13s %17s %12s %13s\n' "$n" "$(mb "${SIZE[$n]}")" "$(mb "${STRIP[$n]}")" "$(mb "${VER[$n]}")" "$(mb "${RUN[$n]}")" "${CPU[$n]}"
done
if [ -n "$BASE" ]; then
	d() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f", (a - b) / 1024 }'; }
	dc=-
	[ "$PERF" = 1 ] && dc=$(awk -v a="${CPU[hail]}" -v b="${CPU[base]}" 'BEGIN { printf "%+.2f", a - b }')
	printf '%-9s %9s %13s %17s %12s %13s\n' "hail-base" "$(d "${SIZE[hail]}" "${SIZE[base]}")" "$(d "${STRIP[hail]}" "${STRIP[base]}")" \
		"$(d "${VER[hail]}" "${VER[base]}")" "$(d "${RUN[hail]}" "${RUN[base]}")" "$dc"
fi
