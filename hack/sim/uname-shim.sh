#!/usr/bin/env bash
# Compile the uname(2) shim (simcluster/runtime/uname_shim.c) into the sim cache,
# keyed by the source's hash; reuses a cached build. Prints the library's path.
# Unsandboxed containers preload it so a program's uname() reports the node's
# kernel (simcluster/runtime/worker.py); without it only the `uname` command does.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src="$here/simcluster/runtime/uname_shim.c"
# shellcheck source=cache.sh
source "$here/cache.sh"
lib="$cache_root/uname-shim-$(sha256sum "$src" | cut -c1-12)/libuname.so"
if [ -f "$lib" ]; then echo "$lib"; exit 0; fi
cc=$(command -v cc || command -v gcc) || { echo "sim-build: no C compiler for the uname shim" >&2; exit 1; }
mkdir -p "$(dirname "$lib")"
start=$(date +%s%N)
"$cc" -shared -fPIC -O2 -Wall -Werror -o "$lib.tmp" "$src" && mv "$lib.tmp" "$lib"
echo "sim-build: uname shim compiled in $(( ($(date +%s%N) - start) / 1000000 )) ms into $lib" >&2
echo "$lib"
