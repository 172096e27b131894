#!/usr/bin/env bash
# Installs what `make test`, `make demo` and `make bench` need and is missing:
# Debian packages (the core libraries, openssl for the HTTPS tests' throwaway CAs, the image codecs and vipsthumbnail
# for the image bench, Chromium for the gallery's browser tests, exiftool for the EXIF differential test, ffmpeg for
# the browser test's video and the poster frames' reference decode, FFmpeg's libav* headers for the poster frames; with apt-get
# when root; otherwise prints the command and fails) and the Python tools the
# tests drive (with pip): the S3 tools of the interop tests, the HTTP/2
# protocol library of the HTTP/2 test server, and Playwright (which drives the
# system Chromium: no browser is downloaded).
# With --bench, also rclone and everything --python installs. With --python, also Ceph (mon, OSD, RADOS Gateway) for the RGW interop suite,
# when root; otherwise that suite is skipped (scripts/ceph-rgw.sh says why).
set -euo pipefail

# Prints the packages among "$@" that are not installed.
missing_debs() {
    local pkg
    for pkg in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
            echo "$pkg"
        fi
    done
}

debs=(libcurl4-openssl-dev libssl-dev libsqlite3-dev zlib1g-dev curl openssl strace
      libturbojpeg0-dev libjpeg62-turbo-dev libpng-dev libheif-dev libvips-tools time chromium
      libimage-exiftool-perl ffmpeg libavformat-dev libavcodec-dev libswscale-dev libavutil-dev)
mapfile -t missing < <(missing_debs "${debs[@]}")
if ((${#missing[@]})); then
    if [ "$(id -u)" = 0 ]; then
        echo "install-deps: apt-get install ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq "${missing[@]}" >/dev/null
    else
        echo "install-deps: missing Debian packages. Run:" >&2
        echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
fi

if ! command -v swift >/dev/null 2>&1; then
    echo "install-deps: the Swift 6 toolchain is not on PATH (expected at /opt/swift/usr/bin)." >&2
    exit 1
fi

# --bench: the tools the benchmark rows compare with (rclone; the aws CLI below), besides what tests need.
if [ "${1:-}" = "--bench" ]; then
    mapfile -t tools < <(missing_debs rclone)
    if ((${#tools[@]})) && [ "$(id -u)" = 0 ]; then
        echo "install-deps: apt-get install ${tools[*]} (for the benchmark's reference rows)"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${tools[@]}" >/dev/null
    fi
    set -- --python
fi

if [ "${1:-}" = "--python" ]; then
    mapfile -t ceph < <(missing_debs ceph-mon ceph-osd radosgw ceph-common)
    if ((${#ceph[@]})) && [ "$(id -u)" = 0 ]; then
        echo "install-deps: apt-get install ${ceph[*]} (for the RGW interop suite)"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${ceph[@]}" >/dev/null
    fi
    py=()
    command -v aws >/dev/null 2>&1 || py+=(awscli)
    python3 -c "import boto3" >/dev/null 2>&1 || py+=(boto3)
    python3 -c "import moto.server" >/dev/null 2>&1 || py+=("moto[server]")
    python3 -c "import h2" >/dev/null 2>&1 || py+=(h2)
    # The gallery's browser tests drive the system Chromium (no browser download).
    python3 -c "import playwright" >/dev/null 2>&1 || py+=(playwright)
    if ((${#py[@]})); then
        echo "install-deps: pip install ${py[*]}"
        python3 -m pip install -q "${py[@]}"
    fi
fi
