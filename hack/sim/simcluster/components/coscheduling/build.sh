# scheduler-plugins (its kube-scheduler with the Coscheduling plugin, and the
# controller that reconciles PodGroup status) from its Go module. Its own k8s.io
# pins are not all published and it does not build against newer libraries, so
# k8s.io/kubernetes and every staging module are pinned to the release it was
# made for; with the PodGroup CRD of the same release and the ElasticQuota CRD
# the controller also watches (`binaries` lists them: the folder is complete
# only with them).
version=${SCHEDULER_PLUGINS_VERSION}_$SCHEDULER_PLUGINS_K8S_VERSION
binaries=(kube-scheduler controller ../upstream/crd.yaml ../upstream/elasticquota-crd.yaml)
build() {
  local m=sigs.k8s.io/scheduler-plugins v=$SCHEDULER_PLUGINS_VERSION k8s=$SCHEDULER_PLUGINS_K8S_VERSION
  module_files "$1/../upstream" "$m" "$v" manifests/coscheduling/crd.yaml
  cp "$(go_module_dir "$m" "$v")/manifests/capacityscheduling/crd.yaml" \
    "$1/../upstream/elasticquota-crd.yaml"
  chmod u+w "$1/../upstream/elasticquota-crd.yaml"
  # The staging modules are those Kubernetes' go.mod replaces with ./staging folders.
  local pins=("k8s.io/kubernetes $k8s") s cmd
  for s in $(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' \
      "$(go_module_dir k8s.io/kubernetes "$k8s")/go.mod"); do
    pins+=("$s v0.${k8s#v1.}")
  done
  for cmd in scheduler:kube-scheduler controller:controller; do
    GO_LDFLAGS="-X k8s.io/component-base/version.gitVersion=$k8s" \
      go_wrapper_build "$1/${cmd#*:}" "$m/cmd/${cmd%%:*}" "$m $v" -- "${pins[@]}"
  done
}
