#!/usr/bin/env bash
# Lint the GitHub workflows with actionlint (`make lint`). actionlint is built
# from its Go module at the pinned version into a cache outside git, the way the
# simulated cluster's binaries are (no wheel of a Python wrapper carries the
# binary for every platform). The shellcheck and pyflakes integrations are off so
# the verdict does not depend on what else a machine has installed.
set -euo pipefail
ACTIONLINT_VERSION=v1.7.12
cache=${AICR_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/aicr-tools}/actionlint-$ACTIONLINT_VERSION
if [ ! -x "$cache/actionlint" ]; then
  if ! command -v go >/dev/null; then
    echo "actionlint: Go is needed to build github.com/rhysd/actionlint@$ACTIONLINT_VERSION" >&2
    exit 1
  fi
  mkdir -p "$cache"
  GOBIN="$cache" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" \
    "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION"
fi
cd "$(dirname "$0")/.."
exec "$cache/actionlint" -shellcheck= -pyflakes= "$@"
