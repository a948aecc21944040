"""nccl-all-reduce-bw through `aicr validate --phase performance` on the simulated GPU nodes.

The GPU model plays the nccl-tests image (sshd, mpirun, all_reduce_perf); the
two H100 nodes' profile gives 158 GB/s peak, 157.39 at 16 GiB.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from deployhelp import run_check
from harness import SimCluster

from aicr.kube import names
from aicr.kube.target import KubeTarget
from aicr.runner.cleanup import cleanup

CHECK = "nccl-all-reduce-bw"
NODE1 = "gpu-h100-1"
BUSBW = "out-of-place busbw 157.39 GB/s at 17179869184 B"


def validate(
    cluster: SimCluster, tmp_path: Path, gate: str, no_cleanup: bool = False, **params: Any
) -> dict[str, Any]:
    config = tmp_path / "config.yaml"
    knobs = {"worker_start_seconds": 60, "run_seconds": 60, **params}
    config.write_text(
        "kind: ValidateConfig\napiVersion: aicr.nvidia.com/v1alpha1\nspec:\n"
        f"  validate:\n    checks:\n      {CHECK}:\n        params: {knobs}\n"
    )
    constraint = f"    - name: {CHECK}\n      value: '{gate}'\n"
    return run_check(
        cluster, tmp_path, CHECK, "  []\n", constraint, phase="performance", config=str(config),
        no_cleanup=no_cleanup,
    )  # fmt: skip


def steps(test: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["title"]: s for s in test["extra"]["evidence"]}


def test_passes_at_the_gate_across_both_nodes(device_plugin: SimCluster, tmp_path: Path) -> None:
    test = validate(device_plugin, tmp_path, ">= 150")
    assert (test["status"], test["message"]) == (
        "passed",
        f"{BUSBW} satisfies >= 150 across 2 nodes x 8 GPUs (job)",
    )
    got = steps(test)
    assert got["topology"]["answer"] == (
        "gpu-h100-0: 8 GPUs (no NIC resource); gpu-h100-1: 8 GPUs (no NIC resource)"
    )
    assert got["launcher"]["answer"] == "job"
    assert got["all-reduce bus bandwidth"]["status"] == "passed"
    judged = got["all-reduce bus bandwidth"]["answer"]
    assert "16 rank lines" in judged
    # every worker's ranks on its own node, as the GPU model printed them from its state
    assert "nccl-worker-0 on gpu-h100-" in judged and "(8 GPUs): ranks 0-7; devices 0 [" in judged
    assert "nccl-worker-1 on gpu-h100-" in judged and "(8 GPUs): ranks 8-15; devices 0 [" in judged
    assert "# Collective test concluded: all_reduce_perf" in got["launcher log"]["answer"]
    assert "nccl-tests" in got["images"]["answer"] and got["workloads"]["status"] == "passed"


def test_ipc_lock_runs_in_a_privileged_namespace_with_unprivileged_pods(
    device_plugin: SimCluster, tmp_path: Path
) -> None:
    def namespaces() -> list[Any]:
        selector = f"{names.CHECK_LABEL}={CHECK}"
        return list(device_plugin.core().list_namespace(label_selector=selector).items)

    earlier = {n.metadata.name for n in namespaces()}  # earlier runs' may still be terminating
    test = validate(device_plugin, tmp_path, ">= 150", capabilities=["IPC_LOCK"], no_cleanup=True)
    kept = [n for n in namespaces() if n.metadata.name not in earlier]
    try:
        assert test["status"] == "passed", test["message"]
        assert len(kept) == 1, [n.metadata.name for n in kept]
        labels = kept[0].metadata.labels
        assert labels[names.PART_LABEL] == "workloads"
        assert {labels[f"pod-security.kubernetes.io/{m}"] for m in ("enforce", "warn", "audit")} \
            == {"privileged"}  # fmt: skip
        # the pods as the API server admitted them: IPC_LOCK only, nothing privileged
        seen = steps(test)["pod security"]["answer"].splitlines()
        assert seen[0] == "workload namespace Pod Security: privileged"
        fields = ("/node: privileged False, allowPrivilegeEscalation False, "
                  "capabilities.add [IPC_LOCK], hostNetwork False")  # fmt: skip
        assert len(seen) == 3 and all(
            line.startswith(f"nccl-worker-{i}-") and line.endswith(fields)
            for i, line in enumerate(seen[1:])
        ), seen
    finally:
        for ns in kept:
            run_id = ns.metadata.labels[names.RUN_ID_LABEL]
            assert cleanup(KubeTarget(str(device_plugin.kubeconfig)), run_id, all_runs=False) == []


def test_fails_on_the_gate_with_both_numbers(device_plugin: SimCluster, tmp_path: Path) -> None:
    test = validate(device_plugin, tmp_path, ">= 160")
    assert (test["status"], test["message"]) == ("failed", f"{BUSBW} does not satisfy >= 160")


@pytest.mark.parametrize(
    ("fault", "status", "message"),
    [
        (
            "nccl-degraded",
            "failed",
            "out-of-place busbw 62.95 GB/s at 17179869184 B does not satisfy >= 150",
        ),
        (
            "nccl-wrong",
            "failed",
            "data errors: 16252924 wrong elements in the table, out of bounds values 5",
        ),
    ],
)
def test_a_fabric_fault_fails(
    device_plugin: SimCluster, tmp_path: Path, fault: str, status: str, message: str
) -> None:
    device_plugin.fault(fault, NODE1)
    test = validate(device_plugin, tmp_path, ">= 150")
    assert (test["status"], test["message"]) == (status, message)


def test_a_worker_that_never_starts_is_other(device_plugin: SimCluster, tmp_path: Path) -> None:
    # the worker's image only: a node-wide fault also stops the check's own pod when it
    # lands there, which is a different (and separately tested) outcome
    device_plugin.inject_fault("image-pull", node=NODE1, pod_name_prefix="nccl-worker-")
    test = validate(device_plugin, tmp_path, ">= 150", worker_start_seconds=8)
    assert test["status"] == "other"
    assert test["message"].startswith("workers did not all start within 8s: nccl-worker-")
    assert "ImagePullBackOff" in test["message"] or "ErrImagePull" in test["message"]
