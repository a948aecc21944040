"""Per-container devices: a private /dev, GPUs as allocated, nvidia-smi and the node's kernel.

Probe pods (ubuntu, busybox, CUDA images carrying the run label) report what
they see; faults of the registry break the isolation the way real nodes do.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from gpu_operator import CRD
from harness import SimCluster
from kubernetes import client
from manifests import GPU_TOLERATION, pod

RUN = {"aicr.dev/run-id": "r0123abcd"}
NODE = "gpu-h100-0"
BASE = ["fd", "full", "null", "ptmx", "pts", "random", "shm", "stderr", "stdin", "stdout",
        "termination-log", "tty", "urandom", "zero"]  # fmt: skip
REPORT = (
    "echo dev $(ls /dev | tr '\\n' ' '); echo env ${NVIDIA_VISIBLE_DEVICES:-none}; "
    "echo kernel $(uname -r) $(cut -d' ' -f3 /proc/version); "
    "if command -v nvidia-smi >/dev/null; then nvidia-smi -L; else echo no-smi; fi; "
    "echo END; exec sleep 60"
)


@pytest.fixture
def gpus(cluster: SimCluster) -> Iterator[SimCluster]:
    if cluster.mode != "device-plugin":
        cluster.set_mode("device-plugin")
    yield cluster
    cluster.heal()


def reporter(name: str, gpus: int = 0, image: str = "ubuntu:22.04", **spec: Any) -> dict[str, Any]:
    extra: dict[str, Any] = {"resources": {"limits": {"nvidia.com/gpu": str(gpus)}}} if gpus else {}
    spec.setdefault("nodeName", NODE)
    return pod(name, image=image, command=["sh", "-c", REPORT], labels=dict(RUN),
               tolerations=[GPU_TOLERATION], **extra, **spec)  # fmt: skip


def report(cluster: SimCluster, ns: str, name: str) -> dict[str, Any]:
    """What the pod saw: its /dev entries, NVIDIA_VISIBLE_DEVICES, kernel, nvidia-smi -L."""
    log = cluster.wait_for(
        lambda: (t := cluster.core().read_namespaced_pod_log(name, ns)) and "END" in t and t,
        timeout=60, message=f"report of {name}")  # fmt: skip
    lines = log.splitlines()
    return {
        "dev": lines[0].split()[1:],
        "env": lines[1].split()[1],
        "kernel": lines[2].split()[1:],
        "smi": lines[3:-1],
    }


def nvidia(dev: list[str]) -> list[str]:
    return [d for d in dev if d.startswith("nvidia")]


def test_each_container_sees_exactly_its_own_gpus(gpus: SimCluster, namespace: str) -> None:
    cuda, busybox = "nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04", "docker.io/library/busybox:1.36"
    gpus.apply([reporter("two", 2), reporter("three", 3, image=cuda),
                reporter("none", image=busybox)], namespace)  # fmt: skip
    two, three, none = (report(gpus, namespace, n) for n in ("two", "three", "none"))
    held = [sorted(int(d[6:]) for d in nvidia(r["dev"]) if d[6:].isdigit()) for r in (two, three)]
    assert [len(h) for h in held] == [2, 3] and not set(held[0]) & set(held[1])
    for r, n in ((two, 2), (three, 3)):
        assert sorted(set(nvidia(r["dev"])) - {f"nvidia{i}" for i in range(8)}) == [
            "nvidia-uvm", "nvidiactl"]
        uuids = r["env"].split(",")
        assert len(uuids) == n and all(u.startswith("GPU-") for u in uuids)
        assert [line.split("(UUID: ")[1].rstrip(")") for line in r["smi"]] == uuids
        assert all("NVIDIA H100 80GB HBM3" in line for line in r["smi"])
    assert none["dev"] == BASE
    assert (none["env"], none["smi"]) == ("none", ["no-smi"])
    kernel = gpus.core().read_node(NODE).status.node_info.kernel_version
    assert two["kernel"] == none["kernel"] == [kernel, kernel]


@pytest.mark.parametrize(
    ("fault", "spec"),
    [
        ("device-leak", {}),
        ("permissive-toolkit", {"env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]}),
        ("runtimeclass-leak", {"runtimeClassName": "nvidia"}),
    ],
)
def test_a_leak_fault_shows_every_gpu_to_a_pod_without_an_allocation(
    gpus: SimCluster, namespace: str, fault: str, spec: dict[str, Any]
) -> None:
    gpus.apply({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                "metadata": {"name": "nvidia"}, "handler": "nvidia"})  # fmt: skip
    gpus.apply(reporter("healthy", **spec), namespace)
    assert nvidia(report(gpus, namespace, "healthy")["dev"]) == []
    gpus.fault(fault, NODE)
    gpus.apply(reporter("leaky", **spec), namespace)
    seen = report(gpus, namespace, "leaky")
    assert len([d for d in nvidia(seen["dev"]) if d[6:].isdigit()]) == 8
    assert len(seen["smi"]) == 8


def test_shared_device_hands_one_gpu_to_two_pods(gpus: SimCluster, namespace: str) -> None:
    gpus.fault("shared-device", NODE)
    gpus.apply(reporter("first", 1), namespace)
    first = report(gpus, namespace, "first")
    gpus.apply(reporter("second", 1), namespace)
    second = report(gpus, namespace, "second")
    assert first["env"] == second["env"]


def claim() -> dict[str, Any]:
    """A fresh ResourceClaim for two GPUs (apply fills in the namespace of the dict it gets)."""
    return {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "two-gpus"},
    "spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
        "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 2}}]}},
    }  # fmt: skip


def claim_user(name: str) -> dict[str, Any]:
    body = reporter(name, nodeSelector={"kubernetes.io/hostname": NODE})
    del body["spec"]["nodeName"]
    body["spec"]["resourceClaims"] = [{"name": "gpus", "resourceClaimName": "two-gpus"}]
    body["spec"]["containers"][0]["resources"] = {"claims": [{"name": "gpus"}]}
    return body


def test_dra_devices_as_the_scheduler_allocated_them(gpus: SimCluster, namespace: str) -> None:
    gpus.set_mode("dra")
    gpus.apply(claim(), namespace)
    gpus.apply(claim_user("claimer"), namespace)
    seen = report(gpus, namespace, "claimer")
    allocated = gpus.apply(claim(), namespace)[0]  # read back with its allocation
    results = allocated["status"]["allocation"]["devices"]["results"]
    want = sorted(f"nvidia{r['device'].split('-')[1]}" for r in results)
    assert sorted(d for d in nvidia(seen["dev"]) if d[6:].isdigit()) == want
    assert len(seen["smi"]) == 2


def prepare_failed(gpus: SimCluster, namespace: str, pod: str) -> Any:
    """The kubelet's FailedPrepareDynamicResources event of the namespace, once there."""

    def event() -> Any:
        items = gpus.core().list_namespaced_event(namespace).items
        return next((e for e in items if e.reason == "FailedPrepareDynamicResources"), None)

    return gpus.wait_for(event, timeout=30, message=f"FailedPrepareDynamicResources event; "
                         f"pod: {gpus._pod_summary(namespace, pod)}")  # fmt: skip


