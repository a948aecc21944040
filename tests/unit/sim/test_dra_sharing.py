"""The DRA driver's sharing gates and a claim's GpuConfig, as the sim prepares claims."""

from __future__ import annotations

from typing import Any

import pytest
from simcluster.gpu import dra_sharing, modes


def _claim(*strategies: str, allocated: bool = True, driver: str = "gpu.nvidia.com") -> Any:
    configs = [
        {"requests": ["gpu"], "opaque": {"driver": driver, "parameters": {
            "apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig",
            "sharing": {"strategy": s}}}}
        for s in strategies
    ]  # fmt: skip
    claim: dict[str, Any] = {
        "metadata": {"name": "shared", "namespace": "w", "uid": "u-1"},
        "spec": {"devices": {"requests": [{"name": "gpu"}], "config": configs}},
    }
    if allocated:
        claim["status"] = {"allocation": {"devices": {"results": [], "config": [
            {"source": "FromClaim", **c} for c in configs]}}}  # fmt: skip
    return claim


def test_the_gates_are_off_unless_the_values_turn_them_on() -> None:
    # the recipes' values set no featureGates: the chart renders no FEATURE_GATES
    shipped = modes.dra_values("dra")
    assert dra_sharing.gates(shipped) == {"TimeSlicingSettings": False, "MPSSupport": False}
    assert dra_sharing.feature_gates_env(shipped) is None
    on = {"featureGates": {"TimeSlicingSettings": True, "MPSSupport": "true", "DynamicMIG": False}}
    assert dra_sharing.gates(on) == {"TimeSlicingSettings": True, "MPSSupport": True}
    # the template's range walks the map in key order, a comma after each
    assert dra_sharing.feature_gates_env(on) == (
        "DynamicMIG=false,MPSSupport=true,TimeSlicingSettings=true,"
    )


GATE_OFF = (
    "Failed to prepare dynamic resources: prepare dynamic resources: NodePrepareResources "
    "failed for claim w/shared: error preparing devices for claim w/shared:u-1: prepare "
    "devices failed: error validating GPU config: unknown GPU sharing strategy: "
)


@pytest.mark.parametrize(
    ("claim", "gates", "error"),
    [
        (_claim("TimeSlicing"), {}, GATE_OFF + "TimeSlicing"),
        (_claim("MPS"), {"TimeSlicingSettings": True}, GATE_OFF + "MPS"),
        (_claim("TimeSlicing"), {"TimeSlicingSettings": True}, None),
        (_claim("MPS"), {"MPSSupport": True}, None),
        (_claim("Exclusive"), {"TimeSlicingSettings": True, "MPSSupport": True},
         GATE_OFF + "Exclusive"),
        (_claim(), {}, None),  # no config: the plugin's default GpuConfig, nothing to share
        (_claim("TimeSlicing", driver="other.example.com"), {}, None),  # not this driver's
        (_claim("TimeSlicing", allocated=False), {}, GATE_OFF + "TimeSlicing"),
    ],
    ids=["ts-off", "mps-off", "ts-on", "mps-on", "unknown", "no-config", "other-driver",
         "spec-only"],
)  # fmt: skip
def test_prepare_fails_a_strategy_whose_gate_is_off(
    claim: Any, gates: dict[str, bool], error: str | None
) -> None:
    assert dra_sharing.prepare_error(claim, dra_sharing.gates({"featureGates": gates})) == error


MPS_NOT_READY = (
    "Failed to prepare dynamic resources: prepare dynamic resources: NodePrepareResources "
    "failed for claim w/shared: error preparing devices for claim w/shared:u-1: prepare "
    "devices failed: error applying config: MPS control daemon is not yet ready: waiting for "
    "MPS control daemon to come online"
)


@pytest.mark.parametrize(
    ("claim", "gates", "error"),
    [
        (_claim("MPS"), {"MPSSupport": True}, MPS_NOT_READY),
        (_claim("TimeSlicing"), {"TimeSlicingSettings": True}, None),  # no daemon to wait for
        (_claim("MPS"), {}, GATE_OFF + "MPS"),  # validation fails before any daemon starts
        (_claim(), {"MPSSupport": True}, None),
    ],
    ids=["mps", "time-slicing", "mps-gate-off", "no-config"],
)  # fmt: skip
def test_an_mps_daemon_that_never_gets_ready_fails_prepare(
    claim: Any, gates: dict[str, bool], error: str | None
) -> None:
    on = dra_sharing.gates({"featureGates": gates})
    assert dra_sharing.prepare_error(claim, on, mps_daemon_ready=False) == error
    assert dra_sharing.prepare_error(claim, on) == (None if error == MPS_NOT_READY else error)


def test_the_plugin_daemonset_carries_the_gates_the_sim_reads_back() -> None:
    on = {"featureGates": {"TimeSlicingSettings": True}}
    ds = dra_sharing.kubelet_plugin(on)
    assert (ds["metadata"]["name"], ds["metadata"]["namespace"]) == (
        "nvidia-dra-driver-gpu-kubelet-plugin", "nvidia-dra-driver")  # fmt: skip
    gpus = ds["spec"]["template"]["spec"]["containers"][1]
    assert (gpus["name"], gpus["env"]) == (
        "gpus", [{"name": "FEATURE_GATES", "value": "TimeSlicingSettings=true,"}])  # fmt: skip
    assert dra_sharing.env_gates(ds) == {"TimeSlicingSettings": True, "MPSSupport": False}
    # the chart's default values: no variable, every sharing gate off
    assert dra_sharing.env_gates(dra_sharing.kubelet_plugin({})) == dra_sharing.DEFAULT_GATES


def test_the_check_reads_the_sims_plugin_and_slices_as_it_reads_a_real_clusters() -> None:
    from aicr.checks.conformance.gpu_sharing import build

    slices = [modes.resource_slice("gpu-h100-0", 8)]
    both = dra_sharing.kubelet_plugin({"featureGates": {"MPSSupport": True,
                                                        "TimeSlicingSettings": True}})  # fmt: skip
    found = build.dra_offers([both], slices)
    assert [(o.name, o.node, o.units) for o in found] == [
        ("DRA TimeSlicing", "gpu-h100-0", 8), ("DRA MPS", "gpu-h100-0", 8)]  # fmt: skip
    assert build.dra_offers([dra_sharing.kubelet_plugin({})], slices) == []
