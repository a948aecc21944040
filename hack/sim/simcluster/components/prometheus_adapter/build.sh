# prometheus-adapter from its Go module (no replace directives).
version=$PROMETHEUS_ADAPTER_VERSION
binaries=(adapter)
build() {
  go_wrapper_build "$1/adapter" sigs.k8s.io/prometheus-adapter/cmd/adapter \
    "sigs.k8s.io/prometheus-adapter $version"
}
