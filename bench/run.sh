#!/usr/bin/env bash
# bench/run.sh: hail against other HTTP load generators, side by side, on one private nginx.
#
# Every client runs pinned to CPU $CLIENT_CPU (0), nginx's single worker to CPU $SERVER_CPU (1), in
# the closed model (-c connections, each sends the next request when the previous one completes),
# for $SECS seconds. Requests are counted by nginx (stub_status), the same way for every tool; the
# client's CPU time and peak RSS come from GNU time. $ROUNDS rounds, the tool order rotating each
# round; the table shows medians across rounds. See bench/README.md.
#
#   bash bench/run.sh                                   # 64 connections, 5 s, 3 rounds
#   CONNS=5000 TOOLS="hail-net wrk" bash bench/run.sh
#   SYSCALLS=1 HAIL_ENGINES="net uring" bash bench/run.sh
#   bash bench/run.sh --conns 256 --secs 10 --rounds 5 --tools "hail-net wrk ab" --syscalls
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

# Pinned versions of the Go tools (go install MODULE@VERSION into a temporary GOBIN).
BOMBARDIER_MOD=github.com/codesenberg/bombardier@v1.2.6
VEGETA_MOD=github.com/tsenart/vegeta/v12@v12.12.0
HEY_MOD=github.com/rakyll/hey@v0.1.4 # only when Debian has no hey package

CONNS=${CONNS:-64}
SECS=${SECS:-5}
ROUNDS=${ROUNDS:-3}
HAIL_ENGINES=${HAIL_ENGINES:-net}
SYSCALLS=${SYSCALLS:-0}
SYSCALL_SECS=${SYSCALL_SECS:-2}
COUNT_CHECK=${COUNT_CHECK:-1}
BASELINE=${BASELINE:-wrk}
FLOOR_SRC=${FLOOR_SRC:-$BENCH_DIR/uringlimit.c}
OUT_ROOT=${OUT_ROOT:-$BENCH_DIR/out}
TOOLS=${TOOLS:-}

usage() {
	cat <<'EOF'
usage: bench/run.sh [--conns N] [--secs N] [--rounds N] [--tools "T ..."] [--engines "E ..."] [--syscalls]

Environment (flags win): CONNS (64), SECS (5), ROUNDS (3), TOOLS (all), HAIL_ENGINES ("net"; a row
hail-E per engine), SYSCALLS (0; 1 adds syscalls/request for hail rows and wrk), SYSCALL_SECS (2),
COUNT_CHECK (1; compare hail's own count with nginx's), BASELINE (wrk), HAIL_BIN (prebuilt hail; default: build the tree), SERVER_CPU (1), CLIENT_CPU (0),
FLOOR_SRC (bench/uringlimit.c), OUT_ROOT (bench/out), KEEP_TMP (0).
Tools: hail-<engine> wrk hey ab bombardier vegeta uringlimit
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
	--conns) CONNS=$2 && shift ;;
	--secs) SECS=$2 && shift ;;
	--rounds) ROUNDS=$2 && shift ;;
	--tools) TOOLS=$2 && shift ;;
	--engines) HAIL_ENGINES=$2 && shift ;;
	--syscalls) SYSCALLS=1 ;;
	-h | --help)
		usage
		exit 0
		;;
	*)
		usage >&2
		exit 2
		;;
	esac
	shift
done

positive_ints CONNS SECS ROUNDS SYSCALL_SECS
if [ -z "$TOOLS" ]; then
	for e in $HAIL_ENGINES; do TOOLS="$TOOLS hail-$e"; done
	TOOLS="${TOOLS# } wrk hey ab bombardier vegeta uringlimit"
fi

TMPD=$(mktemp -d "${TMPDIR:-/tmp}/hail-bench.XXXXXX")
CHILD_PID=
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [ -n "$CHILD_PID" ] && kill -0 "$CHILD_PID" 2>/dev/null; then
		kill -TERM "$CHILD_PID" 2>/dev/null || true
		wait "$CHILD_PID" 2>/dev/null || true
	fi
	nginx_stop
	if [ "${KEEP_TMP:-0}" = 1 ]; then note "kept $TMPD"; else rm -rf "$TMPD"; fi
	exit "$rc"
}
set_traps

