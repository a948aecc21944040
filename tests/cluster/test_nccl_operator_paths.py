"""nccl-all-reduce-bw's TrainJob and MPIJob paths against the releases' own CRDs, no operator.

The `kubeflow-crds` component serves Trainer v2.3.0's TrainJob/TrainingRuntime and
mpi-operator v0.8.0's MPIJob as published, and nothing reconciles them: the API
server must accept the objects the check makes (schemas and validation rules
enforced), and the check must end `other`, bounded by its worker start budget,
saying no operator acted.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from harness import SimCluster
from kubernetes import client
from test_nccl_all_reduce_bw import steps, validate

pytestmark = pytest.mark.components("kubeflow-crds")
BUDGET = 5


def test_trainjob_is_accepted_and_other_when_nothing_reconciles_it(
    device_plugin: SimCluster, tmp_path: Path
) -> None:
    test = validate(device_plugin, tmp_path, ">= 150", worker_start_seconds=BUDGET)
    assert (test["status"], test["message"]) == ("other", (
        f"workers did not all start within {BUDGET}s: 0 of 2 worker pods exist; "
        "TrainJob nccl has no status: no operator reconciled it"))  # fmt: skip
    got = steps(test)
    assert got["launcher"]["answer"] == "trainjob"
    made = got["workloads"]["asked"]
    assert "created TrainingRuntime " in made and "created TrainJob " in made, made
    assert got["workloads"]["status"] == "passed"  # deleted again, nothing left behind


def test_mpijob_is_accepted_and_other_when_nothing_reconciles_it(
    device_plugin: SimCluster, tmp_path: Path
) -> None:
    ext = client.ApiextensionsV1Api(device_plugin.api())
    for plural in ("trainjobs", "trainingruntimes"):  # the Trainer uninstalled: MPIJob is next
        ext.delete_custom_resource_definition(f"{plural}.trainer.kubeflow.org")
    device_plugin.wait_for(
        lambda: not [c for c in ext.list_custom_resource_definition().items
                     if c.spec.group == "trainer.kubeflow.org"],
        timeout=30, message="the Trainer CRDs to go")  # fmt: skip
    started = time.monotonic()
    test = validate(device_plugin, tmp_path, ">= 150", worker_start_seconds=BUDGET)
    assert (test["status"], test["message"]) == ("other", (
        f"workers did not all start within {BUDGET}s: 0 of 2 worker pods exist; "
        "MPIJob nccl has no status: no operator reconciled it"))  # fmt: skip
    assert time.monotonic() - started < 60
    got = steps(test)
    assert got["launcher"]["answer"] == "mpijob"
    assert "created MPIJob " in got["workloads"]["asked"]
    assert got["workloads"]["status"] == "passed"
