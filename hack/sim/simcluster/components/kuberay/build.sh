# KubeRay's ray-operator from its Go module (no replace directives), with the
# CRDs, the operator's ClusterRole and the webhook configuration of the same
# release.
version=$KUBERAY_VERSION
binaries=(ray-operator ../upstream/bases ../upstream/role.yaml ../upstream/manifests.yaml)
build() {
  local m=github.com/ray-project/kuberay/ray-operator
  module_files "$1/../upstream" "$m" "$version" config/crd/bases config/rbac/role.yaml \
    config/webhook/manifests.yaml
  go_wrapper_build "$1/ray-operator" "$m" "$m $version"
}
