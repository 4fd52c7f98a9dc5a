# shellcheck shell=bash
# Helpers shared by the bench/ scripts. Sourced, never run on its own.
# The caller sets TMPD (a private temporary directory) before using them.

note() { printf 'bench: %s\n' "$*" >&2; }
die() {
	note "error: $*"
	exit 1
}

# positive_ints VAR...: die unless each named variable holds a positive integer.
positive_ints() {
	local v
	for v in "$@"; do
		case ${!v} in
		'' | *[!0-9]* | 0) die "$v must be a positive integer (got '${!v}')" ;;
		esac
	done
}

# streams_per_conn INFLIGHT_VAR CONNS_VAR: die unless the requests in flight (named variable) are a
# multiple of the connections (named variable); sets STREAMS to the streams per connection.
streams_per_conn() {
	[ $((${!1} % ${!2})) = 0 ] || die "$1 (${!1}) must be a multiple of $2 (${!2})"
	# shellcheck disable=SC2034 # for the caller
	STREAMS=$((${!1} / ${!2}))
}

# median: the median of the numbers on stdin, one a line; of an even count, the mean of the two
# middle ones (printed with %.15g, so that a large mean is not cut to awk's 6 digits).
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.15g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# wait_log FILE PATTERN [TIMEOUT]: wait until FILE has a line matching PATTERN (grep's basic regular
# expression), polling every 50 ms for up to TIMEOUT seconds (5); returns 1 if it never does.
wait_log() {
	local file=$1 pattern=$2 timeout=${3:-5} i
	for ((i = 0; i < timeout * 20; i++)); do
		grep -q -- "$pattern" "$file" 2>/dev/null && return 0
		sleep 0.05
	done
	grep -q -- "$pattern" "$file" 2>/dev/null
}

# set_traps: run the script's `cleanup` function on exit; SIGINT and SIGTERM exit 130 and 143.
set_traps() {
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

# bench_tmp NAME: make the private temporary directory TMPD and, at exit, stop what serve_start
# started and remove TMPD (kept with KEEP_TMP=1). A script's own `on_exit` function, if it defines
# one, runs first.
bench_tmp() {
	TMPD=$(mktemp -d "${TMPDIR:-/tmp}/hail-$1.XXXXXX")
	set_traps
}

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if declare -F on_exit >/dev/null; then on_exit; fi
	serve_stop
	if [ "${KEEP_TMP:-0}" = 1 ]; then note "kept $TMPD"; else rm -rf "$TMPD"; fi
	exit "$rc"
}

# CPU for the server (nginx's one worker, or hail serve) and CPU for the client under test.
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}

# ---- installing what is missing -------------------------------------------------------------

APT_UPDATED=0

