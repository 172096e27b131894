#!/usr/bin/env bash
# The server part of `make bench`: single-stream GET of a 1 GiB object from fake-s3 (disk storage)
# and from a plain static file server (Python, os.sendfile) with `curl -o /dev/null`; small-object
# GETs per second (16 KiB, 16 parallel connections, one curl process using --parallel); peak RSS of
# fake-s3 while serving the 1 GiB object.
#
# Usage: TestServer/bench/server-bench.sh [path/to/release/fake-s3]   (build it with
#        swift build -c release --product fake-s3). Prints one table.
set -euo pipefail

bin=${1:-.build/release/fake-s3}
size_mib=${BENCH_SIZE_MIB:-1024}
small_requests=${BENCH_SMALL_REQUESTS:-20000}
work=$(mktemp -d "${TMPDIR:-/tmp}/fakes3-bench.XXXXXX")
server_pid=""
static_pid=""
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
    [ -n "$static_pid" ] && kill "$static_pid" 2>/dev/null && wait "$static_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

echo "seeding a ${size_mib} MiB object..." >&2
"$bin" seed --root "$work/root" --assets 0 --large 1 --large-mib "$size_mib" --bucket bench >/dev/null
port=$(free_port)
"$bin" serve --root "$work/root" --port "$port" --access-key bench --secret-key bench-secret \
    --public bench >"$work/serve.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do grep -q listening "$work/serve.log" && break; sleep 0.1; done
base="http://127.0.0.1:$port/bench"

# 16 KiB objects, uploaded with curl's own SigV4 signer.
head -c 16384 /dev/urandom >"$work/small.bin"
for i in $(seq 0 15); do
    curl -sS -f --aws-sigv4 "aws:amz:us-east-1:s3" --user bench:bench-secret \
        -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -T "$work/small.bin" "$base/small/$i.bin" >/dev/null
done

peak_rss() { awk '/VmHWM/ {print $2}' "/proc/$server_pid/status"; }
rss_before=$(awk '/VmRSS/ {print $2}' "/proc/$server_pid/status")

big="$base/originals/large/VID_L001.mov"
curl -sS -o /dev/null "$big"   # warm the page cache
fake_speed=$(curl -sS -o /dev/null -w '%{speed_download}' "$big")
fake_speed2=$(curl -sS -o /dev/null -w '%{speed_download}' "$big")
rss_peak=$(peak_rss)

# The same file from a plain static file server.
data_file=$(ls -S "$work"/root/buckets/bench/objects/*.data | head -1)   # the largest: the 1 GiB object
mkdir -p "$work/static" && ln "$data_file" "$work/static/big.bin"
sport=$(free_port)
cat >"$work/static-server.py" <<'PY'
# A plain static file server: GET /<file> answered with os.sendfile, nothing else.
import http.server, os, sys
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        path = os.path.join(sys.argv[2], os.path.basename(self.path))
        if not os.path.isfile(path):
            self.send_error(404)
            return
        size = os.path.getsize(path)
        self.send_response(200)
        self.send_header("Content-Length", str(size))
        self.end_headers()
        with open(path, "rb") as f:
            offset = 0
            while offset < size:
                offset += os.sendfile(self.wfile.fileno(), f.fileno(), offset, size - offset)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
PY
python3 "$work/static-server.py" "$sport" "$work/static" >/dev/null 2>&1 &
static_pid=$!
for _ in $(seq 300); do curl -s -o /dev/null "http://127.0.0.1:$sport/none" && break; sleep 0.1; done
curl -sS -f -o /dev/null "http://127.0.0.1:$sport/big.bin"   # same warm-up as for fake-s3
static_speed=$(curl -sS -f -o /dev/null -w '%{speed_download}' "http://127.0.0.1:$sport/big.bin" || echo 0)

# Small GETs: 16 parallel keep-alive connections from one curl process.
: >"$work/urls.txt"
for i in $(seq 1 "$small_requests"); do
    printf 'url = "%s/small/%d.bin"\noutput = "/dev/null"\n' "$base" $((i % 16)) >>"$work/urls.txt"
done
start=$(date +%s.%N)
curl -sS --no-progress-meter --parallel --parallel-immediate --parallel-max 16 -K "$work/urls.txt"
end=$(date +%s.%N)
small_rate=$(python3 -c "print(round($small_requests / ($end - $start)))")
rss_after=$(awk '/VmRSS/ {print $2}' "/proc/$server_pid/status")

python3 - "$fake_speed" "$fake_speed2" "$static_speed" "$small_rate" "$rss_before" "$rss_peak" "$rss_after" <<'PY'
import sys
fake1, fake2, static, rate, before, peak, after = map(float, sys.argv[1:])
gb = lambda v: f"{v / 1e9:.2f} GB/s"
print(f"{'fake-s3 server benchmark':<48}")
print(f"{'1 GiB GET, fake-s3 (best of 2)':<40} {gb(max(fake1, fake2)):>14}   target >= 1 GB/s")
print(f"{'1 GiB GET, static file server (sendfile)':<40} {gb(static):>14}")
print(f"{'16 KiB GETs, 16 parallel connections':<40} {int(rate):>10} /s   target >= 3000/s")
print(f"{'fake-s3 RSS before / peak / after (MiB)':<40} {before/1024:>5.0f} / {peak/1024:.0f} / {after/1024:.0f}   target < 100 MiB")
PY
