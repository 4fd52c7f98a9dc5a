#!/usr/bin/env bash
# bench/llm.sh: streamed tokens — client CPU per token and read lag, side by side, against `hail serve --openai`.
#
# The mock inference server (`hail serve --openai`, one token per chunk, --slots above the streams so that nothing
# queues) runs pinned to CPU $SERVER_CPU; each client runs pinned to CPU $CLIENT_CPU, one after the other, the
# order rotating round by round. Every client streams POST /v1/completions with "stream":true, max_tokens $TOKENS
# and ignore_eos over keep-alive connections, one stream per connection, the next request when a stream ends,
# for $SECS seconds. Six parts ($PARTS; idle, scale and server only when asked for):
#   cpu50   $STREAMS streams (200) x $TOKENS tokens (128), a token every 50 ms per stream (--itl 50ms)
#   cpu5    the same with a token every 5 ms
#   lag     $LAG_STREAMS streams (1000) at 20 tokens/s each (--itl 50ms), with --send-time: each chunk carries
#           the Unix time the mock wrote it, and each client reports its read lag (when it read the event minus
#           that time; the loopback's own delay, a few µs, is in it) as p50/p99/max, from 2 s into the run on
#           (before, a client is still opening its connections and reads nothing)
#   idle    $STREAMS streams open and idle (--itl 10m: a stream's first token comes within a random part of
#           10 minutes, so few come in a run): each client's CPU per second of run with nothing to read, its
#           fixed cost (startup, timers, per-second collection, the report); with cpu50 or cpu5 in the same
#           run, the summary splits their CPU per token into that fixed cost and what each token adds
#   scale   issue 29's scale point: $SCALE_STREAMS streams (500) x $SCALE_TOKENS tokens (256), a token every
#           $SCALE_ITL (7.8 ms) per stream: 64k tokens/s asked of one core of client, with the clients of
#           $SCALE_TOOLS (hail-uring hail-net hail-shards floor). Its table adds the tokens/s the load asks
#           (streams ÷ ITL), the mock's chunks/s during the run, whether the mock kept up (it sent >= 97% of
#           what was asked and the client read >= 99% of what it sent), and how many cores of the client the
#           gateway-api-inference-extension high-cache profile (~500 requests/s x 256 tokens = 128k tokens/s)
#           needs at the CPU per token measured
#   server    the mock's own cost against the floor of sending a chunk: the cpu50 load (the client $SERVER_CLIENT,
#             the floor client by default, on CPU $CLIENT_CPU) served, round by round in alternating order, by the
#             mock and by bench/sendfloor.c — a minimal C server on CPU $SERVER_CPU that sends the mock's completions
#             chunks, byte for byte the same size, on the mock's timeline (a stagger in [0, ITL) then a chunk every
#             ITL per stream, woken at most once per tick, the mock's default tick: ITL ÷ 25, at most 2 ms), one
#             write per chunk, and does nothing else. Each server's CPU (utime+stime from /proc/PID/stat over the
#             client's run) ÷ the tokens the client read: what sending a chunk costs on this machine at all (the
#             kernel's TCP send, and the loopback's receive path for the client, which the kernel runs on the
#             sender's core and charges to it), and the mock ÷ that floor
# Clients ($TOOLS):
#   floor     bench/ssefloor.c: a minimal C epoll client counting "data: {" without decoding JSON (gcc -O2)
#   gofloor-uring, gofloor-net
#             bench/gofloor: the floor written in Go the way each hail engine reads — on io_uring (one locked
#             thread, one ring, multishot receives into provided buffers, SO_TIMESTAMPNS receive times) and on
#             Go's netpoller (a goroutine per connection, with the net engine's reader, transport.RxReader) — and
#             counting events as the floor does: no HTTP parsing, no JSON, no metrics. hail ÷ its Go floor is
#             what hail's own work costs; the Go floor ÷ the floor, what the language runtime and the kernel
#             interface cost
#   aiohttp   bench/sse_aiohttp.py: a client of vLLM's benchmark kind on Debian's python3-aiohttp (one asyncio
#             task per stream, json.loads per event, perf_counter timestamps); vLLM's own client, guidellm and
#             their kin cannot be installed here (PyPI is not reachable)
#   hail-uring, hail-net
#             `hail llm --engine uring|net -c STREAMS --input-tokens 2 --output-tokens TOKENS -z SECS
#             --stream-drain 0` (the closed model: each connection's next request when its stream ends),
#             its JSON written to a file (no TUI, nothing printed) and read after it exits. hail asks for usage
#             (stream_options), so each completed stream carries one usage chunk and [DONE] besides its tokens:
#             tokens = hail.stream.events - 2 x completed streams (streams cut at -z, truncated, are all
#             tokens). Its CPU is all-in: startup, every metric's histograms, the report. Its read lag is its
#             own measure (hail.stream.read_lag): the kernel's receive time of the bytes to hail reading the
#             event — the loopback's few µs are not in it, and the whole run is (the peers leave out 2 s)
#   hail-shards
#             a distributed run on one machine: $SHARDS (2) `hail llm --engine uring --shard I/N` processes at
#             once, all pinned to the client CPU (so still one core in all), each with 1/N of the streams,
#             their results merged with `hail merge` (exact: histograms and counts add) after they exit; its
#             CPU is the shards' together (the merge, after, is not in it)
# Measured the same way for every client: CPU user+sys of its whole life from GNU time ÷ the tokens it read
# (its own count; the mock's count of chunks sent during the run is beside it), and the mock's own CPU
# (utime+stime from /proc/PID/stat) ÷ the chunks it sent during the run — its goal is <= 8 µs per chunk.
# Ratios are medians of per-round ratios (each client's CPU per token ÷ the floor's, ÷ aiohttp's, and for hail
# ÷ its engine's Go floor, in the same round).
#
#   flock /tmp/hail-bench.lock bash bench/llm.sh           # 20 s runs, 3 rounds, all parts
#   SECS=5 ROUNDS=1 bash bench/llm.sh                       # a quick trial
#   PARTS=lag TOOLS=floor bash bench/llm.sh
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

