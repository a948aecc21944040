# The CRDs of a Kubeflow MPI Operator and a Kubeflow Trainer release, from their
# Go modules; no controller is built: the component is those APIs served with
# nobody reconciling them.
version=${MPI_OPERATOR_VERSION}_${KUBEFLOW_TRAINER_VERSION}
binaries=(../upstream/mpi-operator/kubeflow.org_mpijobs.yaml
  ../upstream/trainer/trainer.kubeflow.org_trainingruntimes.yaml
  ../upstream/trainer/trainer.kubeflow.org_trainjobs.yaml)
build() {
  module_files "$1/../upstream/mpi-operator" github.com/kubeflow/mpi-operator \
    "$MPI_OPERATOR_VERSION" manifests/base/kubeflow.org_mpijobs.yaml
  module_files "$1/../upstream/trainer" github.com/kubeflow/trainer/v2 "$KUBEFLOW_TRAINER_VERSION" \
    manifests/base/crds/trainer.kubeflow.org_trainingruntimes.yaml \
    manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml
}
