"""The MPIJob (mpi-operator v0.8) and TrainJob/TrainingRuntime (Trainer v2.3) CRDs, no operator.

What is modelled: a cluster whose recipe installed the Kubeflow APIs but whose
operator does not reconcile them (not deployed, crashed, or its webhook down).
The API server serves the releases' own schemas, so what a check creates is
validated as on a real cluster; no pod ever comes of it.
"""

from __future__ import annotations

from pathlib import Path

from simcluster.components import objects
from simcluster.components.base import Component, Context, Manifest


def upstream() -> Path:
    """The releases' CRD files, copied into the cache (no binary)."""
    return COMPONENT.bin_dir().parent / "upstream"


def manifests(ctx: Context) -> list[Manifest]:
    """The three CRDs, as the releases publish them."""
    return objects.documents(upstream() / "mpi-operator", upstream() / "trainer")


COMPONENT = Component(
    name="kubeflow-crds",
    summary="Kubeflow MPIJob (mpi-operator v0.8) and TrainJob/TrainingRuntime (Trainer v2.3) "
    "CRDs, with no operator reconciling them",
    pin="MPI_OPERATOR_VERSION",
    images={},
    manifests=manifests,
    also_pinned_by=("KUBEFLOW_TRAINER_VERSION",),
)