apt_candidate() { apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ { print $2; exit }'; }

have() { # have CMD-or-/abs/path
	case $1 in
	/*) [ -e "$1" ] ;;
	*) command -v "$1" >/dev/null 2>&1 ;;
	esac
}

# apt_ensure PKG CHECK: if CHECK (a command name or an absolute path) is missing, install the
# Debian package PKG, after checking with apt-cache policy that it exists here. Returns 1, with a
# note, when it cannot.
apt_ensure() {
	local pkg=$1 check=$2 cand
	have "$check" && return 0
	if [ "$(id -u)" != 0 ] || ! have apt-get; then
		note "$check is missing and $pkg cannot be installed here (needs root and apt-get)"
		return 1
	fi
	cand=$(apt_candidate "$pkg")
	if { [ -z "$cand" ] || [ "$cand" = "(none)" ]; } && [ "$APT_UPDATED" = 0 ]; then
		note "apt-get update (once)"
		apt-get update -q >"$TMPD/apt-update.log" 2>&1 || note "apt-get update failed; see $TMPD/apt-update.log"
		APT_UPDATED=1
		cand=$(apt_candidate "$pkg")
	fi
	if [ -z "$cand" ] || [ "$cand" = "(none)" ]; then
		note "Debian package $pkg is not available here"
		return 1
	fi
	note "installing Debian package $pkg $cand"
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$pkg" >"$TMPD/apt-$pkg.log" 2>&1; then
		if [ "$APT_UPDATED" = 0 ]; then # stale package lists: update once and try again
			apt-get update -q >"$TMPD/apt-update.log" 2>&1 || true
			APT_UPDATED=1
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$pkg" >"$TMPD/apt-$pkg.log" 2>&1 || true
		fi
	fi
	if ! have "$check"; then
		note "installing $pkg failed; see $TMPD/apt-$pkg.log"
		return 1
	fi
}

ensure_go() {
	if ! have go && [ -x /usr/local/go/bin/go ]; then PATH=$PATH:/usr/local/go/bin; fi
	have go
}

# go_tool NAME MODULE@VERSION: `go install` a pinned tool into $TMPD/gobin; prints its path.
go_tool() {
	local name=$1 mod=$2
	ensure_go || {
		note "no go toolchain: cannot install $mod"
		return 1
	}
	mkdir -p "$TMPD/gobin"
	if [ ! -x "$TMPD/gobin/$name" ]; then
		note "go install $mod"
		if ! (cd "$TMPD" && GOBIN="$TMPD/gobin" GOFLAGS='' GOWORK=off go install "$mod") >"$TMPD/go-install-$name.log" 2>&1; then
			note "go install $mod failed: $(tail -n 3 "$TMPD/go-install-$name.log" | tr '\n' ' ')"
			return 1
		fi
	fi
	printf '%s\n' "$TMPD/gobin/$name"
}

# ---- hail itself ---------------------------------------------------------------------------------

# build_hail DEST: put a hail binary at DEST: a copy of $HAIL_BIN when set (a prebuilt hail),
# else `go build ./cmd/hail` of this tree ($REPO).
build_hail() {
	local dest=$1
	if [ -n "${HAIL_BIN:-}" ]; then
		[ -x "$HAIL_BIN" ] || die "HAIL_BIN=$HAIL_BIN is not an executable"
		cp "$HAIL_BIN" "$dest"
		return 0
	fi
	ensure_go || die "no go toolchain to build hail (HAIL_BIN=/path/to/hail uses a prebuilt binary)"
	note "building hail"
	(cd "$REPO" && go build -o "$dest" ./cmd/hail) || die "go build ./cmd/hail failed"
}

SERVE_PID=
# serve_start HAIL [ARGS...]: start `hail serve` pinned to $SERVER_CPU on a free loopback port,
# log in $TMPD/serve.log; sets PORT and SERVE_PID. Tries five ports before giving up.
serve_start() {
	SERVE_HAIL=$1
	shift
	SERVE_ARGS=("$@")
	start_server "hail serve" hail_serve_exec
}
hail_serve_exec() { exec taskset -c "$SERVER_CPU" "$SERVE_HAIL" serve --addr "127.0.0.1:$PORT" "${SERVE_ARGS[@]}"; }

# start_server NAME EXEC: start a server on a free loopback port: EXEC is a function that execs it
# (pinned to $SERVER_CPU) on 127.0.0.1:$PORT; its output goes to $TMPD/serve.log. Sets PORT and
# SERVE_PID (serve_stop stops it). Tries five ports before giving up.
start_server() {
	local name=$1 exec_fn=$2 try
	for try in 1 2 3 4 5; do
		PORT=$(free_port) || die "no free port"
		"$exec_fn" </dev/null >"$TMPD/serve.log" 2>&1 &
		SERVE_PID=$!
		for _ in $(seq 1 100); do
			if (: <"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then return 0; fi
			kill -0 "$SERVE_PID" 2>/dev/null || break
			sleep 0.05
		done
		note "$name did not start on port $PORT (try $try)"
		kill -KILL "$SERVE_PID" 2>/dev/null || true
		wait "$SERVE_PID" 2>/dev/null || true
		SERVE_PID=
	done
	die "could not start $name; see $TMPD/serve.log"
}

# serve_stop: stop the server serve_start or start_server started, if any.
serve_stop() {
	[ -n "$SERVE_PID" ] || return 0
	if kill -0 "$SERVE_PID" 2>/dev/null; then
		kill -TERM "$SERVE_PID" 2>/dev/null || true
		sleep 0.2
		kill -KILL "$SERVE_PID" 2>/dev/null || true
	fi
	wait "$SERVE_PID" 2>/dev/null || true
	SERVE_PID=
}

# ---- ports, limits ---------------------------------------------------------------------------

port_in_use() {
	if have ss; then
		[ -n "$(ss -Htln "sport = :$1" 2>/dev/null)" ]
	else
		(: <"/dev/tcp/127.0.0.1/$1") 2>/dev/null
	fi
}

# A free TCP port below the usual ephemeral range (32768+), so that the clients' own ports never
# collide with it.
free_port() {
	local p i
	for i in $(seq 1 200); do
		p=$((20000 + (RANDOM + i) % 12000))
		if ! port_in_use "$p"; then
			printf '%s\n' "$p"
			return 0
		fi
	done
	return 1
}

# raise_nofile N: raise the soft (and if needed and allowed, the hard) open-files limit to N.
raise_nofile() {
	local want=$1 hard
	hard=$(ulimit -Hn)
	if [ "$hard" != unlimited ] && [ "$hard" -lt "$want" ]; then
		ulimit -Hn "$want" 2>/dev/null || true
		hard=$(ulimit -Hn)
	fi
	if [ "$hard" != unlimited ] && [ "$hard" -lt "$want" ]; then
		note "open-files hard limit is $hard (< $want wanted); using $hard"
		want=$hard
	fi
	ulimit -Sn "$want"
}


# ---- nginx ---------------------------------------------------------------------------------------

NGINX_PID=
PORT=
NG_ACTIVE=
NG_REQUESTS=
STATUS_FETCHES=0

# nginx_write_conf DIR PORT CONNS [H2C_PORT]: H2C_PORT adds an h2c (prior knowledge) listener,
# with up to 256 streams a connection (nginx's default is 128) and keepalive_requests 100000000
# (nginx counts an HTTP/2 connection's streams against it, and would close the connection there).
nginx_write_conf() {
	local dir=$1 port=$2 conns=$3 h2c=${4:-} wc=16384 nofile=20000 backlog somax mask i h2listen='' h2conf='' kareq=1000000
	if [ -n "$h2c" ]; then
		h2listen="listen 127.0.0.1:$h2c http2;"
		h2conf='http2_max_concurrent_streams 256;'
		kareq=100000000
	fi
	if [ $((conns + 100)) -gt "$wc" ]; then wc=$((conns + 100)); fi
	if [ $((2 * wc + 100)) -gt "$nofile" ]; then nofile=$((2 * wc + 100)); fi
	backlog=$((conns > 511 ? conns : 511))
	somax=$(cat /proc/sys/net/core/somaxconn 2>/dev/null || echo 4096)
	if [ "$backlog" -gt "$somax" ]; then backlog=$somax; fi # the kernel caps it there anyway
	# worker_cpu_affinity takes a bit mask written in binary, the lowest CPU rightmost.
	mask=1
	for ((i = 0; i < SERVER_CPU; i++)); do mask="${mask}0"; done
	mkdir -p "$dir/tmp"
	cat >"$dir/nginx.conf" <<EOF
# written by hail's bench/lib.sh: one worker pinned to CPU $SERVER_CPU, a 12-byte body on /
worker_processes 1;
worker_cpu_affinity $mask;
worker_rlimit_nofile $nofile;
daemon off;
master_process on;
pid $dir/nginx.pid;
error_log $dir/error.log warn;

events {
    worker_connections $wc;
}

http {
    access_log off;
    keepalive_requests $kareq;
    keepalive_timeout 300s;
    $h2conf
    client_body_temp_path $dir/tmp/body;
    proxy_temp_path $dir/tmp/proxy;
    fastcgi_temp_path $dir/tmp/fastcgi;
    uwsgi_temp_path $dir/tmp/uwsgi;
    scgi_temp_path $dir/tmp/scgi;

    server {
        listen 127.0.0.1:$port backlog=$backlog;
        $h2listen
        location = /nginx_status {
            stub_status;
        }
        location / {
            default_type text/plain;
            return 200 "hello world\n";
        }
    }
}
EOF
}

# nginx_start DIR CONNS [H2C_PORT]: start a private nginx (not the system service) on a free port,
# and h2c on H2C_PORT if given; sets PORT and NGINX_PID.
nginx_start() {
	local dir=$1 conns=$2 h2c=${3:-} try i
	mkdir -p "$dir"
	for try in 1 2 3 4 5; do
		PORT=$(free_port) || die "no free port"
		nginx_write_conf "$dir" "$PORT" "$conns" "$h2c"
		taskset -c "$SERVER_CPU" nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" </dev/null >"$dir/stdout.log" 2>&1 &
		NGINX_PID=$!
		for i in $(seq 1 100); do
			if ! kill -0 "$NGINX_PID" 2>/dev/null; then break; fi
			if nginx_status 2>/dev/null; then
				note "nginx (pid $NGINX_PID) on 127.0.0.1:$PORT, worker on CPU $SERVER_CPU"
				return 0
			fi
			sleep 0.05
		done
		note "nginx did not start on port $PORT (try $try): $(tail -n 2 "$dir/error.log" 2>/dev/null | tr '\n' ' ')"
		nginx_stop
	done
	die "could not start nginx; see $dir/error.log"
}

nginx_stop() {
	if [ -n "$NGINX_PID" ] && kill -0 "$NGINX_PID" 2>/dev/null; then
		kill -TERM "$NGINX_PID" 2>/dev/null || true
		local i
		for i in $(seq 1 100); do
			kill -0 "$NGINX_PID" 2>/dev/null || break
			sleep 0.05
		done
		kill -KILL "$NGINX_PID" 2>/dev/null || true
		wait "$NGINX_PID" 2>/dev/null || true
	fi
	NGINX_PID=
}

# nginx_status: one GET /nginx_status over bash's /dev/tcp (no curl needed); sets NG_ACTIVE and
# NG_REQUESTS and counts itself in STATUS_FETCHES (each status request is a request nginx counts).
nginx_status() {
	local fd line n=0 ok=1
	NG_ACTIVE='' NG_REQUESTS=''
	exec {fd}<>"/dev/tcp/127.0.0.1/$PORT" || return 1
	STATUS_FETCHES=$((STATUS_FETCHES + 1))
	printf 'GET /nginx_status HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&"$fd"
	while IFS= read -r -t 5 line <&"$fd"; do
		line=${line%$'\r'}
		case $line in
		"Active connections:"*) NG_ACTIVE=${line#Active connections: } NG_ACTIVE=${NG_ACTIVE// /} ;;
		"server accepts handled requests"*) n=1 ;;
		*)
			if [ "$n" = 1 ]; then
				read -r _ _ NG_REQUESTS <<<"$line"
				n=2
			fi
			;;
		esac
	done
	exec {fd}>&-
	[ -n "$NG_REQUESTS" ] && [ -n "$NG_ACTIVE" ] || ok=0
	[ "$ok" = 1 ]
}

# nginx_wait_idle: wait (up to 10 s) until the status request is nginx's only connection.
nginx_wait_idle() {
	local i
	for i in $(seq 1 200); do
		nginx_status || return 1
		[ "$NG_ACTIVE" -le 1 ] && return 0
		sleep 0.05
	done
	note "nginx still has $NG_ACTIVE connections open after 10 s"
}
