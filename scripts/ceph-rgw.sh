#!/usr/bin/env bash
# A throwaway one-node Ceph cluster with an S3 gateway, for the RGW interop tests and the bench:
# one mon, one OSD on memstore (RAM only), radosgw (beast) on 127.0.0.1 and a free port (and HTTPS on another, with
# a throwaway CA: CEPH_RGW_TLS_ENDPOINT, CEPH_RGW_CA_BUNDLE), and one S3 user.
#
#   scripts/ceph-rgw.sh start   boots it; prints `export AWS_ENDPOINT_URL=… AWS_ACCESS_KEY_ID=… …` lines
#                               (eval "$(scripts/ceph-rgw.sh start)"); progress and the boot time go to stderr
#   scripts/ceph-rgw.sh env     prints those lines again
#   scripts/ceph-rgw.sh stop    kills exactly the daemons `start` started and removes the folder
#
# The folder is $CEPH_RGW_DIR (made when missing), else a new `mktemp -d` folder whose path `start` prints as
# `export CEPH_RGW_DIR=…`; `env` and `stop` need CEPH_RGW_DIR. With CEPH_RGW_PARENT_PID set, a watchdog stops the
# cluster when that process is gone (a test process that crashes leaves nothing running).
# Missing Debian packages (ceph-mon ceph-osd radosgw ceph-common) are installed with apt-get when root;
# otherwise the script prints the command and exits with status 2. A boot that fails exits 1, after printing the
# end of the failing daemon's log and removing what it started.
set -euo pipefail

readonly boot_timeout=${CEPH_RGW_TIMEOUT:-90}  # seconds per wait (mon, OSD, gateway)
readonly memstore_bytes=${CEPH_RGW_MEMSTORE_BYTES:-4294967296}
readonly debs=(ceph-mon ceph-osd radosgw ceph-common)

log() { echo "ceph-rgw: $*" >&2; }
die() {
    log "$*"
    exit 1
}

