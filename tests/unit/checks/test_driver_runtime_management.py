"""driver-runtime-management on fakes: advertised versions, the probe's verdicts, cleanup."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fakes import FakeKube

from aicr.checks import RunInputs, entrypoint
from aicr.checks.conformance.driver_runtime_management import build
from aicr.config import EMPTY_CONFIG
from aicr.ctrf import Status
from aicr.kube.gpu_inventory import Target
from aicr.recipe.load import parse_recipe

Obj = dict[str, Any]
RECIPE = "componentRefs:\n- name: gpu-operator\n  namespace: gpu-operator\n"
DP = {"mode": "device-plugin", "settings": [], "notes": []}
SMI = ("<nvidia_smi_log><driver_version>{}</driver_version><gpu><product_name>H100"
       "</product_name><uuid>GPU-1</uuid></gpu></nvidia_smi_log>")  # fmt: skip
LABEL = "label nvidia.com/cuda.driver-version.full (or its parts)"


def node(name: str, **labels: str) -> Obj:
    ready = [{"type": "Ready", "status": "True"}]
    return {"kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": {},
            "status": {"allocatable": {"nvidia.com/gpu": "8"}, "conditions": ready}}  # fmt: skip


def fake(nodes: list[Obj], exit_code: int = 0, driver: str = "570.86.16") -> FakeKube:
    kube = FakeKube(nodes)

    def done(pod: Obj) -> list[Obj]:
        state = {"terminated": {"exitCode": exit_code}}
        return [{**pod, "status": {"phase": "Succeeded" if exit_code == 0 else "Failed",
                 "containerStatuses": [{"name": "nvidia-smi", "state": state}]}}]  # fmt: skip

    kube.script["Pod"] = done
    for n in nodes:
        kube.logs_of[f"nvidia-smi-{n['metadata']['name']}"] = SMI.format(driver)
    return kube


def run(kube: FakeKube) -> Any:
    inputs = RunInputs("r0123abcd", "aicr-validation", parse_recipe(RECIPE), EMPTY_CONFIG,
                       prepared={"driver-runtime-management": DP})  # fmt: skip
    return entrypoint.run_check("driver-runtime-management", inputs, kube=kube)


FULL = {"nvidia.com/cuda.driver-version.full": "570.86.16"}


def test_every_node_matching_passes_with_one_gpu_each_and_cleans_up() -> None:
    kube = fake([node("g0", **FULL), node("g1", **FULL)])
    result = run(kube)
    assert (result.status, result.message) == (
        Status.PASSED,
        "driver injected and as advertised on 2 GPU nodes: g0 (570.86.16), g1 (570.86.16)",
    )
    pods = [o for o in kube.calls if o[0] == "create"]
    assert len(pods) == 2
    assert [(s.title, s.status.value) for s in result.evidence][-1] == ("workloads", "passed")


def test_a_mismatch_and_a_node_advertising_nothing_fail_by_name() -> None:
    result = run(fake([node("g0", **FULL), node("g1")], driver="570.124.06"))
    assert (result.status, result.message) == (
        Status.FAILED,
        f"2/2 GPU nodes failed: node g0: driver 570.124.06 loaded, the platform advertises "
        f"570.86.16 ({LABEL}) | node g1: the platform advertises no driver version for the node "
        "(no nvidia.com/cuda.driver-version.full label, no ResourceSlice driverVersion) to "
        "compare 570.124.06 with",
    )


@pytest.mark.parametrize(("code", "problem"), [
    (127, "nvidia-smi was not injected into the container by the runtime"),
    (9, "nvidia-smi exited 9: <nvidia_smi_log><driver_version>570.86.16</driver_version><gpu>"
        "<product_name>H100</product_name><uuid>GPU-1</uuid></gpu></nvidia_smi_log>"),
])  # fmt: skip
def test_a_probe_that_fails_names_why(code: int, problem: str) -> None:
    result = run(fake([node("g0", **FULL)], exit_code=code))
    assert result.message == f"1/1 GPU nodes failed: node g0: {problem}"


def test_parts_labels_and_slices_are_advertisements_too() -> None:
    parts = node("g0", **{"nvidia.com/cuda.driver.major": "570", "nvidia.com/cuda.driver.minor":
                          "86", "nvidia.com/cuda.driver.rev": "16"})  # fmt: skip
    assert build.advertised(parts, None) == ("570.86.16", LABEL)
    assert build.advertised(node("g1"), "570.1") == ("570.1", "ResourceSlice driverVersion")
    slices = [
        {
            "spec": {
                "driver": "gpu.nvidia.com",
                "nodeName": "g1",
                "devices": [
                    {
                        "attributes": {
                            "type": {"string": "gpu"},
                            "driverVersion": {"version": "570.1"},
                        }
                    }
                ],
            }
        }
    ]
    assert build.slice_drivers(slices) == {"g1": "570.1"}


def test_no_gpu_node_fails() -> None:
    result = run(fake([]))
    assert (result.status, result.message) == (
        Status.FAILED,
        "1/1 GPU nodes failed: GPU nodes: no GPU node could be examined",
    )


def test_judge_without_a_version_fails() -> None:
    problems, _ = build.judge(Target("g0", 1, 8, None), "nothing", 0, SMI.format("1"))
    assert problems and "advertises no driver version" in problems[0]


@pytest.mark.parametrize(("loaded", "advertised", "same"), [
    ("570.124.06", "570.124.6", True),  # nvidia-smi against the DRA driver's semver
    ("570.124.06", "570.124.06", True),
    ("570.124.06", "570.124.60", False),
    ("570.124.06", "570.124", False),
], ids=["leading-zero", "equal", "differs", "shorter"])  # fmt: skip
def test_driver_versions_are_compared_as_versions(loaded: str, advertised: str, same: bool) -> None:
    source = "ResourceSlice driverVersion"
    problems, _ = build.judge(Target("g0", 1, 8, advertised), source, 0, SMI.format(loaded))
    assert problems == ([] if same else [
        f"driver {loaded} loaded, the platform advertises {advertised} ({source})"])
