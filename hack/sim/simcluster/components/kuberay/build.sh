# KubeRay's ray-operator from its Go module (no replace directives), with the
# CRDs, the operator's ClusterRole and the webhook configuration of the same
# release (copied first: a complete binary means a complete folder).
version=$KUBERAY_VERSION
binaries=(ray-operator)
build() {
  local m=github.com/ray-project/kuberay/ray-operator
  module_files "$1/../upstream" "$m" "$version" config/crd/bases config/rbac/role.yaml \
    config/webhook/manifests.yaml
  go_wrapper_build "$1/ray-operator" "$m" "$m $version"
}
