#!/usr/bin/env bash
# `make gallery`: the web gallery against the bundled fake S3 server. Seeds a sample bucket (once), starts the
# fake server on a free port, syncs a library in .gallery-library and serves it; prints the page's address.
# Ctrl-C stops both. BIN selects the build folder (default .build/release).
set -euo pipefail
BIN=${BIN:-.build/release}
ROOT=${GALLERY_FAKE_S3_ROOT:-.fake-s3-gallery}
STORE=${GALLERY_STORE:-.gallery-library}
ASSETS=${GALLERY_ASSETS:-300}

if [ ! -d "$ROOT/photos" ]; then
    "$BIN/fake-s3" seed --root "$ROOT" --assets "$ASSETS"
fi
port=${GALLERY_S3_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
"$BIN/fake-s3" serve --root "$ROOT" --port "$port" --access-key demo --secret-key demo-secret >/dev/null &
server=$!
trap 'kill "$server" 2>/dev/null' EXIT
# Wait (up to 10 s) until the fake server accepts connections.
for _ in $(seq 1 100); do
    curl -s -o /dev/null "http://127.0.0.1:$port/" && break
    kill -0 "$server" 2>/dev/null || { echo "gallery: the fake server exited" >&2; exit 1; }
    sleep 0.1
done
export AWS_ACCESS_KEY_ID=demo AWS_SECRET_ACCESS_KEY=demo-secret AWS_ENDPOINT_URL="http://127.0.0.1:$port"
export CLOUDASSETS_STORE="$STORE" CLOUDASSETS_BUCKET=photos
"$BIN/cloudassets" sync --quiet
echo "gallery: fake S3 on $AWS_ENDPOINT_URL; in another terminal, with the same environment:" >&2
echo "  AWS_ACCESS_KEY_ID=demo AWS_SECRET_ACCESS_KEY=demo-secret AWS_ENDPOINT_URL=$AWS_ENDPOINT_URL \\" >&2
echo "  CLOUDASSETS_STORE=$STORE CLOUDASSETS_BUCKET=photos $BIN/cloudassets sync" >&2
"$BIN/cloudassets" serve "$@"