SECS=${SECS:-20}
ROUNDS=${ROUNDS:-3}
STREAMS=${STREAMS:-200}
LAG_STREAMS=${LAG_STREAMS:-1000}
TOKENS=${TOKENS:-128}
SCALE_STREAMS=${SCALE_STREAMS:-500}
SCALE_TOKENS=${SCALE_TOKENS:-256}
SCALE_ITL=${SCALE_ITL:-7.8ms}
SHARDS=${SHARDS:-2}
SERVER_CLIENT=${SERVER_CLIENT:-floor}
PARTS=${PARTS:-cpu50 cpu5 lag}
# ---- TOOLS: the rows, in this order.
TOOLS=${TOOLS:-floor gofloor-uring gofloor-net aiohttp hail-uring hail-net}
SCALE_TOOLS=${SCALE_TOOLS:-hail-uring hail-net hail-shards floor}
MOCK_LIMIT=${MOCK_LIMIT:-8}
positive_ints SECS ROUNDS STREAMS LAG_STREAMS TOKENS SCALE_STREAMS SCALE_TOKENS SHARDS
PY=/usr/bin/python3 # Debian's, where python3-aiohttp installs

bench_tmp llm
have taskset || die "taskset is needed"
apt_ensure time /usr/bin/time || die "GNU time is needed"
HAIL="$TMPD/hail"
build_hail "$HAIL"
ALL_TOOLS=$TOOLS
case " $PARTS " in *" scale "*) ALL_TOOLS="$ALL_TOOLS $SCALE_TOOLS" ;; esac
case " $PARTS " in *" server "*) ALL_TOOLS="$ALL_TOOLS $SERVER_CLIENT sendfloor" ;; esac
for tool in $ALL_TOOLS; do
	case $tool in
	floor)
		apt_ensure gcc gcc || die "gcc is needed for the floor client"
		gcc -O2 -Wall -o "$TMPD/ssefloor" "$BENCH_DIR/ssefloor.c" || die "building bench/ssefloor.c failed"
		;;
	sendfloor)
		apt_ensure gcc gcc || die "gcc is needed for the floor server"
		gcc -O2 -Wall -o "$TMPD/sendfloor" "$BENCH_DIR/sendfloor.c" || die "building bench/sendfloor.c failed"
		;;
	gofloor-*)
		[ -x "$TMPD/gofloor" ] || (cd "$REPO" && go build -o "$TMPD/gofloor" ./bench/gofloor) || die "building bench/gofloor failed"
		;;
	aiohttp)
		apt_ensure python3-aiohttp /usr/lib/python3/dist-packages/aiohttp/__init__.py || die "python3-aiohttp is needed"
		;;
	esac
