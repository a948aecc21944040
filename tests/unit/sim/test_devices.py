"""Which GPUs a container gets and sees: device-plugin indices, DRA claims, leak faults."""

from __future__ import annotations

from typing import Any

import pytest
from simcluster.gpu import devices
from simcluster.gpu.devices import DevicePlugin, Request


def _pod(uid: str, *gpus: int, node: str = "n0", phase: str = "Pending") -> dict[str, Any]:
    containers = [{"name": f"c{i}", "resources": {"limits": {"nvidia.com/gpu": str(n)}}}
                  for i, n in enumerate(gpus)]  # fmt: skip
    return {"metadata": {"uid": uid}, "spec": {"nodeName": node, "containers": containers},
            "status": {"phase": phase}}  # fmt: skip


def never(node: str) -> bool:
    return False


def test_indices_per_container_never_twice_and_freed_when_the_pod_ends() -> None:
    plugin = DevicePlugin()
    plugin.observe(_pod("a", 3), False, never)
    plugin.observe(_pod("b", 2, 1), False, never)
    plugin.observe(_pod("c", 2, node="n1"), False, never)
    assert plugin.of("n0", "a", "c0") == [0, 1, 2]
    assert (plugin.of("n0", "b", "c0"), plugin.of("n0", "b", "c1")) == ([3, 4], [5])
    assert plugin.of("n1", "c", "c0") == [0, 1]
    plugin.observe(_pod("b", 2, 1), False, never)  # a second event changes nothing
    assert plugin.of("n0", "b", "c0") == [3, 4]
    plugin.observe(_pod("a", 3, phase="Succeeded"), False, never)
    plugin.observe(_pod("d", 4), False, never)
    assert plugin.of("n0", "d", "c0") == [0, 1, 2, 6]
    plugin.observe(_pod("d", 4), True, never)
    assert not plugin.holds("d") and plugin.holds("b")


def test_shared_device_fault_hands_out_gpus_in_use() -> None:
    plugin = DevicePlugin()
    plugin.observe(_pod("a", 2), False, never)
    plugin.observe(_pod("b", 1), False, lambda node: node == "n0")
    assert plugin.of("n0", "a", "c0") == [0, 1]
    assert plugin.of("n0", "b", "c0") == [0]


def test_pods_without_gpus_or_node_are_not_admitted() -> None:
    plugin = DevicePlugin()
    plugin.observe(_pod("a", 0), False, never)
    unbound = _pod("b", 1)
    unbound["spec"]["nodeName"] = None
    plugin.observe(unbound, False, never)
    assert not plugin.holds("a") and not plugin.holds("b")


def test_claims_a_container_references_from_this_nodes_pool() -> None:
    pod = {
        "spec": {
            "resourceClaims": [
                {"name": "gpus", "resourceClaimName": "probe-claim"},
                {"name": "tmpl", "resourceClaimTemplateName": "t"},
                {"name": "unused", "resourceClaimName": "other"},
            ]
        },
        "status": {"resourceClaimStatuses": [{"name": "tmpl", "resourceClaimName": "gen-1"}]},
    }
    container = {"resources": {"claims": [{"name": "gpus"}, {"name": "tmpl"}]}}
    assert devices.claim_names(pod, container) == ["probe-claim", "gen-1"]
    assert devices.claim_names(pod, {}) == []
    claim = {"status": {"allocation": {"devices": {"results": [
        {"driver": "gpu.nvidia.com", "pool": "n0", "device": "gpu-3"},
        {"driver": "gpu.nvidia.com", "pool": "n0", "device": "gpu-1"},
        {"driver": "gpu.nvidia.com", "pool": "n1", "device": "gpu-2"},
        {"driver": "other.example", "pool": "n0", "device": "gpu-4"}]}}}}  # fmt: skip
    assert devices.claim_devices(claim, "n0") == [1, 3]
    assert devices.claim_devices(claim, "n2") == []
    assert devices.claim_devices({"status": {}}, "n0") == []
    # what the kubelet's pod-resources API lists for it on n0: this node's devices, any driver
    assert devices.claim_resources({**claim, "metadata": {"name": "c", "namespace": "t"}},
                                   "n0") == {"claimName": "c", "claimNamespace": "t",
                                             "claimResources": [
        {"driverName": "gpu.nvidia.com", "poolName": "n0", "deviceName": "gpu-3"},
        {"driverName": "gpu.nvidia.com", "poolName": "n0", "deviceName": "gpu-1"},
        {"driverName": "other.example", "poolName": "n0", "deviceName": "gpu-4"}]}  # fmt: skip


EVERY = list(range(8))


@pytest.mark.parametrize(
    ("request_", "want"),
    [
        (Request([2, 3], 8), [2, 3]),
        (Request([], 8), []),
        (Request([], 8, env_all=True), []),  # an unprivileged container's own env is ignored
        (Request([], 8, env_all=True, privileged=True), EVERY),
        (Request([], 8, ("permissive-toolkit",), env_all=True), EVERY),
        (Request([], 8, ("permissive-toolkit",)), []),
        (Request([], 8, gpu_runtime_class=True), []),
        (Request([], 8, ("runtimeclass-leak",), gpu_runtime_class=True), EVERY),
        (Request([], 8, ("runtimeclass-leak",)), []),
        (Request([1], 8, ("device-leak",)), EVERY),
        (Request([], 8, ("device-leak",)), EVERY),
    ],
)
def test_what_a_container_sees(request_: Request, want: list[int]) -> None:
    assert devices.visible(request_) == want
