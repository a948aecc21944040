# prometheus-operator and its config reloader from the operator's Go module
# (its go.mod replaces its own two API modules with local folders; they are
# published under the same version). The CRDs and the operator's ClusterRole
# are taken from the same module, as published, into ../manifests.
version=$PROMETHEUS_OPERATOR_VERSION
binaries=(operator prometheus-config-reloader ../manifests/monitoring.coreos.com_servicemonitors.yaml)
build() {
  local m=github.com/prometheus-operator/prometheus-operator
  for cmd in operator prometheus-config-reloader; do
    [ -x "$1/$cmd" ] && continue
    GO_LDFLAGS="-X github.com/prometheus/common/version.Version=${version#v}" \
      go_wrapper_build "$1/$cmd" "$m/cmd/$cmd" "$m $version" -- \
      "$m/pkg/apis/monitoring $version" "$m/pkg/client $version"
  done
  local src
  src=$(go_module_dir "$m" "$version")
  mkdir -p "$1/../manifests"
  cp "$src"/example/prometheus-operator-crd/*.yaml \
    "$src/example/rbac/prometheus-operator/prometheus-operator-cluster-role.yaml" "$1/../manifests/"
}