done
# shards.sh OUT STREAMS URL: hail-shards' command, SHARDS hail llm processes at once, each with --shard I/N
# (1/N of -c), their results OUT-sI.json; it exits with the first non-zero exit status.
cat >"$TMPD/shards.sh" <<EOF
#!/usr/bin/env bash
out=\$1 streams=\$2 url=\$3 pids=() rc=0
for ((i = 0; i < $SHARDS; i++)); do
	"$HAIL" llm --engine uring --no-tui -c "\$streams" --shard "\$i/$SHARDS" --input-tokens 2 --output-tokens "\$TOK" \\
		-z ${SECS}s --stream-drain 0 --model mock -j -o "\$out-s\$i.json" "\$url" &
	pids+=(\$!)
done
for p in "\${pids[@]}"; do wait "\$p" || { r=\$?; [ "\$rc" != 0 ] || rc=\$r; }; done
exit "\$rc"
EOF
raise_nofile 65536
TICK=$(getconf CLK_TCK)

# tool_cmd TOOL PORT STREAMS LAG OUT: the command line of a client (TOK tokens per request). Every client leaves one line in OUT.out
# (the peers print it on stdout; hail's comes from its JSON, OUT.json, after it exits: hail_line):
#   events N requests M seconds S [lag_p50_us A lag_p99_us B lag_max_us C]
# (events: the tokens it read; requests: the streams it finished; lag fields only with LAG=lag).
tool_cmd() {
	local tool=$1 port=$2 streams=$3 lag=$4 out=$5
	case $tool in
	floor) echo "$TMPD/ssefloor $port $streams $SECS $TOK $lag" ;;
	gofloor-uring | gofloor-net) echo "$TMPD/gofloor ${tool#gofloor-} $port $streams $SECS $TOK" ;;
	aiohttp) echo "$PY $BENCH_DIR/sse_aiohttp.py $port $streams $SECS $TOK $lag" ;;
	hail-uring | hail-net)
		echo "$HAIL llm --engine ${tool#hail-} --no-tui -c $streams --input-tokens 2 --output-tokens $TOK -z ${SECS}s" \
			"--stream-drain 0 --model mock -j -o $out.json http://127.0.0.1:$port/v1/completions"
		;;
	hail-shards) echo "env TOK=$TOK bash $TMPD/shards.sh $out $streams http://127.0.0.1:$port/v1/completions" ;;
	*) die "unknown tool $tool (known: floor gofloor-uring gofloor-net aiohttp hail-uring hail-net hail-shards)" ;;
	esac
}

# hail_line OUT LAG: the client line of a hail run, from OUT.json into OUT.out.
hail_line() {
	"$PY" - "$1.json" "$2" >"$1.out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s, c = r["hail"]["stream"], r["hail"]["counts"]
words = ["events", s["events"] - 2 * s["completed"], "requests", s["completed"], "seconds", r["summary"]["total"]]
if sys.argv[2]:
    lag = s["read_lag"]
    words += ["lag_p50_us", round(lag["p50"] * 1e6), "lag_p99_us", round(lag["p99"] * 1e6), "lag_max_us", round(lag["max"] * 1e6)]
print(" ".join(str(w) for w in words))
PY
}

mock_stat() { # mock_stat FIELD: a counter from the mock's /stats
	"$PY" -c 'import json, sys, urllib.request; print(json.load(urllib.request.urlopen(sys.argv[1]))[sys.argv[2]])' \
		"http://127.0.0.1:$PORT/stats" "$1"
}
server_ticks() { awk '{ print $14 + $15 }' "/proc/$SERVE_PID/stat"; } # the server's CPU so far (clock ticks)

# mock_idle: wait (up to 30 s) until the mock has no stream left from the previous run.
mock_idle() {
	local i
	for i in $(seq 1 300); do
		[ "$(mock_stat running)" = 0 ] && [ "$(mock_stat queued)" = 0 ] && return 0
		sleep 0.1
	done
	note "the mock still has streams running after 30 s"
}

CSV="$TMPD/runs.csv"
echo "part,round,tool,streams,itl,exit,wall_s,user_s,sys_s,maxrss_kib,events,requests,lag_p50_us,lag_p99_us,lag_max_us,mock_cpu_s,mock_chunks,load1" >"$CSV"

