"""The GPU model's sharing on the simulated cluster: what the GPU Operator's values advertise,
what pods given a replica or a MIG device see, and the two sharing faults."""

from __future__ import annotations

from typing import Any

from gpu_sharing import NODE, quiet, shared
from harness import SimCluster
from manifests import GPU_TOLERATION, pod

RUN = {"aicr.dev/run-id": "r0123abcd"}
LIST = (
    "if command -v nvidia-smi >/dev/null; then nvidia-smi -L; else echo no-smi; fi; "
    "echo END; exec sleep 60"
)


def lister(name: str, resource: str = "nvidia.com/gpu") -> dict[str, Any]:
    return pod(name, image="ubuntu:22.04", command=["sh", "-c", LIST], labels=dict(RUN),
               tolerations=[GPU_TOLERATION], nodeName=NODE,
               resources={"limits": {resource: "1"}})  # fmt: skip


def listed(cluster: SimCluster, ns: str, names: list[str]) -> dict[str, list[str]]:
    """Each pod's `nvidia-smi -L` lines, once every one of them printed (all alive at once)."""

    def logs() -> dict[str, list[str]] | None:
        out = {n: cluster.core().read_namespaced_pod_log(n, ns) for n in names}
        if not all("END" in t for t in out.values()):
            return None
        return {n: t.split("END")[0].strip().splitlines() for n, t in out.items()}

    return cluster.wait_for(logs, timeout=90, message=f"listings of {len(names)} pods")


def _node(cluster: SimCluster) -> tuple[dict[str, str], dict[str, str]]:
    n = cluster.core().read_node(NODE)
    return n.metadata.labels, n.status.allocatable


def test_time_slicing_shares_a_gpu_between_more_pods_than_gpus(
    cluster: SimCluster, namespace: str
) -> None:
    with shared(cluster, "gpu-sharing-time-slicing"):
        labels, allocatable = _node(cluster)
        assert allocatable["nvidia.com/gpu"] == "32"
        assert (labels["nvidia.com/gpu.replicas"], labels["nvidia.com/gpu.sharing-strategy"],
                labels["nvidia.com/gpu.product"]) == ("4", "time-slicing",
                                                      "NVIDIA-H100-80GB-HBM3-SHARED")  # fmt: skip
        names = [f"ts-{i}" for i in range(9)]
        cluster.apply([lister(n) for n in names], namespace)
        seen = listed(cluster, namespace, names)
        uuids = [lines[0].split("(UUID: ")[1].rstrip(")") for lines in seen.values()]
        assert all(len(lines) == 1 for lines in seen.values()), seen
        assert len(set(uuids)) == 8  # every GPU, one of them held by two pods at once
        quiet(cluster, names, namespace)


def test_replicas_not_shared_leaves_the_pod_beyond_the_gpus_without_one(
    cluster: SimCluster, namespace: str
) -> None:
    with shared(cluster, "gpu-sharing-time-slicing"):
        cluster.fault("replicas-not-shared", NODE)
        names = [f"ns-{i}" for i in range(9)]
        cluster.apply([lister(n) for n in names], namespace)
        seen = listed(cluster, namespace, names)
        given = [lines for lines in seen.values() if lines != ["no-smi"]]
        assert len(given) == 8 and all(len(lines) == 1 for lines in given), seen
        assert len({lines[0] for lines in given}) == 8  # each GPU to one pod only
        quiet(cluster, names, namespace)


def test_mig_single_and_mixed_hand_out_one_mig_device(cluster: SimCluster, namespace: str) -> None:
    with shared(cluster, "gpu-sharing-mig"):
        labels, allocatable = _node(cluster)
        assert allocatable["nvidia.com/gpu"] == "56"
        assert labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb"
        cluster.apply(lister("single"), namespace)
        [line, mig] = listed(cluster, namespace, ["single"])["single"]
        assert line.startswith("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-")
        assert mig.startswith("  MIG 1g.10gb     Device  0: (UUID: MIG-")
        quiet(cluster, ["single"], namespace)
    mixed = {"mig": {"strategy": "mixed"}, "migManager": {"config": {"default": "all-balanced"}}}
    with shared(cluster, "gpu-sharing-mig", mixed):
        labels, allocatable = _node(cluster)
        assert (allocatable["nvidia.com/gpu"], allocatable["nvidia.com/mig-3g.40gb"]) == ("0", "8")
        cluster.apply(lister("mixed", "nvidia.com/mig-3g.40gb"), namespace)
        [_, mig] = listed(cluster, namespace, ["mixed"])["mixed"]
        assert mig.startswith("  MIG 3g.40gb     Device  0: (UUID: MIG-")
        quiet(cluster, ["mixed"], namespace)


def test_mig_not_applied_hands_out_a_whole_gpu(cluster: SimCluster, namespace: str) -> None:
    with shared(cluster, "gpu-sharing-mig"):
        cluster.fault("mig-not-applied", NODE)
        cluster.apply(lister("whole"), namespace)
        lines = listed(cluster, namespace, ["whole"])["whole"]
        assert len(lines) == 1 and lines[0].startswith("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-")
        # what the labels still say
        assert _node(cluster)[0]["nvidia.com/mig.strategy"] == "single"
        quiet(cluster, ["whole"], namespace)
