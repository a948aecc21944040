"""secure-accelerator-access on fakes: the plan, the report, each probe's verdict, cleanup."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fakes import FakeKube

from aicr.checks import RunInputs, entrypoint
from aicr.checks.conformance import secure_accelerator_access as check
from aicr.checks.conformance.secure_accelerator_access import build
from aicr.config import EMPTY_CONFIG, parse_config
from aicr.ctrf import Status
from aicr.errors import InvalidRequestError
from aicr.kube.gpu_inventory import Target
from aicr.recipe.load import parse_recipe

Obj = dict[str, Any]
NAME = "secure-accelerator-access"
RECIPE = "componentRefs:\n- name: gpu-operator\n  namespace: gpu-operator\n"
RC = {"name": "nvidia", "source": "gpu-operator operator.runtimeClass=nvidia (chart default)"}
DP = {"mode": "device-plugin", "runtimeClass": RC}
DRA = {"mode": "dra", "runtimeClass": RC}


def node(name: str, gpus: int = 8) -> Obj:
    ready = [{"type": "Ready", "status": "True"}]
    status = {"allocatable": {"nvidia.com/gpu": str(gpus)}, "conditions": ready}
    return {"kind": "Node", "metadata": {"name": name, "labels": {}}, "spec": {}, "status": status}


def rslice(name: str) -> Obj:
    """The DRA driver's slice of ``name``'s eight GPUs (what DRA mode counts)."""
    devices = [{"name": f"gpu-{i}", "attributes": {"type": {"string": "gpu"}}} for i in range(8)]
    return {"kind": "ResourceSlice", "metadata": {"name": f"s-{name}"},
            "spec": {"driver": "gpu.nvidia.com", "nodeName": name, "pool": {"name": name},
                     "devices": devices}}  # fmt: skip


RUNTIME_CLASS = {"kind": "RuntimeClass", "metadata": {"name": "nvidia"}, "handler": "nvidia"}


def report(gpus: list[int], node_name: str = "g0") -> str:
    """What the probe script prints in a container that sees ``gpus``."""
    if not gpus:
        return f"dev:\nsmi: absent\n{build.END}\n"
    dev = " ".join([*(f"nvidia{i}" for i in gpus), "nvidiactl", "nvidia-uvm"])
    smi = "".join(f"smi-out: GPU {k}: NVIDIA H100 (UUID: GPU-{node_name}-{i})\n"
                  for k, i in enumerate(gpus))  # fmt: skip
    return f"dev: {dev}\nsmi: 0\n{smi}{build.END}\n"


def world(kube: FakeKube, leak: str | None = None) -> None:
    """Pods start, each container reports what a node with ``leak`` shows it."""
    given: dict[str, int] = {}

    def start(pod: Obj) -> list[Obj]:
        spec = pod["spec"]
        where = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        on = where["nodeSelectorTerms"][0]["matchExpressions"][0]["values"][0]
        for c in spec["containers"]:
            claimed = bool((c.get("resources") or {}).get("limits") or
                           (c.get("resources") or {}).get("claims"))  # fmt: skip
            env_all = any(e["value"] == "all" for e in c.get("env") or [])
            gpus: list[int] = []
            if claimed:
                index = 0 if leak == "shared-device" else given.get(on, 0)
                given[on] = index + 1
                gpus = [index]
            if leak == "device-leak" or (not claimed and (
                (leak == "permissive-toolkit" and env_all)
                or (leak == "runtimeclass-leak" and spec.get("runtimeClassName")))):  # fmt: skip
                gpus = list(range(8))
            kube.logs_of[(pod["metadata"]["name"], c["name"])] = report(gpus, on)
        running = [{"name": c["name"], "state": {"running": {}}} for c in spec["containers"]]
        return [{**pod, "spec": {**spec, "nodeName": on},
                 "status": {"phase": "Running", "containerStatuses": running}}]  # fmt: skip

    kube.script["Pod"] = start


def run(
    kube: FakeKube, prepared: Obj = DP, recipe: str = RECIPE, config: Any = EMPTY_CONFIG
) -> Any:
    inputs = RunInputs("r0123abcd", "aicr-validation", parse_recipe(recipe), config,
                       prepared={NAME: prepared})  # fmt: skip
    return entrypoint.run_check(NAME, inputs, kube=kube)


def healthy(leak: str | None = None, nodes: int = 2) -> FakeKube:
    names = [f"g{i}" for i in range(nodes)]
    kube = FakeKube([*map(node, names), *map(rslice, names), RUNTIME_CLASS])
    world(kube, leak)
    return kube


STEPS = ["GPU nodes", "GPU RuntimeClass", "positive", "negative (g0)", "negative (g1)",
         "multi-container", "cross-pod", "bypass NVIDIA_VISIBLE_DEVICES=all (g0)",
         "bypass NVIDIA_VISIBLE_DEVICES=all (g1)", "bypass RuntimeClass nvidia (g0)",
         "bypass RuntimeClass nvidia (g1)", "workloads"]  # fmt: skip


@pytest.mark.parametrize("prepared", [DP, DRA], ids=["device-plugin", "dra"])
def test_healthy_nodes_pass_every_probe_and_clean_up(prepared: Obj) -> None:
    kube = healthy()
    result = run(kube, prepared)
    mode = "DRA" if prepared is DRA else "device plugin"
    assert (result.status, result.message) == (
        Status.PASSED, f"9 probes on 2 GPU nodes ({mode}): each container saw only what was "
        "allocated to it; no bypass showed a GPU")  # fmt: skip
    assert [s.title for s in result.evidence] == STEPS
    assert all(s.status.value in ("passed", "informational") for s in result.evidence)
    claims = [c for c in kube.calls if c[:2] == ("create", "ResourceClaim")]
    assert len(claims) == (4 if prepared is DRA else 0)
    made = [c for c in kube.calls if c[0] == "create"]
    gone = [c for c in kube.calls if c[0] == "delete"]
    assert len(made) == len(gone) and not [o for o in kube.objects if o["kind"] == "Pod"]
    multi = next(s for s in result.evidence if s.title == "multi-container")
    assert multi.answer == (
        "multi-container/claimed: /dev: nvidia1 nvidia-uvm nvidiactl; nvidia-smi -L: exit 0: "
        "GPU 0: NVIDIA H100 (UUID: GPU-g1-1) | multi-container/unclaimed: /dev: no nvidia*; "
        "nvidia-smi -L: not on PATH")  # fmt: skip


EVERY = "8 GPU device nodes (nvidia0 nvidia1 nvidia2 nvidia3 nvidia4 nvidia5 nvidia6 nvidia7 " \
        "nvidia-uvm nvidiactl) and nvidia-smi lists 8 GPUs"  # fmt: skip


@pytest.mark.parametrize(
    ("leak", "message"),
    [("permissive-toolkit",
      f"2/9 probes failed: bypass NVIDIA_VISIBLE_DEVICES=all (g0): bypass-env-g0/probe has no "
      f"GPU allocated but sees {EVERY} | bypass NVIDIA_VISIBLE_DEVICES=all (g1): "
      f"bypass-env-g1/probe has no GPU allocated but sees {EVERY}"),
     ("runtimeclass-leak",
      f"2/9 probes failed: bypass RuntimeClass nvidia (g0): bypass-runtimeclass-g0/probe has no "
      f"GPU allocated but sees {EVERY} | bypass RuntimeClass nvidia (g1): "
      f"bypass-runtimeclass-g1/probe has no GPU allocated but sees {EVERY}"),
     ("shared-device",
      "1/9 probes failed: cross-pod: cross-pod-a and cross-pod-b on g0 were given the same GPU "
      "GPU-g0-0 (nvidia0)")],
    ids=["permissive-toolkit", "runtimeclass-leak", "shared-device"],
)  # fmt: skip
def test_each_leak_fails_the_probe_that_shows_it(leak: str, message: str) -> None:
    result = run(healthy(leak))
    assert (result.status, result.message) == (Status.FAILED, message)


def test_a_device_leak_fails_every_probe_naming_what_each_container_saw() -> None:
    result = run(healthy("device-leak"))
    assert result.status == Status.FAILED
    assert result.message.startswith(
        "9/9 probes failed: positive: positive/claimed was allocated one GPU but sees "
        f"{EVERY} | negative (g0): negative-g0/probe has no GPU allocated but sees {EVERY}"
    ), result.message


def test_a_missing_runtime_class_fails_and_its_probes_are_not_made() -> None:
    kube = FakeKube([node("g0"), node("g1")])
    world(kube)
    result = run(kube)
    assert (result.status, result.message) == (
        Status.FAILED, "1/8 probes failed: GPU RuntimeClass: RuntimeClass nvidia, which the "
        "recipe's GPU Operator creates, does not exist")  # fmt: skip
    assert not [c for c in kube.calls if "bypass-runtimeclass" in c[-1]]


def test_without_a_gpu_operator_the_runtime_class_bypass_is_said_not_tested() -> None:
    result = run(healthy(), {"mode": "device-plugin", "runtimeClass": None}, "componentRefs: []\n")
    assert (result.status, result.message) == (
        Status.PASSED, "7 probes on 2 GPU nodes (device plugin): each container saw only what was "
        "allocated to it; no bypass showed a GPU; RuntimeClass bypass not tested: the recipe "
        "names no GPU RuntimeClass")  # fmt: skip


def test_a_pod_that_never_starts_fails_with_where_it_got_to() -> None:
    kube = healthy()
    kube.script["Pod"] = lambda pod: []  # nothing ever runs it
    config = parse_config("kind: ValidateConfig\napiVersion: aicr.nvidia.com/v1alpha1\nspec:\n"
                          f"  validate:\n    checks:\n      {NAME}:\n        params: "
                          "{probeSeconds: 0.2}\n", "config.yaml")  # fmt: skip
    result = run(kube, config=config)
    assert result.status == Status.FAILED
    assert result.message.startswith("9/9 probes failed: positive: pod positive did not start "
                                     "within 0s: Pending"), result.message  # fmt: skip
    assert [c for c in kube.calls if c[0] == "delete"]


def test_no_schedulable_gpu_node_fails() -> None:
    result = run(FakeKube([node("cpu", gpus=0)]))
    assert (result.status, result.message) == (
        Status.FAILED,
        "1/1 probes failed: GPU nodes: no schedulable GPU node to probe",
    )


# ---- the pure parts ---------------------------------------------------------------------
def test_plan_places_cross_pod_where_most_gpus_are_free_and_the_rest_on_every_node() -> None:
    p = build.plan([Target("g0", 2, 8, None), Target("g1", 3, 8, None)], ["g2"], "nvidia")
    where = {probe.title: [pod.node for pod in probe.pods] for probe in p.probes}
    assert where["cross-pod"] == ["g1", "g1"]
    assert (where["positive"], where["multi-container"]) == (["g0"], ["g0"])
    assert where["negative (g2)"] == ["g2"] and where["bypass RuntimeClass nvidia (g2)"] == ["g2"]


def test_plan_without_enough_free_gpus_says_so() -> None:
    p = build.plan([Target("g0", 1, 8, None)], [], None)
    why = {probe.title: (probe.unrunnable, probe.untested) for probe in p.probes}
    assert why == {"positive": ("", ""), "negative (g0)": ("", ""), "multi-container":
                   ("no schedulable GPU node has a free GPU", ""), "cross-pod":
                   ("", "every node with two GPUs has fewer than two free now"),
                   "bypass NVIDIA_VISIBLE_DEVICES=all (g0)": ("", "")}  # fmt: skip


def test_one_gpu_nodes_leave_cross_pod_untested_not_failed() -> None:
    p = build.plan([Target("g0", 1, 1, None), Target("g1", 1, 1, None)], [], None)
    cross = next(probe for probe in p.probes if probe.title == "cross-pod")
    assert (cross.pods, cross.unrunnable, cross.untested) == (
        (), "", "no schedulable GPU node has two GPUs")
    assert all(not probe.unrunnable for probe in p.probes)  # positive g0, multi g1


@pytest.mark.parametrize(
    ("log", "expected"),
    [("", "its report is incomplete (empty log)"),
     ("dev:\nsmi: 0\n", "its report is incomplete (last line: smi: 0)"),
     (f"smi: 0\n{build.END}\n", "its report is malformed (no dev: or smi: line)"),
     (f"dev: nvidiactl\nsmi: 6\nsmi-out: No devices were found\n{build.END}\n",
      "/dev: nvidiactl; nvidia-smi -L: exit 6: No devices were found")],
    ids=["empty", "cut short", "no dev line", "control device only"],
)  # fmt: skip
def test_read_report(log: str, expected: str) -> None:
    assert str(build.read_report(log)) == expected


def test_a_control_device_alone_is_an_accelerator_seen() -> None:
    probe = build.plan([], ["g0"], None).probes[1]
    seen = build.read_report(f"dev: nvidiactl\nsmi: absent\n{build.END}\n")
    assert isinstance(seen, build.Report)
    assert build.judge(probe, {("negative-g0", build.PROBE): seen}) == [
        "negative-g0/probe has no GPU allocated but sees 0 GPU device nodes (nvidiactl) and "
        "nvidia-smi lists 0 GPUs"]  # fmt: skip


@pytest.mark.parametrize("dra", [False, True], ids=["device-plugin", "dra"])
def test_manifest_allocates_only_the_claimed_container(dra: bool) -> None:
    pod = build.ProbePod("multi-container", "g0", (build.CLAIMED, build.UNCLAIMED), build.CLAIMED)
    spec = build.manifest(pod, "ubuntu:22.04", dra)["spec"]
    first, second = spec["containers"]
    assert "resources" not in second and "env" not in second
    if dra:
        assert first["resources"] == {"claims": [{"name": build.REQUEST}]}
        assert spec["resourceClaims"] == [{"name": "gpu", "resourceClaimName": "multi-container"}]
    else:
        assert first["resources"] == {"limits": {"nvidia.com/gpu": "1"}}
        assert "resourceClaims" not in spec
    assert spec["securityContext"]["runAsNonRoot"] is True
    assert spec["terminationGracePeriodSeconds"] == 1


# ---- preflight: the RuntimeClass from the recipe's values --------------------------------
def _recipe(overrides: str = "", values_file: str = "") -> Any:
    text = "componentRefs:\n- name: gpu-operator\n  namespace: gpu-operator\n"
    text += f"  overrides: {overrides}\n" if overrides else ""
    text += f"  valuesFile: {values_file}\n" if values_file else ""
    return parse_recipe(text)


def test_preflight_reads_the_runtime_class_overrides_then_values_then_default(
    tmp_path: Path,
) -> None:
    (tmp_path / "v.yaml").write_text("operator: {runtimeClass: nvidia-container-runtime}\n")
    got = check.preflight(_recipe("{operator: {runtimeClass: gpu}}", "v.yaml"), str(tmp_path), "r")
    assert got["runtimeClass"] == {"name": "gpu", "source": "gpu-operator "
                                   "operator.runtimeClass=gpu (recipe overrides)"}  # fmt: skip
    got = check.preflight(_recipe(values_file="v.yaml"), str(tmp_path), "r")
    assert got["runtimeClass"]["name"] == "nvidia-container-runtime"
    got = check.preflight(_recipe(), None, "r")
    assert got == {"mode": "device-plugin", "runtimeClass": RC}
    dra_only = ("componentRefs:\n- name: nvidia-dra-driver-gpu\n  overrides: {resources: {gpus: "
                "{enabled: true}}, gpuResourcesEnabledOverride: true}\n")  # fmt: skip
    assert check.preflight(parse_recipe(dra_only), None, "r") == {
        "mode": "dra",
        "runtimeClass": None,
    }


def test_preflight_refuses_a_runtime_class_that_is_not_a_name() -> None:
    with pytest.raises(InvalidRequestError, match=r"operator\.runtimeClass must be a non-empty "
                       "string, got 5"):  # fmt: skip
        check.preflight(_recipe("{operator: {runtimeClass: 5}}"), None, "recipe.yaml")


def test_a_cluster_of_one_gpu_nodes_passes_with_cross_pod_noted_untested() -> None:
    kube = FakeKube([node("g0", 1), node("g1", 1), RUNTIME_CLASS])
    world(kube)
    result = run(kube)
    assert result.status == Status.PASSED, result.message
    assert result.message.endswith(
        "no bypass showed a GPU; cross-pod not tested: no schedulable GPU node has two GPUs")
    cross = next(s for s in result.evidence if s.title == "cross-pod")
    assert (cross.status.value, cross.verdict) == (
        "informational", "not tested: no schedulable GPU node has two GPUs")