# csv_row OUT PART ROUND TOOL STREAMS ITL RC TICKS CHUNKS LOAD: a run's CSV row, from OUT.time (GNU time) and OUT.out
# (the client's line); TICKS is the server's CPU during the run in clock ticks, CHUNKS the chunks it sent ("client":
# the tokens the client read).
csv_row() {
	"$PY" - "$TICK" "$@" >>"$CSV" <<'PY'
import sys
hz, out, part, rnd, tool, streams, itl, rc, ticks, chunks, load = sys.argv[1:]
try:
    wall, user, sys_, rss = open(out + ".time").read().split()[-4:]
except Exception:
    wall = user = sys_ = rss = ""
f = {}
try:
    words = open(out + ".out").read().split()
    f = dict(zip(words[::2], words[1::2]))
except Exception:
    pass
if chunks == "client":
    chunks = f.get("events", "")
print(",".join([part, rnd, tool, streams, itl, rc, wall, user, sys_, rss, f.get("events", ""), f.get("requests", ""),
                f.get("lag_p50_us", ""), f.get("lag_p99_us", ""), f.get("lag_max_us", ""),
                f"{int(ticks) / int(hz):.2f}", chunks, load]))
PY
}

# mock_start: the part's mock (itl, streams, extra), pinned to SERVER_CPU.
mock_start() {
	serve_start "$HAIL" --openai --itl "$itl" --slots $((streams + 64)) "${extra[@]}"
	wait_log "$TMPD/serve.log" "mock OpenAI server" || die "hail serve --openai did not start: $(cat "$TMPD/serve.log")"
}

# run PART ROUND TOOL STREAMS ITL LAG: one client run and its CSV row.
run() {
	local part=$1 round=$2 tool=$3 streams=$4 itl=$5 lag=$6 out c0 c1 k0 k1 load rc=0
	out="$TMPD/$part-r$round-$tool"
	[ "$part" = idle ] || mock_idle
	load=$(cut -d' ' -f1 /proc/loadavg) # the machine's load average as the run starts
	k0=$(mock_stat chunks)
	c0=$(server_ticks)
	# shellcheck disable=SC2046 # the command line is split on purpose
	timeout $((3 * SECS + 60)) taskset -c "$CLIENT_CPU" /usr/bin/time -f '%e %U %S %M' -o "$out.time" \
		$(tool_cmd "$tool" "$PORT" "$streams" "$lag" "$out") >"$out.out" 2>"$out.err" || rc=$?
	c1=$(server_ticks)
	k1=$(mock_stat chunks)
	if [ "$rc" = 0 ] && [ "$tool" = hail-shards ]; then
		"$HAIL" merge "$out"-s*.json -o "$out.json" 2>>"$out.err" || rc=$?
	fi
	if [ "$rc" = 0 ] && [ "${tool#hail-}" != "$tool" ]; then
		hail_line "$out" "$lag" || rc=1
	fi
	[ "$rc" = 0 ] || note "$tool ($part, round $round) exited $rc: $(tail -n 2 "$out.err" | tr '\n' ' ')"
	csv_row "$out" "$part" "$round" "$tool" "$streams" "$itl" "$rc" "$((c1 - c0))" "$((k1 - k0))" "$load"
}

# server_run ROUND SERVER: the server part's run of SERVER_CLIENT against SERVER (mock or sendfloor), started
# fresh, and its CSV row (tool: the server; mock_cpu_s, mock_chunks: the server's CPU during the client's run and
# the tokens the client read).
sendfloor_exec() { exec taskset -c "$SERVER_CPU" "$TMPD/sendfloor" "$PORT" "$ITL_US" "$TICK_US"; }
server_run() {
	local round=$1 srv=$2 out c0 c1 load rc=0
	out="$TMPD/server-r$round-$srv"
	case $srv in
	mock) mock_start ;;
	sendfloor) start_server sendfloor sendfloor_exec ;;
	esac
	load=$(cut -d' ' -f1 /proc/loadavg)
	c0=$(server_ticks)
	# shellcheck disable=SC2046 # the command line is split on purpose
	timeout $((3 * SECS + 60)) taskset -c "$CLIENT_CPU" /usr/bin/time -f '%e %U %S %M' -o "$out.time" \
		$(tool_cmd "$SERVER_CLIENT" "$PORT" "$streams" "" "$out") >"$out.out" 2>"$out.err" || rc=$?
	c1=$(server_ticks)
	serve_stop
	if [ "$rc" = 0 ] && [ "${SERVER_CLIENT#hail-}" != "$SERVER_CLIENT" ]; then
		hail_line "$out" "" || rc=1
	fi
	[ "$rc" = 0 ] || note "$SERVER_CLIENT against $srv (round $round) exited $rc: $(tail -n 2 "$out.err" | tr '\n' ' ')"
	csv_row "$out" server "$round" "$srv" "$streams" "$itl" "$rc" "$((c1 - c0))" client "$load"
}

