#!/usr/bin/env bash
# Build the upstream AI conformance suite's test binary (kubernetes-sigs/ai-conformance,
# `go test -c ./test`) from a checkout at the pinned revision into the sim cache,
# outside git. Reuses a binary already built for that revision; prints its path.
#
#   hack/sim/build-upstream-test.sh DIR
#
# Its code is not ours: DIR is a checkout you made (git clone, then git checkout
# AI_CONFORMANCE_REVISION of pins.env). The build takes the machine's Go lock,
# /tmp/aicr-go.lock, so only one Go build runs at a time.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=cache.sh
source "$here/cache.sh"
src=${1:?usage: build-upstream-test.sh DIR (a checkout of kubernetes-sigs/ai-conformance at $AI_CONFORMANCE_REVISION)}
log() { echo "upstream-build: $*" >&2; }

[ -f "$src/go.mod" ] && [ -d "$src/test" ] || {
  log "$src is not a checkout of kubernetes-sigs/ai-conformance (no go.mod and test/)"; exit 2; }
head=$(git -C "$src" rev-parse HEAD 2>/dev/null) || {
  log "$src is not a git checkout, so its revision cannot be told; expected $AI_CONFORMANCE_REVISION"
  exit 2; }
case "$head" in
  "$AI_CONFORMANCE_REVISION"*) ;;
  *) log "$src is at ${head:0:7}, expected $AI_CONFORMANCE_REVISION (git -C $src checkout $AI_CONFORMANCE_REVISION)"
     exit 2 ;;
esac

out="$cache_root/ai-conformance-$AI_CONFORMANCE_REVISION/ai-conformance.test"
if [ -x "$out" ]; then echo "$out"; exit 0; fi
refuse_without_route upstream-build "build the upstream suite's test binary" "bash hack/sim/build-upstream-test.sh $src"
mkdir -p "$(dirname "$out")"
start=$(date +%s)
log "building $src ./test at $AI_CONFORMANCE_REVISION (go test -c)"
(cd "$src" && flock /tmp/aicr-go.lock go test -c -trimpath -o "$out.tmp" ./test)
mv "$out.tmp" "$out"
log "built in $(( $(date +%s) - start )) s: $out"
echo "$out"