install_packages() {
    local missing=() pkg
    for pkg in "${debs[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$pkg")
        fi
    done
    ((${#missing[@]})) || return 0
    if [ "$(id -u)" != 0 ]; then
        log "missing Debian packages. Run:"
        log "  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}"
        exit 2
    fi
    log "apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# A TCP port nothing listens on, below the kernel's ephemeral range (as the Swift tests' freePort()).
free_port() {
    python3 - <<'EOF'
import random, socket
for _ in range(200):
    port = random.randrange(21000, 29000)
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        continue
    finally:
        s.close()
    print(port)
    break
else:
    raise SystemExit("no free port between 21000 and 29000")
EOF
}

# Polls `check` (a command) every 0.2 s until it succeeds, for at most boot_timeout seconds.
wait_for() {
    local what=$1 logfile=$2
    shift 2
    local deadline=$((SECONDS + boot_timeout))
    until "$@" >/dev/null 2>&1; do
        if ((SECONDS >= deadline)); then
            log "timed out after ${boot_timeout} s waiting for $what; end of $logfile:"
            tail -n 20 "$logfile" >&2 2>/dev/null || true
            return 1
        fi
        sleep 0.2  # polling an external daemon's readiness, bounded by the deadline
    done
}

# The pid of a daemon we started, if it is still that daemon (its pid file, checked against /proc).
recorded_pid() {
    local pidfile=$1 pid comm
    [ -s "$pidfile" ] || return 1
    pid=$(<"$pidfile")
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    comm=$(cat "/proc/$pid/comm" 2>/dev/null) || return 1
    case $comm in ceph-mon | ceph-osd | radosgw | ceph-rgw.sh | bash) echo "$pid" ;; *) return 1 ;; esac
}

# Whether a process exists and is not a zombie waiting for its parent (or init) to reap it.
running() {
    local state
    state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$state" ] && [ "$state" != Z ]
}

stop_cluster() {
    local dir=$1 pidfile pid
    [ -f "$dir/ceph.conf" ] && [ -f "$dir/.ceph-rgw" ] || die "$dir is not a folder made by ceph-rgw.sh"
    # The watchdog first (it would otherwise call stop itself), then the gateway, the OSD, the mon.
    # SIGKILL: the data is thrown away anyway (memstore saves its whole contents to disk on a clean shutdown).
    for pidfile in "$dir/run/watchdog.pid" "$dir/run/client.rgw.pid" "$dir/run/osd.0.pid" "$dir/run/mon.a.pid"; do
        # The watchdog runs `stop` itself (exec) when its parent is gone: it is then this process.
        if pid=$(recorded_pid "$pidfile") && [ "$pid" != "$$" ]; then
            kill -KILL "$pid" 2>/dev/null || true
            while running "$pid"; do sleep 0.05; done
        fi
    done
    rm -rf "$dir"
}

start_cluster() {
    local dir=$1 start=$SECONDS started_ns
    started_ns=$(date +%s%N)
    # ceph-mon refuses to start (exit 28, nothing logged) on a file system with less than 5 % available
    # (mon_data_avail_crit): say so instead.
    local avail_pct
    avail_pct=$(df -P "$(dirname "$dir")" | awk 'NR == 2 { printf "%d", $4 * 100 / $2 }')
    ((avail_pct >= 6)) || die "the file system holding $dir has ${avail_pct}% available; ceph-mon needs more than 5%"
    mkdir -p "$dir"
    [ -z "$(ls -A "$dir")" ] || die "$dir is not empty"
    dir=$(cd "$dir" && pwd)
    touch "$dir/.ceph-rgw"
    # The daemons outlive this script: they must not hold the caller's pipes or sockets open (a caller reading
    # our output to its end would wait for them). 255 is bash's own descriptor of this script.
    local fd
    for fd in $(ls /proc/$$/fd); do
        if ((fd > 2 && fd != 255)); then eval "exec $fd>&-" 2>/dev/null || true; fi
    done
    mkdir -p "$dir/run" "$dir/log" "$dir/mon/a" "$dir/osd/0" "$dir/rgw"
    # Any failure from here on stops what was started and removes the folder.
    # The command that failed, and the end of the daemons' output and the mon's log: the folder goes with the stop.
    trap 'log "failed (exit $?): $BASH_COMMAND"' ERR
    trap 'log "boot failed; stopping what was started"; tail -n 15 "'"$dir"'/log/daemons.out" "'"$dir"'/log/mon.a.log" >&2 2>/dev/null || true; stop_cluster "'"$dir"'" || true' EXIT

    local mon_port rgw_port tls_port fsid conf=$dir/ceph.conf
    mon_port=$(free_port)
    rgw_port=$(free_port)
    while [ "$rgw_port" = "$mon_port" ]; do rgw_port=$(free_port); done
    tls_port=$(free_port)
    while [ "$tls_port" = "$mon_port" ] || [ "$tls_port" = "$rgw_port" ]; do tls_port=$(free_port); done
    make_tls_certificate "$dir/tls"
    fsid=$(cat /proc/sys/kernel/random/uuid)
    cat >"$conf" <<EOF
[global]
fsid = $fsid
mon host = [v2:127.0.0.1:$mon_port]
public addr = 127.0.0.1
cluster addr = 127.0.0.1
auth cluster required = none
auth service required = none
auth client required = none
mon allow pool size one = true
mon warn on pool no redundancy = false
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
run dir = $dir/run
admin socket = $dir/run/\$name.asok
pid file = $dir/run/\$name.pid
log file = $dir/log/\$name.log
keyring = $dir/keyring
err to stderr = false
log to stderr = false

[mon]
mon data = $dir/mon/\$id
mon cluster log file = $dir/log/cluster.log

[osd]
osd data = $dir/osd/\$id
osd objectstore = memstore
memstore device bytes = $memstore_bytes
osd op num shards = 1
osd op num threads per shard = 2

[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:$rgw_port ssl_endpoint=127.0.0.1:$tls_port ssl_certificate=$dir/tls/server.pem ssl_private_key=$dir/tls/server.key
rgw data = $dir/rgw
rgw thread pool size = 64
rgw enable usage log = false
ms mon client mode = crc secure
EOF

    log "mon on 127.0.0.1:$mon_port"
    ceph-authtool --create-keyring "$dir/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
    monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$mon_port]" "$dir/monmap" >/dev/null
    ceph-mon -c "$conf" --mkfs -i a --monmap "$dir/monmap" --keyring "$dir/keyring"
    ceph-mon -c "$conf" -i a </dev/null >>"$dir/log/daemons.out" 2>&1
    ceph_cli() { ceph -c "$conf" --connect-timeout 5 "$@"; }
    wait_for "the mon to answer" "$dir/log/mon.a.log" ceph_cli health
    log "mon up after $((SECONDS - start)) s"

    local osd_id
    osd_id=$(ceph_cli osd create)
    [ "$osd_id" = 0 ] || die "ceph osd create returned '$osd_id', expected 0"
    ceph-osd -c "$conf" -i 0 --mkfs >/dev/null 2>&1
    ceph-osd -c "$conf" -i 0 </dev/null >>"$dir/log/daemons.out" 2>&1
    osd_up() { ceph_cli osd dump 2>/dev/null | grep -q '^osd\.0 up'; }
    wait_for "osd.0 to be up" "$dir/log/osd.0.log" osd_up
    log "osd.0 up after $((SECONDS - start)) s"

    radosgw -c "$conf" -n client.rgw </dev/null >>"$dir/log/daemons.out" 2>&1
    rgw_answers() { curl -s -o /dev/null -m 2 "http://127.0.0.1:$rgw_port/"; }
    wait_for "radosgw to answer HTTP on port $rgw_port" "$dir/log/client.rgw.log" rgw_answers
    rgw_answers_tls() { curl -s -o /dev/null -m 2 --cacert "$dir/tls/ca.pem" "https://127.0.0.1:$tls_port/"; }
    wait_for "radosgw to answer HTTPS on port $tls_port" "$dir/log/client.rgw.log" rgw_answers_tls
    log "radosgw up after $((SECONDS - start)) s"

    local access secret
    access=$(head -c 10 /dev/urandom | od -An -tx1 | tr -d ' \n' | tr a-f A-F)
    secret=$(head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n')
    radosgw-admin -c "$conf" -n client.admin user create --uid=cloudassets --display-name=CloudAssets \
        --access-key="$access" --secret="$secret" >/dev/null 2>"$dir/log/user-create.log"

    cat >"$dir/env" <<EOF
export AWS_ENDPOINT_URL=http://127.0.0.1:$rgw_port
export AWS_ACCESS_KEY_ID=$access
export AWS_SECRET_ACCESS_KEY=$secret
export AWS_REGION=us-east-1
export CEPH_RGW_DIR=$dir
export CEPH_RGW_TLS_ENDPOINT=https://127.0.0.1:$tls_port
export CEPH_RGW_CA_BUNDLE=$dir/tls/ca.pem
EOF
    trap - EXIT ERR

    if [ -n "${CEPH_RGW_PARENT_PID:-}" ]; then
        # In its own session, so that nothing aimed at the caller's process group ends it early.
        setsid "$0" watchdog "$CEPH_RGW_PARENT_PID" </dev/null >/dev/null 2>&1 &
    fi

    local elapsed_ms=$((($(date +%s%N) - started_ns) / 1000000)) rss_kib=0 pidfile
    for pidfile in "$dir/run/mon.a.pid" "$dir/run/osd.0.pid" "$dir/run/client.rgw.pid"; do
        rss_kib=$((rss_kib + $(awk '/^VmRSS:/ { print $2 }' "/proc/$(<"$pidfile")/status")))
    done
    echo "$elapsed_ms" >"$dir/boot-ms"
    log "Ceph $(radosgw --version | awk '{ print $3 }') RGW ready at http://127.0.0.1:$rgw_port (https :$tls_port)" \
        "in $(awk "BEGIN { printf \"%.1f\", $elapsed_ms / 1000 }") s, daemons' RSS $((rss_kib / 1024)) MiB"
    cat "$dir/env"
}

# A throwaway CA (its key deleted once used) and a certificate for 127.0.0.1 and localhost, in folder $1: the
# gateway's HTTPS endpoint, trusted through ca.pem (CEPH_RGW_CA_BUNDLE).
make_tls_certificate() {
    local tls=$1
    mkdir -p "$tls"
    openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj "/CN=CloudAssets RGW test CA" -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign" -keyout "$tls/ca.key" -out "$tls/ca.pem" 2>/dev/null
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=localhost" \
        -keyout "$tls/server.key" -out "$tls/server.csr" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >"$tls/server.ext"
    openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" -CAcreateserial -days 2 \
        -extfile "$tls/server.ext" -out "$tls/server.pem" 2>/dev/null
    rm -f "$tls/ca.key" "$tls/server.csr"
}

cmd=${1:-}
case $cmd in
    start)
        install_packages
        dir=${CEPH_RGW_DIR:-}
        [ -n "$dir" ] || dir=$(mktemp -d "${TMPDIR:-/tmp}/ceph-rgw.XXXXXX")
        export CEPH_RGW_DIR=$dir
        start_cluster "$dir"
        ;;
    env)
        [ -n "${CEPH_RGW_DIR:-}" ] || die "env: set CEPH_RGW_DIR to the folder 'start' printed"
        [ -f "$CEPH_RGW_DIR/env" ] || die "env: no running cluster in $CEPH_RGW_DIR"
        cat "$CEPH_RGW_DIR/env"
        ;;
    watchdog)
        # Started by `start`: stops the cluster once process $2 is gone (polled every second; killed by `stop`).
        echo $$ >"$CEPH_RGW_DIR/run/watchdog.pid"
        while kill -0 "$2" 2>/dev/null; do sleep 1; done
        exec "$0" stop
        ;;
    stop)
        [ -n "${CEPH_RGW_DIR:-}" ] || die "stop: set CEPH_RGW_DIR to the folder 'start' printed"
        [ -d "$CEPH_RGW_DIR" ] || exit 0
        stop_cluster "$CEPH_RGW_DIR"
        ;;
    *)
        echo "usage: $0 start|stop|env   (folder: \$CEPH_RGW_DIR)" >&2
        exit 64
        ;;
esac