for part in $PARTS; do
	if [ "$part" = server ]; then
		[ "$SERVER_CLIENT" != hail-shards ] || die "SERVER_CLIENT=hail-shards: the server part runs one client process"
		streams=$STREAMS itl=50ms extra=() TOK=$TOKENS ITL_US=50000 TICK_US=2000
		note "server: $SERVER_CLIENT's $streams streams x $TOK tokens, --itl $itl, served by the mock and by bench/sendfloor.c in turn; server on CPU $SERVER_CPU, client on CPU $CLIENT_CPU, $SECS s runs, $ROUNDS round(s)"
		for round in $(seq 1 "$ROUNDS"); do
			order="mock sendfloor"
			[ $((round % 2)) = 1 ] || order="sendfloor mock"
			for srv in $order; do
				note "  round $round: $srv"
				server_run "$round" "$srv"
			done
		done
		continue
	fi
	case $part in
	cpu50) streams=$STREAMS itl=50ms lag= extra=() TOK=$TOKENS tools=$TOOLS ;;
	cpu5) streams=$STREAMS itl=5ms lag= extra=() TOK=$TOKENS tools=$TOOLS ;;
	lag) streams=$LAG_STREAMS itl=50ms lag=lag extra=(--send-time) TOK=$TOKENS tools=$TOOLS ;;
	idle) streams=$STREAMS itl=10m lag= extra=() TOK=$TOKENS tools=$TOOLS ;;
	scale) streams=$SCALE_STREAMS itl=$SCALE_ITL lag= extra=() TOK=$SCALE_TOKENS tools=$SCALE_TOOLS ;;
	*) die "unknown part $part (cpu50, cpu5, lag, idle, scale, server)" ;;
	esac
	read -r -a TOOL_LIST <<<"$tools"
	mock_start
	note "$part: $streams streams x $TOK tokens, --itl $itl; mock on CPU $SERVER_CPU (port $PORT), clients on CPU $CLIENT_CPU, $SECS s runs, $ROUNDS round(s)"
	for round in $(seq 1 "$ROUNDS"); do
		n=${#TOOL_LIST[@]}
		for ((i = 0; i < n; i++)); do
			tool=${TOOL_LIST[$(((i + round - 1) % n))]}
			note "  round $round: $tool"
			# idle streams hold their slots until the mock's next write finds the client gone (minutes): a
			# fresh mock for each idle run
			if [ "$part" = idle ] && [ "$round$i" != 10 ]; then serve_stop && mock_start; fi
			run "$part" "$round" "$tool" "$streams" "$itl" "$lag"
		done
	done
	serve_stop
done

# ---- summary -------------------------------------------------------------------------------------------
"$PY" - "$CSV" "$MOCK_LIMIT" "$TOOLS" "$SCALE_TOOLS" "$SERVER_CLIENT" <<'PY'
import csv, re, statistics as st, sys
path, limit, tools, scale_tools = sys.argv[1], float(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split()
GOFLOOR = {"hail-uring": "gofloor-uring", "hail-net": "gofloor-net"}  # each engine's Go floor
PROFILE = 128_000 # tokens/s: gateway-api-inference-extension's high-cache profile, ~500 requests/s x 256 tokens
all_rows = [r for r in csv.DictReader(open(path)) if r["exit"] == "0" and r["events"] != ""]
idle = [r for r in all_rows if r["part"] == "idle"]
servers = [r for r in all_rows if r["part"] == "server" and r["events"] != "0"]
rows = [r for r in all_rows if r["part"] not in ("idle", "server") and r["events"] != "0"]
for r in rows + servers:
    r["cpu_us"] = (float(r["user_s"]) + float(r["sys_s"])) / int(r["events"]) * 1e6
    r["mock_us"] = float(r["mock_cpu_s"]) / int(r["mock_chunks"]) * 1e6 if int(r["mock_chunks"]) else float("nan")
med = lambda v: st.median(v) if v else float("nan")
fmt = lambda v, p=2: "–" if v != v else f"{v:.{p}f}"
desc = {"cpu50": "a token every 50 ms", "cpu5": "a token every 5 ms", "lag": "20 tokens/s per stream, read lag",
        "scale": "one core of client asked for streams / ITL tokens/s"}
secs = lambda d: float(re.fullmatch(r"([0-9.]+)(ns|us|µs|ms|s)", d).group(1)) * {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1}[re.fullmatch(r"([0-9.]+)(ns|us|µs|ms|s)", d).group(2)]
mock_all = []

def scale(pr):
    """The scale part's table: tokens asked, sent and read, CPU per token, and the cores 128k tokens/s needs."""
    asked = int(pr[0]["streams"]) / secs(pr[0]["itl"])
    print(f"asked: {asked:,.0f} tokens/s ({pr[0]['streams']} streams, a token every {pr[0]['itl']})\n")
    print("| client | tokens/s read | mock sent/s | sent ÷ asked | read ÷ sent | mock kept up | CPU µs/token | ÷ floor "
          "| one core at this cost, tokens/s | cores for 128k tokens/s | mock CPU µs/chunk | ok runs |")
    print("| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    by_round = {}
    for r in pr:
        by_round.setdefault(r["round"], {})[r["tool"]] = r
    for tool in scale_tools:
        tr = [r for r in pr if r["tool"] == tool]
        if not tr:
            print(f"| {tool} | – | – | – | – | – | – | – | – | – | – | 0 |")
            continue
        read = med([int(r["events"]) / float(r["wall_s"]) for r in tr])
        sent = med([int(r["mock_chunks"]) / float(r["wall_s"]) for r in tr])
        kept = sum(int(r["mock_chunks"]) / float(r["wall_s"]) >= 0.97 * asked and int(r["events"]) >= 0.99 * int(r["mock_chunks"]) for r in tr)
        cpu = med([r["cpu_us"] for r in tr])
        ratio = med([rs[tool]["cpu_us"] / rs["floor"]["cpu_us"] for rs in by_round.values() if tool in rs and "floor" in rs])
        mock = [r["mock_us"] for r in tr]
        mock_all.extend(mock)
        print(f"| {tool} | {read:,.0f} | {sent:,.0f} | {sent / asked:.3f} | {read / sent:.3f} | {kept}/{len(tr)} runs | {fmt(cpu)} "
              f"| {fmt(ratio)} | {1e6 / cpu:,.0f} | {PROFILE * cpu / 1e6:.2f} | {fmt(med(mock))} | {len(tr)} |")
    print("\n(mock kept up: it sent >= 97% of the tokens asked and the client read >= 99% of what it sent; one core at"
          " this cost = 1e6 ÷ CPU µs/token; cores for 128k = 128,000 × CPU µs/token ÷ 1e6)")

for part in dict.fromkeys(r["part"] for r in rows):
    pr = [r for r in rows if r["part"] == part]
    if part == "scale":
        print(f"\n{part}: {pr[0]['streams']} streams, {desc[part]} (--itl {pr[0]['itl']})")
        scale(pr)
        continue
    print(f"\n{part}: {pr[0]['streams']} streams, {desc.get(part, '')} (--itl {pr[0]['itl']})\n")
    print("| client | tokens/s | CPU µs/token | ÷ floor | ÷ floor, each round | ÷ its Go floor | ÷ aiohttp | lag p50 µs "
          "| lag p99 µs | lag max µs | mock CPU µs/chunk | ok runs |")
    print("| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    by_round = {}
    for r in pr:
        by_round.setdefault(r["round"], {})[r["tool"]] = r
    for tool in tools:
        tr = [r for r in pr if r["tool"] == tool]
        if not tr:
            print(f"| {tool} | – | – | – | – | – | – | – | – | – | – | 0 |")
            continue
        ratios = lambda base: [rs[tool]["cpu_us"] / rs[base]["cpu_us"] for _, rs in sorted(by_round.items(), key=lambda kv: int(kv[0]))
                               if tool in rs and base in rs]
        ratio = lambda base: med(ratios(base))
        rounds = " ".join(fmt(x) for x in ratios("floor")) or "–"
        lag = lambda k: med([float(r[k]) for r in tr if r[k]])
        tps = med([int(r["events"]) / float(r["wall_s"]) for r in tr])
        mock = [r["mock_us"] for r in tr]
        mock_all += mock
        gofloor = GOFLOOR.get(tool)
        print(f"| {tool} | {tps:.0f} | {fmt(med([r['cpu_us'] for r in tr]))} | {fmt(ratio('floor'))} | {rounds} "
              f"| {fmt(ratio(gofloor)) if gofloor else '–'} | {fmt(ratio('aiohttp'))} "
              f"| {fmt(lag('lag_p50_us'), 0)} | {fmt(lag('lag_p99_us'), 0)} | {fmt(lag('lag_max_us'), 0)} | {fmt(med(mock))} | {len(tr)} |")
if idle:
    print(f"\nidle: {idle[0]['streams']} streams open, no tokens (--itl {idle[0]['itl']}): each client's fixed cost\n")
    print("| client | CPU ms per s of run (user + sys) | user ms/s | tokens read | then, a token every 50 ms: CPU µs/token | of it fixed | added per token | a token every 5 ms: added per token |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for tool in tools:
        tr = [r for r in idle if r["tool"] == tool]
        if not tr:
            continue
        fixed = med([(float(r["user_s"]) + float(r["sys_s"])) / float(r["wall_s"]) for r in tr])  # s of CPU per s
        user = med([float(r["user_s"]) / float(r["wall_s"]) for r in tr])
        cells = []
        for part in ("cpu50", "cpu5"):
            pr = [r for r in rows if r["part"] == part and r["tool"] == tool]
            if not pr:
                cells += ["–"] * (3 if part == "cpu50" else 1)
                continue
            tps = med([int(r["events"]) / float(r["wall_s"]) for r in pr])
            per = med([r["cpu_us"] for r in pr])
            if part == "cpu50":
                cells.append(fmt(per))
                cells.append(fmt(fixed / tps * 1e6))
            cells.append(fmt(per - fixed / tps * 1e6))
        print(f"| {tool} | {fixed * 1e3:.2f} | {user * 1e3:.2f} | {med([int(r['events']) for r in tr]):.0f} | " + " | ".join(cells) + " |")
    print("\n(fixed: the idle CPU per second ÷ the part's tokens/s; added per token: CPU µs/token − fixed)")
if servers:
    print(f"\nserver: {sys.argv[5]}'s {servers[0]['streams']} streams, a token every {servers[0]['itl']}, served by the mock and by"
          " bench/sendfloor.c (the floor of sending a chunk) in turn\n")
    print("| server | chunks/s | server CPU µs/chunk | ÷ sendfloor | ÷ sendfloor, each round | ok runs |")
    print("| --- | ---: | ---: | ---: | --- | ---: |")
    by_round = {}
    for r in servers:  # mock_us: the server's CPU per chunk (its mock_chunks are the client's tokens)
        by_round.setdefault(r["round"], {})[r["tool"]] = r
    for srv in ("sendfloor", "mock"):
        tr = [r for r in servers if r["tool"] == srv]
        if not tr:
            continue
        ratios = [rs[srv]["mock_us"] / rs["sendfloor"]["mock_us"] for _, rs in sorted(by_round.items(), key=lambda kv: int(kv[0]))
                  if srv in rs and "sendfloor" in rs and rs["sendfloor"]["mock_us"] > 0]
        print(f"| {srv} | {med([int(r['events']) / float(r['wall_s']) for r in tr]):.0f} | {fmt(med([r['mock_us'] for r in tr]))} "
              f"| {fmt(med(ratios))} | {' '.join(fmt(x) for x in ratios) or '–'} | {len(tr)} |")
    floor_us = med([r["mock_us"] for r in servers if r["tool"] == "sendfloor"])
    if floor_us == floor_us:
        print(f"\n(the mock's goal, <= {limit:g} µs a chunk, against the floor of sending one here: {floor_us:.2f} µs)")
loads = [float(r["load1"]) for r in all_rows if r.get("load1")]
if loads:
    print(f"\nthe machine's load average (1 min) as each run started: {min(loads):.2f}–{max(loads):.2f}, median {med(loads):.2f}")
if mock_all:
    worst = max(m for m in mock_all if m == m)
    print(f"\nmock CPU per chunk: median {med(mock_all):.2f} µs, worst run {worst:.2f} µs (goal <= {limit:g}: {'met' if worst <= limit else 'NOT met'}{'' if worst <= limit or servers else '; PARTS=server measures what a C server that only sends the chunks costs here'})")
PY
if [ -n "${OUT:-}" ]; then cp "$CSV" "$OUT"; note "runs written to $OUT"; fi
