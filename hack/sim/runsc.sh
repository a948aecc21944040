#!/usr/bin/env bash
# Unpack gVisor's `runsc` from its Debian package into the sim cache, keyed by
# RUNSC_DEB_VERSION in pins.env; reuses a cached copy. Prints the binary's path.
# The simulated runtime plays pods whose RuntimeClass handler is `runsc` with it
# (hack/sim/simcluster/runtime/sandbox.py). Needs apt-get (Debian, Ubuntu).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=cache.sh
source "$here/cache.sh"
dir="$cache_root/runsc-${RUNSC_DEB_VERSION//[~+]/_}"
bin="$dir/bin/runsc"
log() { echo "sim-build: $*" >&2; }

if [ -x "$bin" ]; then echo "$bin"; exit 0; fi
refuse_without_route sim-build "fetch runsc $RUNSC_DEB_VERSION" "make sim-build"
if ! command -v apt-get >/dev/null || ! command -v dpkg-deb >/dev/null; then
  log "runsc needs apt-get and dpkg-deb; sandboxed pods will not start"; exit 1
fi
start=$(date +%s)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"  # apt's download user must be able to write here
fetch() { (cd "$work" && apt-get download -qq "runsc=$RUNSC_DEB_VERSION" >/dev/null 2>&1); }
if ! fetch; then
  # a fresh machine has no package lists yet
  [ "$(id -u)" = 0 ] && apt-get update -qq >/dev/null 2>&1 || true
  fetch || { log "could not download the runsc package $RUNSC_DEB_VERSION"; exit 1; }
fi
dpkg-deb -x "$work"/runsc_*.deb "$work/x"
mkdir -p "$dir/bin"
install -m 755 "$work/x/usr/bin/runsc" "$bin.tmp" && mv "$bin.tmp" "$bin"
log "runsc $("$bin" --version | head -1 | cut -d' ' -f3) unpacked in $(( $(date +%s) - start )) s into $dir/bin"
echo "$bin"
