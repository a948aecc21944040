#!/usr/bin/env bash
# Install the inference-perf check's load generator (aiperf) into the sim cache: a
# virtual environment keyed by AIPERF_VERSION, the pinned requirements and the
# tokenizer writer, plus a tiny tokenizer in a Hugging Face cache beside it, so the
# generator runs with HF_HUB_OFFLINE=1 and never downloads anything at run time.
# Reuses a complete install; prints its folder. The runtime plays the check's
# `aiperf` image with it (simcluster/runtime/images.py).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=cache.sh
source "$here/cache.sh"
reqs="$here/loadgen-requirements.txt"
# Keyed by the pins and by what writes the stand-in tokenizer (simcluster.runtime.images).
digest=$(cat "$reqs" "$here/simcluster/serving/tokenizer.py" | sha256sum | cut -c1-12)
dir="$cache_root/aiperf-${AIPERF_VERSION}_${digest}"
# The repo id the stand-in tokenizer is cached under (simcluster.runtime.images.TOKENIZER_REPO).
tokenizer_repo="aicr-sim/tokenizer"

log() { echo "sim-loadgen: $*" >&2; }

if [ -f "$dir/complete" ]; then echo "$dir"; exit 0; fi
refuse_without_route sim-loadgen "install aiperf $AIPERF_VERSION" "bash hack/sim/loadgen.sh"
grep -qx "aiperf==$AIPERF_VERSION" "$reqs" || {
  log "$reqs does not pin aiperf==$AIPERF_VERSION (pins.env AIPERF_VERSION)"; exit 1; }
mkdir -p "$cache_root"
exec 9>"$cache_root/.aiperf.lock"
flock 9  # one install at a time; a second caller then finds it complete
if [ -f "$dir/complete" ]; then echo "$dir"; exit 0; fi
start=$(date +%s)
# A venv's scripts name their interpreter by absolute path, so it is built where it
# lives; `complete` is written last, and an interrupted install is redone.
rm -rf "$dir"
python3 -m venv "$dir/venv"
log "installing aiperf $AIPERF_VERSION ($(grep -c '==' "$reqs") pinned packages) into $dir"
"$dir/venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$reqs"
PYTHONPATH="$here" "$dir/venv/bin/python" -m simcluster.serving.tokenizer "$dir/hf" "$tokenizer_repo" >/dev/null
"$dir/venv/bin/aiperf" --version >/dev/null
# The tokenizer loads as AIPerf loads it, offline.
HF_HOME="$dir/hf" HF_HUB_OFFLINE=1 "$dir/venv/bin/python" -c \
  "import sys; from aiperf.common.tokenizer import Tokenizer; Tokenizer.from_pretrained(sys.argv[1])" \
  "$tokenizer_repo" >/dev/null 2>&1 || { log "the stand-in tokenizer does not load offline"; exit 1; }
touch "$dir/complete"
log "installed in $(( $(date +%s) - start )) s ($(du -sh "$dir" | cut -f1))"
echo "$dir"
