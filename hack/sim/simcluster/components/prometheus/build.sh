# Prometheus from its Go module: module version v0.XYY.P is release X.YY.P.
# (The Debian package's 2.42 is built without kubernetes service discovery.)
# Its go.mod pins fsnotify back to v1.7.0 with a replace, repeated here. The
# web UI's assets are not embedded (no `builtinassets` tag): the API serves.
version=$PROMETHEUS_VERSION
binaries=(prometheus)
build() {
  local minor=${version#v0.}
  minor=${minor%%.*}
  local release="$((minor / 100)).$((minor % 100)).${version##*.}"
  GO_LDFLAGS="-X github.com/prometheus/common/version.Version=$release" \
    go_wrapper_build "$1/prometheus" github.com/prometheus/prometheus/cmd/prometheus \
    "github.com/prometheus/prometheus $version" -- "github.com/fsnotify/fsnotify v1.7.0"
}