# run_limited OUTFILE LIMIT_SECONDS CMD...: run CMD in the background with a time limit, stdout and
# stderr to OUTFILE, and wait for it (so that a signal to this script stops it); sets RC.
RC=0
run_limited() {
	local out=$1 limit=$2
	shift 2
	timeout -k 5 "$limit" "$@" </dev/null >"$out" 2>&1 &
	CHILD_PID=$!
	if wait "$CHILD_PID"; then RC=0; else RC=$?; fi
	CHILD_PID=
}

# ---- what is needed --------------------------------------------------------------------------

have taskset || apt_ensure util-linux taskset || die "taskset is needed"
have timeout || die "timeout (coreutils) is needed"
apt_ensure time /usr/bin/time || die "GNU time (/usr/bin/time) is needed"
apt_ensure nginx nginx || die "nginx is needed"

declare -A BIN=()
ACTIVE=()
SKIPPED=()
skip() {
	SKIPPED+=("$1: $2")
	note "skipping $1: $2"
}

HAIL_BUILT=0
for tool in $TOOLS; do
	case $tool in
	hail-*)
		if [ "$HAIL_BUILT" = 0 ]; then
			if [ -n "${HAIL_BIN:-}" ]; then
				[ -x "$HAIL_BIN" ] || die "HAIL_BIN=$HAIL_BIN is not an executable"
				cp "$HAIL_BIN" "$TMPD/hail"
				note "using HAIL_BIN=$HAIL_BIN instead of building hail"
			else
				ensure_go || die "no go toolchain to build hail"
				note "building hail"
				(cd "$REPO" && go build -o "$TMPD/hail" ./cmd/hail) || die "go build ./cmd/hail failed (HAIL_BIN=/path/to/hail uses a prebuilt binary)"
			fi
			HAIL_BUILT=1
		fi
		BIN[$tool]=$TMPD/hail
		;;
	wrk) apt_ensure wrk wrk && BIN[wrk]=$(command -v wrk) ;;
	ab) apt_ensure apache2-utils ab && BIN[ab]=$(command -v ab) ;;
	hey)
		if apt_ensure hey hey; then
			BIN[hey]=$(command -v hey)
		elif p=$(go_tool hey "$HEY_MOD"); then
			BIN[hey]=$p
		fi
		;;
	bombardier) p=$(go_tool bombardier "$BOMBARDIER_MOD") && BIN[bombardier]=$p ;;
	vegeta) p=$(go_tool vegeta "$VEGETA_MOD") && BIN[vegeta]=$p ;;
	uringlimit)
		if [ ! -f "$FLOOR_SRC" ]; then
			skip uringlimit "no $FLOOR_SRC"
			continue
		fi
		if apt_ensure liburing-dev /usr/include/liburing.h && apt_ensure gcc gcc; then
			if gcc -O2 -o "$TMPD/uringlimit" "$FLOOR_SRC" -luring 2>"$TMPD/gcc.log"; then
				BIN[uringlimit]=$TMPD/uringlimit
			else
				skip uringlimit "gcc failed: $(head -n 3 "$TMPD/gcc.log" | tr '\n' ' ')"
				continue
			fi
		fi
		;;
	*) die "unknown tool '$tool' (known: hail-<engine> wrk hey ab bombardier vegeta uringlimit)" ;;
	esac
	if [ -n "${BIN[$tool]:-}" ]; then ACTIVE+=("$tool"); else skip "$tool" "not installed (see notes above)"; fi
done

SYSCALL_METHOD=
if [ "$SYSCALLS" = 1 ]; then
	apt_ensure linux-perf perf || true
	if have perf && perf stat -e raw_syscalls:sys_enter -x, -o "$TMPD/perf-probe.txt" -- true 2>/dev/null &&
		awk -F, '$3 ~ /raw_syscalls:sys_enter/ && $1 ~ /^[0-9]+$/ { ok = 1 } END { exit !ok }' "$TMPD/perf-probe.txt"; then
		SYSCALL_METHOD=perf
	elif apt_ensure strace strace; then
		SYSCALL_METHOD=strace
		note "perf cannot count raw_syscalls:sys_enter here; counting syscalls with strace -c -f (slows the client)"
	else
		note "neither perf nor strace works: no syscalls column"
	fi
fi

# ---- nginx -----------------------------------------------------------------------------------

raise_nofile $((CONNS * 2 + 1024))
AB_CONNS=$CONNS
if [ "$AB_CONNS" -gt 20000 ]; then
	AB_CONNS=20000
	note "ab allows at most 20000 connections: ab runs with -c 20000"
