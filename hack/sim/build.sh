#!/usr/bin/env bash
# Build the simulated cluster's binaries from Go modules into a cache folder
# outside git, keyed by the pins in pins.env. Reuses a complete cache.
#
# `go install pkg@version` refuses modules whose go.mod has replace
# directives (k8s.io/kubernetes and etcd's server both do), so each is built
# from a throw-away wrapper module that requires it and pins the staging
# modules to the matching published versions.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=cache.sh
source "$here/cache.sh"
key="k8s-${KUBERNETES_VERSION}_etcd-${ETCD_VERSION}_kwok-${KWOK_VERSION}"
bin="$cache_root/$key/bin"
want=(kube-apiserver kube-controller-manager kube-scheduler etcd kwok)

log() { echo "sim-build: $*" >&2; }

# The cluster PKI is generated with the openssl CLI at every sim-up.
if ! command -v openssl >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "installing openssl"
    apt-get update -qq >/dev/null && apt-get install -y -qq openssl >/dev/null
  else
    log "openssl is required (install it with your package manager)"; exit 1
  fi
fi

complete() { for b in "${want[@]}"; do [ -x "$bin/$b" ] || return 1; done; }
complete || refuse_without_route sim-build "build the simulated cluster's control plane" "make sim-build"
# gVisor for pods whose RuntimeClass handler is runsc; without it they fail to start
# as on a node whose containerd has no runsc runtime (not fatal for the rest).
bash "$here/runsc.sh" >/dev/null || log "runsc unavailable: sandboxed pods will not start"
# The uname(2) shim: programs in unsandboxed containers see the node's kernel release.
bash "$here/uname-shim.sh" >/dev/null || log "uname shim unavailable: uname() shows the host's kernel"
if complete; then echo "$bin"; exit 0; fi

mkdir -p "$bin"
work=$(mktemp -d)
trap 'rm -rf "$work"; progress_stop' EXIT
export GOFLAGS="${GOFLAGS:-} -mod=mod"
export CGO_ENABLED=0

build_kubernetes() {
  local dir="$work/kubernetes" staging
  mkdir -p "$dir"
  (cd "$dir" && go mod init aicr.invalid/simbuild/kubernetes >/dev/null 2>&1)
  # The staging modules are the ones kubernetes' own go.mod replaces with
  # ./staging paths; each is published as k8s.io/<name> v0.<minor>.<patch>.
  local gomod
  gomod=$(cd "$dir" && go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  local staging_version="v0.${KUBERNETES_VERSION#v1.}"
  {
    echo "require k8s.io/kubernetes $KUBERNETES_VERSION"
    echo "replace ("
    sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$gomod" |
      while read -r m; do echo "  $m => $m $staging_version"; done
    echo ")"
  } >>"$dir/go.mod"
  cat >"$dir/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
GO
  (cd "$dir" && go mod tidy -e >/dev/null)
  # One `go build` for the three commands: they share most of their packages, and one
  # invocation loads the package graph once and links the three binaries in parallel.
  local todo=() pkgs=() c
  for c in kube-apiserver kube-controller-manager kube-scheduler; do
    [ -x "$bin/$c" ] || { todo+=("$c"); pkgs+=("k8s.io/kubernetes/cmd/$c"); }
  done
  [ ${#todo[@]} -eq 0 ] && return 0
  log "building ${todo[*]} $KUBERNETES_VERSION"
  mkdir -p "$work/out"
  (cd "$dir" && go build -trimpath -ldflags "-s -w \
    -X k8s.io/component-base/version.gitVersion=$KUBERNETES_VERSION \
    -X k8s.io/component-base/version.gitMajor=1 \
    -X k8s.io/component-base/version.gitMinor=$(echo "$KUBERNETES_VERSION" | cut -d. -f2)" \
    -o "$work/out/" "${pkgs[@]}")
  for c in "${todo[@]}"; do mv "$work/out/$c" "$bin/$c"; done
}

build_etcd() {
  [ -x "$bin/etcd" ] && return 0
  local dir="$work/etcd"
  mkdir -p "$dir"
  (cd "$dir" && go mod init aicr.invalid/simbuild/etcd >/dev/null 2>&1)
  cat >>"$dir/go.mod" <<MOD
require go.etcd.io/etcd/server/v3 $ETCD_VERSION
replace (
  go.etcd.io/etcd/api/v3 => go.etcd.io/etcd/api/v3 $ETCD_VERSION
  go.etcd.io/etcd/client/pkg/v3 => go.etcd.io/etcd/client/pkg/v3 $ETCD_VERSION
  go.etcd.io/etcd/client/v3 => go.etcd.io/etcd/client/v3 $ETCD_VERSION
  go.etcd.io/etcd/pkg/v3 => go.etcd.io/etcd/pkg/v3 $ETCD_VERSION
)
MOD
  cat >"$dir/tools.go" <<'GO'
//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3"
GO
  (cd "$dir" && go mod tidy -e >/dev/null)
  log "building etcd $ETCD_VERSION"
  (cd "$dir" && go build -trimpath -ldflags "-s -w" -o "$bin/etcd.tmp" go.etcd.io/etcd/server/v3) && mv "$bin/etcd.tmp" "$bin/etcd"
}

build_kwok() {
  [ -x "$bin/kwok" ] && return 0
  log "building kwok $KWOK_VERSION"
  GOBIN="$work/gobin" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
  mv "$work/gobin/kwok" "$bin/kwok"
}

start=$(date +%s)
progress_start sim-build "the control plane (etcd, kwok, kube-apiserver, -controller-manager, -scheduler)"
build_etcd
build_kwok
build_kubernetes
complete
log "built in $(( $(date +%s) - start )) s into $bin ($(du -sh "$bin" | cut -f1))"
echo "$bin"
