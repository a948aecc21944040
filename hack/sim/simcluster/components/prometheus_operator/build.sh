# prometheus-operator from its Go module; its go.mod replaces its own two API
# modules with local folders, which are published under the same version.
version=$PROMETHEUS_OPERATOR_VERSION
binaries=(operator)
build() {
  local m=github.com/prometheus-operator/prometheus-operator
  go_wrapper_build "$1/operator" "$m/cmd/operator" "$m $version" -- \
    "$m/pkg/apis/monitoring $version" "$m/pkg/client $version"
}
