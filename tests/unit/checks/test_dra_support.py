"""dra-support on fakes: API discovery, claim lifecycle, driver and slices, the GPU probe."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fakes import FakeKube, daemon_set, ns

from aicr.catalog import load_catalog
from aicr.checks import RunInputs, entrypoint
from aicr.checks.conformance.dra_support import build
from aicr.config import EMPTY_CONFIG, parse_config
from aicr.ctrf import Status
from aicr.recipe.load import parse_recipe
from aicr.result import CheckResult

Obj = dict[str, Any]
DRV = "dra-drv"
RECIPE = f"componentRefs:\n- name: nvidia-dra-driver-gpu\n  namespace: {DRV}\n"
DRA = {"mode": "dra", "settings": [], "notes": []}
DP = {"mode": "device-plugin", "settings": [], "notes": []}
SMI = ("<nvidia_smi_log><driver_version>570.86.16</driver_version><gpu><product_name>H100"
       "</product_name><uuid>{}</uuid></gpu></nvidia_smi_log>")  # fmt: skip


def gpu_node(name: str) -> Obj:
    return {
        "kind": "Node",
        "metadata": {"name": name, "labels": {"nvidia.com/gpu.present": "true"}},
    }


def rslice(node: str) -> Obj:
    devices = [{"name": f"gpu-{i}", "attributes": {"type": {"string": "gpu"},
                "uuid": {"string": f"GPU-{node}-{i}"}}} for i in range(2)]  # fmt: skip
    return {"kind": "ResourceSlice", "metadata": {"name": f"s-{node}"},
            "spec": {"driver": "gpu.nvidia.com", "nodeName": node, "pool": {"name": node},
                     "devices": devices}}  # fmt: skip


def healthy() -> list[Obj]:
    return [ns(DRV), daemon_set(DRV, "kubelet-plugin"), gpu_node("g0"), gpu_node("g1"),
            rslice("g0"), rslice("g1")]  # fmt: skip


def fake(objects: list[Obj], saw: str = "GPU-g1-1", ran_on: str = "g1",
         device: str = "gpu-1", pool: str = "g1") -> FakeKube:  # fmt: skip
    kube = FakeKube(objects)
    kube.discovery[build.API] = list(build.RESOURCES)

    def pod_runs(pod: Obj) -> list[Obj]:
        claim = next(o for o in kube.objects if o["metadata"]["name"] == build.GPU_CLAIM)
        claim["status"] = {
            "allocation": {
                "devices": {
                    "results": [
                        {
                            "driver": "gpu.nvidia.com",
                            "pool": pool,
                            "device": device,
                            "request": "gpu",
                        }
                    ]
                }
            }
        }
        done = {
            **pod,
            "spec": {**pod["spec"], "nodeName": ran_on},
            "status": {
                "phase": "Succeeded",
                "containerStatuses": [
                    {"name": "nvidia-smi", "state": {"terminated": {"exitCode": 0}}}
                ],
            },
        }
        return [done]  # fmt: skip

    kube.script["Pod"] = pod_runs
    kube.logs_of[build.POD] = SMI.format(saw)
    return kube


def run(kube: FakeKube, prepared: Obj | None = DRA, recipe: str = RECIPE) -> CheckResult:
    spec = load_catalog().get("dra-support")
    assert spec is not None
    inputs = RunInputs("r0123abcd", "aicr-validation", parse_recipe(recipe), EMPTY_CONFIG,
                       prepared={"dra-support": prepared} if prepared else {})  # fmt: skip
    return entrypoint.run_check("dra-support", inputs, kube=kube)


def steps(result: CheckResult) -> list[tuple[str, str]]:
    return [(s.title, s.status.value) for s in result.evidence]


def test_dra_mode_passes_and_cleans_up() -> None:
    kube = fake(healthy())
    result = run(kube)
    assert (result.status, result.message) == (
        Status.PASSED, "DRA works: resource.k8s.io/v1 served, claim lifecycle, driver healthy, "
        "a pod's claim got one GPU and its container saw exactly that GPU")  # fmt: skip
    assert steps(result) == [("API resource.k8s.io/v1", "passed"), ("claim lifecycle", "passed"),
                             ("DRA driver", "passed"), ("GPU through a claim", "passed"),
                             ("workloads", "passed")]  # fmt: skip
    assert result.evidence[3].answer == "allocated gpu-1 on g1; ran on g1; saw GPU-g1-1"
    made = [c[3] for c in kube.calls if c[0] == "create"]
    assert made == ["dra-lifecycle", "dra-gpu", "dra-gpu"]
    assert not [o for o in kube.objects if o["metadata"].get("namespace", "").startswith("aicr")]


@pytest.mark.parametrize(("versions", "used"), [
    (["v1beta1"], "v1beta1"), (["v1beta2", "v1beta1"], "v1beta2"),
    (["v1", "v1beta2", "v1beta1"], "v1")])  # fmt: skip
def test_the_newest_served_dra_version_is_used(versions: list[str], used: str) -> None:
    kube = fake(healthy())
    kube.discovery = {f"resource.k8s.io/{v}": list(build.RESOURCES) for v in versions}
    kube.api_groups["resource.k8s.io"] = versions
    result = run(kube)
    assert (result.status, result.message) == (
        Status.PASSED, f"DRA works: resource.k8s.io/{used} served, claim lifecycle, driver "
        "healthy, a pod's claim got one GPU and its container saw exactly that GPU")  # fmt: skip
    api = result.evidence[0]
    assert api.title == f"API resource.k8s.io/{used}"
    assert api.asked == (f"API discovery of resource.k8s.io/{used} (the newest served of "
                         f"resource.k8s.io v1, v1beta2, v1beta1; served: {', '.join(versions)})")


def test_a_container_seeing_another_gpu_or_running_elsewhere_fails() -> None:
    result = run(fake(healthy(), saw="GPU-g1-0", ran_on="g0"))
    assert (result.status, result.message) == (
        Status.FAILED, "1/4 DRA steps failed: GPU through a claim: the pod ran on g0, the device "
        "is on g1; the container saw GPU-g1-0, not exactly the allocated GPU-g1-1")  # fmt: skip


def test_api_not_served_fails_and_skips_the_lifecycle() -> None:
    kube = fake(healthy())
    kube.discovery.clear()
    result = run(kube, prepared=DP)
    assert (result.status, result.message) == (
        Status.FAILED, "1/2 DRA steps failed: API resource.k8s.io/v1: resource.k8s.io/v1 is not "
        "served")  # fmt: skip


def test_a_resource_missing_from_the_api_fails() -> None:
    kube = fake(healthy())
    kube.discovery[build.API] = ["deviceclasses", "resourceclaims", "resourceslices"]
    result = run(kube, prepared=DP)
    assert result.message == ("1/2 DRA steps failed: API resource.k8s.io/v1: resource.k8s.io/v1 "
                              "does not serve resourceclaimtemplates")  # fmt: skip


def test_a_gpu_node_without_slices_and_an_unready_driver_fail() -> None:
    objs = [o for o in healthy() if o["metadata"]["name"] not in ("s-g0", "kubelet-plugin")]
    objs.append(daemon_set(DRV, "kubelet-plugin", want=2, ready=1))
    result = run(fake(objs))
    assert result.status == Status.FAILED
    assert result.message == (
        "1/4 DRA steps failed: DRA driver: DaemonSet dra-drv/kubelet-plugin: 1/2 pods ready; "
        "GPU node g0 has no ResourceSlice with whole GPUs"
    )


def test_device_plugin_mode_says_what_it_did_not_test() -> None:
    result = run(fake(healthy()), prepared=DP)
    assert (result.status, result.message) == (
        Status.PASSED, "DRA API served, claim lifecycle works and the DRA driver is healthy; GPU "
        "allocation through DRA not tested: the recipe advertises whole GPUs through the device "
        "plugin")  # fmt: skip
    assert steps(result)[-2:] == [("GPU through a claim", "informational"), ("workloads", "passed")]


def test_the_allocation_is_read_while_the_pod_holds_the_claim() -> None:
    # Once the pod has ended, Kubernetes may release the claim: a read then shows no
    # allocation. The check must judge the allocation it saw while the pod held it.
    kube = fake(healthy())
    plain_get = kube.get

    def released(kind: str, name: str, namespace: str | None = None) -> Obj | None:
        got = plain_get(kind, name, namespace)
        if kind == "ResourceClaim" and got and name == build.GPU_CLAIM:
            got = {**got, "status": {}}
        return got

    kube.get = released  # type: ignore[method-assign]
    result = run(kube)
    assert result.status == Status.PASSED, result.message
    assert result.evidence[3].answer == "allocated gpu-1 on g1; ran on g1; saw GPU-g1-1"


def test_a_claim_never_allocated_fails_and_is_removed() -> None:
    kube = fake(healthy())
    kube.script["Pod"] = lambda pod: []
    config = parse_config(
        "{kind: ValidateConfig, apiVersion: aicr.nvidia.com/v1alpha1, spec: {validate: "
        "{checks: {dra-support: {params: {probeSeconds: 0.1}}}}}}", "config.yaml")  # fmt: skip
    inputs = RunInputs("r0123abcd", "aicr-validation", parse_recipe(RECIPE), config,
                       prepared={"dra-support": DRA})  # fmt: skip
    result = entrypoint.run_check("dra-support", inputs, kube=kube)
    assert (result.status, result.message) == (
        Status.FAILED, "1/4 DRA steps failed: GPU through a claim: the claim was not "
        "allocated within 0s; the pod: Pending, not scheduled yet")  # fmt: skip
    deleted = [(c[1], c[3]) for c in kube.calls if c[0] == "delete"]
    # the lifecycle claim's own delete, then the session's cleanup, newest first
    claim = "ResourceClaim"
    assert deleted == [(claim, "dra-lifecycle"), ("Pod", "dra-gpu"), (claim, "dra-gpu"),
                       (claim, "dra-lifecycle")]  # fmt: skip
    assert steps(result)[-1] == ("workloads", "passed")


def test_without_the_dra_driver_it_is_skipped() -> None:
    result = run(fake(healthy()), recipe="componentRefs:\n- name: gpu-operator\n")
    assert (result.status, result.message) == (
        Status.SKIPPED,
        "not applicable: the recipe deploys no nvidia-dra-driver-gpu (DRA is not part of the "
        "recipe)",
    )
