# scheduler-plugins (its kube-scheduler with the Coscheduling plugin) from its
# Go module. Its own k8s.io pins are not all published and it does not build
# against newer libraries, so k8s.io/kubernetes and every staging module are
# pinned to the release it was made for; with the PodGroup CRD of the same
# release (`binaries` lists it: the folder is complete only with it).
version=${SCHEDULER_PLUGINS_VERSION}_$SCHEDULER_PLUGINS_K8S_VERSION
binaries=(kube-scheduler ../upstream/crd.yaml)
build() {
  local m=sigs.k8s.io/scheduler-plugins k8s=$SCHEDULER_PLUGINS_K8S_VERSION
  module_files "$1/../upstream" "$m" "$SCHEDULER_PLUGINS_VERSION" manifests/coscheduling/crd.yaml
  # The staging modules are those Kubernetes' go.mod replaces with ./staging folders.
  local pins=("k8s.io/kubernetes $k8s") s
  for s in $(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' \
      "$(go_module_dir k8s.io/kubernetes "$k8s")/go.mod"); do
    pins+=("$s v0.${k8s#v1.}")
  done
  GO_LDFLAGS="-X k8s.io/component-base/version.gitVersion=$k8s" \
    go_wrapper_build "$1/kube-scheduler" "$m/cmd/scheduler" "$m $SCHEDULER_PLUGINS_VERSION" -- "${pins[@]}"
}
