"""Nodes an autoscaler adds get the sim's GPU model from their instance type's profile."""

from __future__ import annotations

from typing import Any

from simcluster.gpu import modes as gpu_modes
from simcluster.nodes import provisioned
from simcluster.nodes.layout import PROFILE_ANNOTATION


def karpenter_node(instance_type: str, **annotations: str) -> dict[str, Any]:
    return {
        "metadata": {
            "name": "gpu-pool-abcde",
            "labels": {provisioned.NODEPOOL_LABEL: "gpu", provisioned.INSTANCE_TYPE_LABEL:
                       instance_type},
            "annotations": {"kwok.x-k8s.io/node": "fake", **annotations},
        }
    }  # fmt: skip


def test_a_new_gpu_node_gets_the_profile_labels_and_kernel() -> None:
    extra = provisioned.decoration(karpenter_node("p5.48xlarge"))
    assert extra is not None
    assert extra["annotations"] == {PROFILE_ANNOTATION: "p5-h100"}
    assert extra["labels"]["nvidia.com/gpu.present"] == "true"
    assert extra["labels"]["nvidia.com/gpu.count"] == "8"
    assert extra["labels"]["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"
    assert extra["kernel"]
    assert provisioned.gpu_count_of(karpenter_node("p5.48xlarge")) == 8


def test_a_described_node_unknown_type_or_static_node_needs_nothing() -> None:
    done = karpenter_node("p5.48xlarge", **{PROFILE_ANNOTATION: "p5-h100"})
    assert provisioned.decoration(done) is None
    assert provisioned.decoration(karpenter_node("x9.huge")) is None
    static = {"metadata": {"name": "gpu-h100-0", "labels": {provisioned.INSTANCE_TYPE_LABEL:
                                                           "p5.48xlarge"}}}  # fmt: skip
    assert provisioned.decoration(static) is None


def test_a_cpu_instance_type_gets_its_profile_but_no_gpus() -> None:
    extra = provisioned.decoration(karpenter_node("m7i.4xlarge"))
    assert extra is not None and extra["labels"] == {}
    assert provisioned.gpu_count_of(karpenter_node("m7i.4xlarge")) == 0


def test_the_resource_slice_publishes_the_nodes_own_count() -> None:
    body = gpu_modes.resource_slice("gpu-pool-abcde", 3)
    assert body["spec"]["nodeName"] == "gpu-pool-abcde"
    assert [d["name"] for d in body["spec"]["devices"]] == ["gpu-0", "gpu-1", "gpu-2"]


def test_the_recorded_mode_is_what_was_switched_to(tmp_path: Any) -> None:
    assert gpu_modes.recorded_mode(tmp_path) == "device-plugin"
    gpu_modes.record_mode(tmp_path, "dra")
    assert gpu_modes.recorded_mode(tmp_path) == "dra"
    (tmp_path / gpu_modes.MODE_FILE).write_text("nonsense\n")
    assert gpu_modes.recorded_mode(tmp_path) == "device-plugin"


def test_reset_after_karpenter_is_removed_finds_no_node_claims(monkeypatch: Any) -> None:
    """Discovery may still list NodeClaim after its CRD went: listing then answers 404."""
    from types import SimpleNamespace

    from kubernetes.dynamic.exceptions import NotFoundError

    def gone() -> Any:
        raise NotFoundError(SimpleNamespace(status=404, reason="Not Found", data=b"", headers={},
                                            getheaders=lambda: {}))  # fmt: skip

    stale = SimpleNamespace(get=gone)
    dyn = SimpleNamespace(resources=SimpleNamespace(get=lambda **kw: stale))
    monkeypatch.setattr(provisioned.kube, "dynamic", lambda api: dyn)
    monkeypatch.setattr(provisioned, "provisioned_nodes", lambda api: [])
    assert provisioned.remove_all(object()) == []  # type: ignore[arg-type]
