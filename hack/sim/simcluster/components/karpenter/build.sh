# Karpenter's KWOK cloud provider from the karpenter Go module (no replace
# directives), with the chart's CRDs of the same release.
version=$KARPENTER_VERSION
binaries=(karpenter-kwok ../upstream/crds ../upstream/karpenter.kwok.sh_kwoknodeclasses.yaml)
build() {
  module_files "$1/../upstream" sigs.k8s.io/karpenter "$version" kwok/charts/crds \
    kwok/apis/crds/karpenter.kwok.sh_kwoknodeclasses.yaml
  go_wrapper_build "$1/karpenter-kwok" sigs.k8s.io/karpenter/kwok "sigs.k8s.io/karpenter $version"
}