def test_dra_driver_down_leaves_the_pod_creating(gpus: SimCluster, namespace: str) -> None:
    gpus.set_mode("dra")
    gpus.fault("dra-driver-down", NODE)
    gpus.apply(claim(), namespace)
    gpus.apply(claim_user("stuck"), namespace)
    ev = prepare_failed(gpus, namespace, "stuck")
    assert "gpu.nvidia.com not found in the list of registered DRA plugins" in ev.message
    p = gpus.pod(namespace, "stuck")
    assert p["status"]["phase"] == "Pending"
    assert p["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "ContainerCreating"


def test_a_time_slicing_config_fails_prepare_while_its_gate_is_off(
    gpus: SimCluster, namespace: str
) -> None:
    # the recipes' DRA driver values set no featureGates: TimeSlicingSettings is off
    gpus.set_mode("dra")
    shared = claim()
    shared["spec"]["devices"]["config"] = [{"requests": ["gpus"], "opaque": {
        "driver": "gpu.nvidia.com", "parameters": {
            "apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig",
            "sharing": {"strategy": "TimeSlicing"}}}}]  # fmt: skip
    made = gpus.apply(shared, namespace)[0]
    gpus.apply(claim_user("sliced"), namespace)
    ev = prepare_failed(gpus, namespace, "sliced")
    uid = made["metadata"]["uid"]
    assert ev.message == (
        "Failed to prepare dynamic resources: prepare dynamic resources: NodePrepareResources "
        f"failed for claim {namespace}/two-gpus: error preparing devices for claim "
        f"{namespace}/two-gpus:{uid}: prepare devices failed: error validating GPU config: "
        "unknown GPU sharing strategy: TimeSlicing"
    )
    p = gpus.pod(namespace, "sliced")
    assert p["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "ContainerCreating"


def test_the_gpu_runtime_is_the_handler_the_cluster_policy_names(
    gpus: SimCluster, namespace: str
) -> None:
    """operator.runtimeClass renamed: that handler is the NVIDIA runtime, `nvidia` is unknown."""
    name = "nvidia-container-runtime"
    gpus.apply(CRD)
    policy = {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy",
              "metadata": {"name": "renamed-runtime"}, "spec": {"operator": {"runtimeClass": name}}}
    gpus.wait_for(lambda: gpus.apply(policy), message="ClusterPolicy served")
    custom = client.CustomObjectsApi(gpus.api())
    try:
        gpus.apply([{"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                     "metadata": {"name": n}, "handler": n} for n in (name, "nvidia")])
        gpus.fault("runtimeclass-leak", NODE)
        gpus.apply([reporter("renamed", runtimeClassName=name),
                    reporter("old-name", runtimeClassName="nvidia")], namespace)
        assert len(report(gpus, namespace, "renamed")["smi"]) == 8
        events = gpus.wait_for(lambda: gpus.core().list_namespaced_event(
            namespace, field_selector="involvedObject.name=old-name").items, message="event")
        assert [(e.reason, e.message.rsplit(": ", 1)[-1]) for e in events] == [
            ("FailedCreatePodSandBox", 'no runtime for "nvidia" is configured')]
        assert gpus.pod(namespace, "old-name")["status"]["phase"] == "Pending"
    finally:
        custom.delete_cluster_custom_object("nvidia.com", "v1", "clusterpolicies",
                                            "renamed-runtime")