fi

STAMP=$(date +%Y%m%d-%H%M%S)
OUT=$OUT_ROOT/$STAMP
mkdir -p "$OUT/raw"

nginx_start "$TMPD/nginx" "$CONNS"
URL=http://127.0.0.1:$PORT/
printf 'GET %s\n' "$URL" >"$TMPD/targets.txt"
cp "$TMPD/nginx/nginx.conf" "$OUT/nginx.conf"

# tool_cmd TOOL SECONDS: the client's command line, in CMD.
CMD=()
tool_cmd() {
	local tool=$1 secs=$2
	case $tool in
	hail-*) CMD=("${BIN[$tool]}" -z "${secs}s" -c "$CONNS" --no-tui --output-format quiet --engine "${tool#hail-}" "$URL") ;;
	wrk) CMD=("${BIN[wrk]}" -t1 -c "$CONNS" -d "${secs}s" "$URL") ;;
	hey) CMD=("${BIN[hey]}" -z "${secs}s" -c "$CONNS" "$URL") ;;
	ab) CMD=("${BIN[ab]}" -k -c "$AB_CONNS" -t "$secs" -n 100000000 "$URL") ;;
	bombardier) CMD=("${BIN[bombardier]}" -c "$CONNS" -d "${secs}s" -p r "$URL") ;;
	# vegeta's results go to a file that `vegeta report` reads after the run, outside the measurement
	# (a `| vegeta report` pipe would compete with the attack for the client's CPU).
	vegeta) CMD=("${BIN[vegeta]}" attack -rate=0 -max-workers="$CONNS" -workers="$CONNS" -duration="${secs}s" -targets="$TMPD/targets.txt" -output="$TMPD/vegeta.bin") ;;
	uringlimit) CMD=("${BIN[uringlimit]}" "$PORT" "$CONNS" "$secs") ;;
	esac
}

# tool_reported TOOL FILE: the number of responses the tool itself reports (empty if it reports none).
tool_reported() {
	local f=$2
	case $1 in
	wrk) awk '/ requests in / { print $1; exit }' "$f" ;;
	ab) awk '/^Complete requests:/ { print $3; exit }' "$f" ;;
	hey) awk '/^ *\[[0-9]+\][ \t]+[0-9]+ responses/ { n += $2; found = 1 } END { if (found) print n }' "$f" ;;
	bombardier) awk '/1xx - .*2xx - / { gsub(/[^0-9 ]/, " "); split($0, a, " "); print a[2] + a[4] + a[6] + a[8] + a[10]; exit }' "$f" ;;
	vegeta) awk '/^Status Codes/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+:[0-9]+$/) { split($i, a, ":"); if (a[1] != "0") n += a[2] } print n + 0; exit }' "$f" ;;
	uringlimit) awk '/ requests in / { print $1; exit }' "$f" ;;
	esac
}

# measure ROUND SLOT TOOL: one timed run; appends a row to runs.csv.
measure() {
	local round=$1 slot=$2 tool=$3 rawf timef before after requests elapsed user sys rss rep derived
	tool_cmd "$tool" "$SECS"
	rawf=$OUT/raw/r$round-$tool.txt
	timef=$TMPD/time.txt
	rm -f "$timef" "$TMPD/vegeta.bin"
	nginx_wait_idle || die "nginx stopped answering"
	before=$NG_REQUESTS
	STATUS_FETCHES=0
	run_limited "$rawf" $((SECS * 3 + 30)) taskset -c "$CLIENT_CPU" /usr/bin/time -o "$timef" -f '%e %U %S %M' "${CMD[@]}"
	nginx_wait_idle || die "nginx stopped answering"
	after=$NG_REQUESTS
	# Each status request counts too: the one that read `before` is already in it, the ones since
	# (including the one that read `after`) are not the client's.
	requests=$((after - before - STATUS_FETCHES))
	if [ "$tool" = vegeta ] && [ -s "$TMPD/vegeta.bin" ]; then
		"${BIN[vegeta]}" report "$TMPD/vegeta.bin" >>"$rawf" 2>&1 || true
		rm -f "$TMPD/vegeta.bin"
	fi
	read -r elapsed user sys rss < <(tail -n 1 "$timef" 2>/dev/null || true) || true
	if [[ ! ${elapsed:-} =~ ^[0-9.]+$ ]]; then elapsed='' user='' sys='' rss=''; fi
	rep=$(tool_reported "$tool" "$rawf" || true)
	derived=$(awk -v n="$requests" -v e="$elapsed" -v u="$user" -v s="$sys" -v m="$rss" 'BEGIN {
		if (e == "" || n <= 0 || e <= 0) { print ",,"; exit }
		printf "%.1f,%.3f,%.1f\n", n / e, (u + s) * 1e6 / n, m / 1024 }')
	printf '%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n' "$round" "$slot" "$tool" "$CONNS" "$SECS" "$RC" \
		"$elapsed" "$user" "$sys" "$rss" "$requests" "$derived" "$rep" >>"$OUT/runs.csv"
	note "round $round: $tool exit $RC, $requests requests, ${elapsed:-?} s, cpu ${user:-?}+${sys:-?} s, rss ${rss:-?} KiB$([ -n "$rep" ] && printf ', tool says %s' "$rep")"
	if [ "$RC" != 0 ]; then note "  $tool exited $RC; last lines of $rawf: $(tail -n 3 "$rawf" | tr '\n' ' ')"; fi
}

