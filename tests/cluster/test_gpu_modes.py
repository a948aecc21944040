"""GPU allocation modes: device plugin (default), DRA, and the broken dual state."""

from __future__ import annotations

from typing import Any

from harness import SimCluster
from kubernetes import client
from manifests import GPU_TOLERATION, pod

CLAIM = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaim",
    "metadata": {"name": "one-gpu"},
    "spec": {
        "devices": {
            "requests": [
                {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 1}}
            ]
        }
    },
}


def _slices(cluster: SimCluster) -> list[Any]:
    dyn = cluster.api()
    from kubernetes.dynamic import DynamicClient

    res = DynamicClient(dyn).resources.get(api_version="resource.k8s.io/v1", kind="ResourceSlice")
    return [s for s in res.get().items if s.spec.driver == "gpu.nvidia.com"]


def _gpu_capacity(cluster: SimCluster) -> dict[str, str | None]:
    return {
        n.metadata.name: (n.status.capacity or {}).get("nvidia.com/gpu")
        for n in cluster.core().list_node().items
        if n.metadata.name in cluster.gpu_nodes
    }


def test_device_plugin_mode_is_the_default(cluster: SimCluster) -> None:
    assert cluster.mode == "device-plugin"
    assert _gpu_capacity(cluster) == {n: "8" for n in cluster.gpu_nodes}
    assert _slices(cluster) == []
    # the DRA driver without whole GPUs (resources.gpus.enabled: false): only the
    # ComputeDomain classes the chart renders
    assert _classes(cluster) == ["compute-domain-daemon.nvidia.com",
                                 "compute-domain-default-channel.nvidia.com"]  # fmt: skip


def _classes(cluster: SimCluster) -> list[str]:
    return sorted(c.metadata.name for c in
                  client.ResourceV1Api(cluster.api()).list_device_class().items)  # fmt: skip


def test_dra_mode_allocates_a_claim_on_a_gpu_node(cluster: SimCluster, namespace: str) -> None:
    cluster.set_mode("dra")
    assert _classes(cluster) == ["compute-domain-daemon.nvidia.com",
                                 "compute-domain-default-channel.nvidia.com", "gpu.nvidia.com",
                                 "mig.nvidia.com", "vfio.gpu.nvidia.com"]  # fmt: skip
    assert _gpu_capacity(cluster) == {n: None for n in cluster.gpu_nodes}
    slices = _slices(cluster)
    assert sorted(s.spec.nodeName for s in slices) == sorted(cluster.gpu_nodes)
    assert all(len(s.spec.devices) == 8 for s in slices)
    cluster.apply(CLAIM, namespace)
    p = pod(
        "uses-gpu",
        tolerations=[GPU_TOLERATION],
        resourceClaims=[{"name": "gpu", "resourceClaimName": "one-gpu"}],
        resources={"claims": [{"name": "gpu"}]},
    )
    cluster.apply(p, namespace)
    running = cluster.wait_for_phase(namespace, "uses-gpu", "Running")
    node = running["spec"]["nodeName"]
    assert node in cluster.gpu_nodes
    claim = client.ResourceV1Api(cluster.api()).read_namespaced_resource_claim("one-gpu", namespace)
    results = claim.status.allocation.devices.results
    assert len(results) == 1
    assert results[0].driver == "gpu.nvidia.com" and results[0].pool == node
    assert [r.name for r in claim.status.reserved_for] == ["uses-gpu"]


def test_dra_mode_has_no_device_plugin_gpus(cluster: SimCluster, namespace: str) -> None:
    cluster.set_mode("dra")
    res = {"limits": {"nvidia.com/gpu": "1"}}
    cluster.apply(pod("legacy", resources=res, tolerations=[GPU_TOLERATION]), namespace)

    def unschedulable(p: dict[str, Any]) -> bool:
        return any(
            c["type"] == "PodScheduled" and "Insufficient nvidia.com/gpu" in c.get("message", "")
            for c in p.get("status", {}).get("conditions") or []
        )

    cluster.wait_for_pod(namespace, "legacy", unschedulable)


def test_dual_mode_advertises_gpus_both_ways(cluster: SimCluster) -> None:
    cluster.set_mode("dual")
    assert _gpu_capacity(cluster) == {n: "8" for n in cluster.gpu_nodes}
    assert len(_slices(cluster)) == len(cluster.gpu_nodes)
    cluster.set_mode("device-plugin")
    assert _slices(cluster) == []
    assert "gpu.nvidia.com" not in _classes(cluster)  # switching back removes the GPU classes
