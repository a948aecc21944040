# Kueue from its Go module (no replace directives), with the CRDs, the
# manager's ClusterRole and secrets Role and the webhook configurations of the
# same release.
version=$KUEUE_VERSION
binaries=(kueue ../upstream/bases ../upstream/role.yaml ../upstream/manager_secrets_role.yaml
  ../upstream/manifests.yaml)
build() {
  module_files "$1/../upstream" sigs.k8s.io/kueue "$version" \
    config/components/crd/bases config/components/rbac/role.yaml \
    config/components/rbac/manager_secrets_role.yaml \
    config/components/webhook/manifests.yaml
  go_wrapper_build "$1/kueue" sigs.k8s.io/kueue/cmd/kueue "sigs.k8s.io/kueue $version"
}