# ---- hail engines: a 1-request probe, then a short count check against nginx ---------------

CHECKS=()
usable=()
for tool in "${ACTIVE[@]}"; do
	case $tool in
	hail-*)
		engine=${tool#hail-}
		run_limited "$TMPD/probe.txt" 30 "${BIN[$tool]}" -n 1 -c 1 --no-tui --output-format quiet --engine "$engine" "$URL"
		if [ "$RC" != 0 ]; then
			skip "$tool" "hail --engine $engine failed a 1-request probe (exit $RC): $(head -n 2 "$TMPD/probe.txt" | tr '\n' ' ')"
			continue
		fi
		if [ "$COUNT_CHECK" = 1 ]; then
			nginx_wait_idle || die "nginx stopped answering"
			before=$NG_REQUESTS
			STATUS_FETCHES=0
			rm -f "$TMPD/check.json" "$TMPD/check-time.txt"
			run_limited "$TMPD/check.txt" 60 taskset -c "$CLIENT_CPU" /usr/bin/time -o "$TMPD/check-time.txt" -f '%U %S %M' "${BIN[$tool]}" -z 1s -c "$CONNS" --no-tui -j -o "$TMPD/check.json" --engine "$engine" "$URL"
			nginx_wait_idle || die "nginx stopped answering"
			counted=$((NG_REQUESTS - before - STATUS_FETCHES))
			# hail's JSON report: hail.counts (requests sent, responses, errors) if present, else the sums
			# of statusCodeDistribution and errorDistribution.
			read -r sent ok errs < <(awk '
				/"statusCodeDistribution"|"errorDistribution"/ { blk = ($0 ~ /statusCode/) ? 1 : 2 }
				blk {
					line = $0
					while (match(line, /": *[0-9]+/)) { v = substr(line, RSTART + 2, RLENGTH - 2) + 0; if (blk == 1) s += v; else e += v; line = substr(line, RSTART + RLENGTH) }
					if ($0 ~ /}/) blk = 0
				}
				/"counts": *\{/ { inc = 1; next }
				inc && /}/ { inc = 0 }
				inc && /"(requests|responses|errors)":/ { k = $1; gsub(/[":]/, "", k); v = $2; gsub(/[^0-9]/, "", v); c[k] = v }
				END {
					if ("responses" in c) print (("requests" in c) ? c["requests"] : "?"), c["responses"], c["errors"] + 0
					else print "?", s + 0, e + 0
				}' "$TMPD/check.json" 2>/dev/null || echo "? ? ?")
			cp "$TMPD/check.json" "$OUT/raw/count-check-$tool.json" 2>/dev/null || true
			msg="$tool count check (-z 1s -c $CONNS, JSON report): exit $RC; hail reports $sent requests sent, $ok responses, $errs errors; nginx counted $counted requests"
			if [ "$ok" != "?" ]; then msg="$msg (nginx − hail responses = $((counted - ok))$([ "$sent" != "?" ] && printf '; nginx − hail requests = %s' $((counted - sent))))"; fi
			# hail's own CPU and RSS figures (hail.generator) against GNU time's.
			self=$(awk '/"cpu_user_seconds":|"cpu_system_seconds":|"max_rss_bytes":/ { v = $2; gsub(/[^0-9.eE+-]/, "", v); c[$1] = v }
				END { if (("\"cpu_user_seconds\":" in c)) printf "%.2f s CPU, %.1f MiB", c["\"cpu_user_seconds\":"] + c["\"cpu_system_seconds\":"], c["\"max_rss_bytes\":"] / 1048576 }' "$TMPD/check.json" 2>/dev/null || true)
			rusage=$(awk '{ u = $1; s = $2; m = $3 } END { if (m != "") printf "%.2f s CPU, %.1f MiB", u + s, m / 1024 }' "$TMPD/check-time.txt" 2>/dev/null || true)
			[ -n "$self" ] && msg="$msg; hail says it used $self, GNU time says $rusage"
			CHECKS+=("$msg")
			note "$msg"
		fi
		;;
	esac
	usable+=("$tool")
done
ACTIVE=("${usable[@]}")
[ "${#ACTIVE[@]}" -gt 0 ] || die "no tool to run"

# ---- the rounds ------------------------------------------------------------------------------

{
	echo "date: $(date -Is)"
	echo "host: $(uname -srm), $(nproc) CPUs, $(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
	echo "hail: $(cd "$REPO" && git rev-parse --short HEAD 2>/dev/null || echo '?')$(cd "$REPO" && [ -n "$(git status --porcelain 2>/dev/null)" ] && echo ' (with uncommitted changes)')"
	echo "nginx: $(nginx -v 2>&1)"
	echo "settings: CONNS=$CONNS SECS=$SECS ROUNDS=$ROUNDS TOOLS='${ACTIVE[*]}' SERVER_CPU=$SERVER_CPU CLIENT_CPU=$CLIENT_CPU SYSCALLS=$SYSCALLS"
	for t in "${ACTIVE[@]}"; do echo "bin $t: ${BIN[$t]}"; done
	echo "versions: bombardier $BOMBARDIER_MOD, vegeta $VEGETA_MOD; wrk/ab/hey: $(dpkg-query -W -f '${Package} ${Version}; ' wrk apache2-utils hey 2>/dev/null || true)"
	echo "load average: $(cat /proc/loadavg)"
} >"$OUT/env.txt"

echo "round,slot,tool,conns,secs,exit,elapsed_s,user_s,sys_s,maxrss_kib,requests,rps,cpu_us_per_req,rss_mib,tool_reported" >"$OUT/runs.csv"
n=${#ACTIVE[@]}
for ((round = 1; round <= ROUNDS; round++)); do
	for ((i = 0; i < n; i++)); do
		measure "$round" $((i + 1)) "${ACTIVE[(i + round - 1) % n]}"
	done
done

# ---- syscalls per request (separate short runs) ---------------------------------------------

SYSC=""
if [ -n "$SYSCALL_METHOD" ]; then
	echo "tool,method,secs,requests,syscalls,syscalls_per_req" >"$OUT/syscalls.csv"
	for tool in "${ACTIVE[@]}"; do
		case $tool in hail-* | wrk) ;; *) continue ;; esac
		tool_cmd "$tool" "$SYSCALL_SECS"
		nginx_wait_idle || die "nginx stopped answering"
		before=$NG_REQUESTS
		STATUS_FETCHES=0
		rm -f "$TMPD/sc.txt"
		if [ "$SYSCALL_METHOD" = perf ]; then
			run_limited "$OUT/raw/syscalls-$tool.txt" $((SYSCALL_SECS * 3 + 30)) taskset -c "$CLIENT_CPU" perf stat -e raw_syscalls:sys_enter -x, -o "$TMPD/sc.txt" -- "${CMD[@]}"
			calls=$(awk -F, '$3 ~ /raw_syscalls:sys_enter/ { print $1; exit }' "$TMPD/sc.txt" 2>/dev/null || true)
		else
			run_limited "$OUT/raw/syscalls-$tool.txt" $((SYSCALL_SECS * 10 + 30)) taskset -c "$CLIENT_CPU" strace -f -c -o "$TMPD/sc.txt" "${CMD[@]}"
			calls=$(awk '$NF == "total" { print $4; exit }' "$TMPD/sc.txt" 2>/dev/null || true)
		fi
		nginx_wait_idle || die "nginx stopped answering"
		requests=$((NG_REQUESTS - before - STATUS_FETCHES))
		per=$(awk -v c="$calls" -v n="$requests" 'BEGIN { if (c ~ /^[0-9]+$/ && n > 0) printf "%.2f", c / n }')
		echo "$tool,$SYSCALL_METHOD,$SYSCALL_SECS,$requests,$calls,$per" >>"$OUT/syscalls.csv"
		note "syscalls $tool ($SYSCALL_METHOD, exit $RC): ${calls:-?} syscalls / $requests requests = ${per:-?}"
		SYSC="$SYSC $tool=$per"
	done
fi

# ---- the table -------------------------------------------------------------------------------

report() {
	echo "## hail vs peers: $CONNS connections, ${SECS} s per run, $ROUNDS round(s), medians across rounds"
	echo
	echo "nginx $(nginx -v 2>&1 | sed 's,.*nginx/,,'), 1 worker on CPU $SERVER_CPU, 12-byte body; each client on CPU $CLIENT_CPU;"
	echo "requests counted by nginx (stub_status); client CPU and peak RSS from GNU time; $(date -Is), $(uname -r)."
	echo
	awk -F, -v tools="${ACTIVE[*]}" -v base="$BASELINE" -v sysc="$SYSC" -v want_sys="$SYSCALL_METHOD" '
	function median(s, a, n, i, j, t) {
		n = split(s, a, " ")
		if (n == 0) return ""
		for (i = 2; i <= n; i++) {
			t = a[i] + 0
			for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]
			a[j + 1] = t
		}
		return (n % 2) ? a[(n + 1) / 2] + 0 : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	function fmt(v, f) { return v == "" ? "–" : sprintf(f, v) }
	NR > 1 {
		t = $3; runs[t]++; rounds[$1] = 1
		if ($6 != 0 || $11 <= 0 || $13 == "") next
		ok[t]++
		rps[t] = rps[t] " " $12; cpu[t] = cpu[t] " " $13; rss[t] = rss[t] " " $14
		c[$1, t] = $13
		if ($15 != "") { diff[t] = diff[t] " " ($15 - $11); rep[t] = rep[t] " " $15 }
		cnt[t] = cnt[t] " " $11
	}
	END {
		n = split(sysc, sp, " ")
		for (i = 1; i <= n; i++) { split(sp[i], kv, "="); sc[kv[1]] = kv[2] }
		head = "| tool | requests/s | client CPU µs/req | CPU/req ÷ " base " | peak RSS MiB |"
		rule = "| --- | ---: | ---: | ---: | ---: |"
		if (want_sys != "") { head = head " syscalls/req (" want_sys ") |"; rule = rule " ---: |" }
		print head " ok runs |"; print rule " ---: |"
		nt = split(tools, tl, " ")
		for (k = 1; k <= nt; k++) {
			t = tl[k]; ratios = ""
			for (r in rounds) if (((r, t) in c) && ((r, base) in c) && c[r, base] > 0) ratios = ratios " " c[r, t] / c[r, base]
			line = sprintf("| %s | %s | %s | %s | %s |", t, fmt(median(rps[t]), "%.0f"), fmt(median(cpu[t]), "%.2f"), fmt(median(ratios), "%.2f"), fmt(median(rss[t]), "%.1f"))
			if (want_sys != "") line = line " " ((t in sc) && sc[t] != "" ? sc[t] : "–") " |"
			print line sprintf(" %d/%d |", ok[t], runs[t])
		}
		print ""
		print "Cross-check, medians: requests nginx counted vs responses the tool itself reports (hail runs with --output-format quiet: none)."
		print ""
		print "| tool | nginx-counted | tool-reported | tool − nginx |"
		print "| --- | ---: | ---: | ---: |"
		for (k = 1; k <= nt; k++) {
			t = tl[k]
			printf "| %s | %s | %s | %s |\n", t, fmt(median(cnt[t]), "%.0f"), fmt(median(rep[t]), "%.0f"), fmt(median(diff[t]), "%.0f")
		}
	}' "$OUT/runs.csv"
	if [ "${#SKIPPED[@]}" -gt 0 ] || [ "${#CHECKS[@]}" -gt 0 ]; then
		echo
		for s in "${SKIPPED[@]}"; do echo "- skipped $s"; done
		for s in "${CHECKS[@]}"; do echo "- $s"; done
	fi
	echo
	echo "Raw per-run data: $OUT/runs.csv (and raw/ for each tool's own output)."
}

report | tee "$OUT/results.md"
