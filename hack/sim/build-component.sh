#!/usr/bin/env bash
# Build or unpack platform components into the sim cache, keyed by their pins.
#
#   bash hack/sim/build-component.sh NAME...   prints one bin folder per NAME
#   bash hack/sim/build-component.sh all       every component
#   bash hack/sim/build-component.sh --check NAME...   builds nothing: exit 1 naming
#                                              each one not built (exit 0: all are)
#
# Each component's recipe is hack/sim/simcluster/components/<name>/build.sh,
# which sets `version` (from pins.env) and `binaries` (files under BIN, or
# beside it, whose presence means complete) and defines `build BIN`.
# A complete cache folder is reused; otherwise the recipe runs and the time it
# took is printed, with a line every PROGRESS_SECONDS (30) while it runs. Go builds
# take /tmp/aicr-go.lock (one at a time per machine). No build runs in a network
# namespace without a route out (the simulated cluster's): it could fetch
# nothing, so the script refuses there with one line, exit 3, before starting.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=cache.sh
source "$here/cache.sh"
export GOFLAGS="${GOFLAGS:-} -mod=mod"
export CGO_ENABLED=0

log() { echo "sim-build: $*" >&2; }

# go_wrapper_build OUT PACKAGE REQUIRE... [-- REPLACE...]
# Builds PACKAGE from a throw-away module requiring each "module version"
# (and replacing each "module version" pair with that published version;
# $GO_LDFLAGS adds linker flags, e.g. -X for a version string):
# `go install m@v` refuses modules with replace directives and reads the
# version list, which the proxy here may refuse.
go_wrapper_build() {
  local out=$1 pkg=$2; shift 2
  local dir
  dir=$(mktemp -d)
  (cd "$dir" && go mod init aicr.invalid/simbuild/component >/dev/null 2>&1)
  local mode=require
  {
    for spec in "$@"; do
      if [ "$spec" = -- ]; then mode=replace; continue; fi
      set -- $spec
      if [ $mode = require ]; then echo "require $1 $2"; else echo "replace $1 => $1 $2"; fi
    done
  } >>"$dir/go.mod"
  printf '//go:build tools\n\npackage tools\n\nimport _ "%s"\n' "$pkg" >"$dir/tools.go"
  # go mod tidy's download chatter goes to a log shown only when it fails.
  flock /tmp/aicr-go.lock sh -c "cd '$dir' && { go mod tidy -e >tidy.log 2>&1 || { cat tidy.log >&2; exit 1; }; } && go build -trimpath -ldflags '-s -w ${GO_LDFLAGS:-}' -o '$out.tmp' '$pkg'"
  mv "$out.tmp" "$out"
  rm -rf "$dir"
}

# go_module_dir MODULE VERSION: the module's folder in the Go module cache (downloaded if needed).
go_module_dir() {
  flock /tmp/aicr-go.lock env GOFLAGS= go mod download -json "$1@$2" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'
}

# module_files DEST MODULE VERSION PATH...: copy files or folders of a module's
# release (its CRDs, RBAC, webhook configurations) into DEST, replacing it.
module_files() {
  local dest=$1 src; src=$(go_module_dir "$2" "$3"); shift 3
  rm -rf "$dest"
  mkdir -p "$dest"
  for p in "$@"; do cp -r "$src/$p" "$dest/"; done
  chmod -R u+w "$dest"
}

# deb_extract BIN PACKAGE VERSION PATH...: unpack a Debian package, keep PATHs in BIN.
deb_extract() {
  local bin=$1 pkg=$2 version=$3; shift 3
  local dir
  dir=$(mktemp -d)
  if ! (cd "$dir" && apt-get download -qq "$pkg=$version" >/dev/null 2>&1); then
    log "updating the package lists to fetch $pkg $version"
    apt-get update -qq >/dev/null
    (cd "$dir" && apt-get download -qq "$pkg=$version" >/dev/null)
  fi
  dpkg-deb -x "$dir"/*.deb "$dir/root"
  for p in "$@"; do cp "$dir/root/$p" "$bin/"; done
  rm -rf "$dir"
}

check=false
if [ "${1:-}" = --check ]; then check=true; shift; fi
names=("$@")
if [ "${1:-}" = all ]; then
  names=()
  for recipe in "$here"/simcluster/components/*/build.sh; do
    d=$(basename "$(dirname "$recipe")"); names+=("${d//_/-}")
  done
fi
unbuilt=0
for name in "${names[@]}"; do
  recipe="$here/simcluster/components/${name//-/_}/build.sh"
  [ -f "$recipe" ] || { log "no component named $name"; exit 2; }
  (
    # shellcheck source=/dev/null
    source "$recipe"
    bin="$cache_root/components/$name-$version/bin"
    complete() { for b in "${binaries[@]}"; do [ -e "$bin/$b" ] || return 1; done; }
    if ! complete; then
      if $check; then
        echo "$name $version is not built (build it outside the simulated cluster's network" \
          "namespace: bash hack/sim/build-component.sh $name)" >&2
        exit 1
      fi
      refuse_without_route sim-build "build $name $version" "bash hack/sim/build-component.sh $name"
      mkdir -p "$bin"
      start=$(date +%s)
      log "building $name $version"
      progress_start sim-build "$name $version"
      trap progress_stop EXIT
      build "$bin"
      complete || { log "$name: build left ${binaries[*]} incomplete in $bin"; exit 1; }
      log "built $name $version in $(($(date +%s) - start)) s ($(du -sh "$bin" | cut -f1))"
    fi
    $check || echo "$bin"
  ) || { code=$?; $check && [ $code = 1 ] || exit $code; unbuilt=1; }
done
exit $unbuilt
