"""check-nvidia-smi's pure parts: XML parsing, node planning, the probe pod, verdicts."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from aicr.checks import smi_probes as smi
from aicr.checks.probe_pods import place
from aicr.checks.smi_xml import report as parse_xml
from aicr.kube import gpu_inventory as inv
from aicr.kube.placement import Placement, Toleration

XML = """<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">
<nvidia_smi_log>
\t<timestamp>Mon Nov 30 14:29:35 2026</timestamp>
\t<driver_version>570.86.16</driver_version>
\t<cuda_version>12.8</cuda_version>
\t<attached_gpus>2</attached_gpus>
\t<gpu id="00000000:18:00.0">
\t\t<product_name>NVIDIA H100 80GB HBM3</product_name>
\t\t<uuid>GPU-1</uuid>
\t</gpu>
\t<gpu id="00000000:2A:00.0">
\t\t<product_name>NVIDIA H100 80GB HBM3</product_name>
\t\t<uuid>GPU-2</uuid>
\t</gpu>
</nvidia_smi_log>
"""
DRIVER_FAILED = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
    "Make sure that the latest NVIDIA driver is installed and running.\n"
)


def test_parse_xml_reads_driver_cuda_and_gpus() -> None:
    report = parse_xml("warning: something first\n" + XML)
    assert (report.driver, report.cuda) == ("570.86.16", "12.8")
    assert [g.uuid for g in report.gpus] == ["GPU-1", "GPU-2"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (DRIVER_FAILED, "no nvidia_smi_log document in the output"),
        ("<nvidia_smi_log><driver_version>1", "malformed nvidia-smi XML"),
        ("<?xml version='1.0'?><other/>", "unexpected XML root <other>"),
        ("<nvidia_smi_log></nvidia_smi_log>", "nvidia-smi XML has no driver_version"),
    ],
    ids=["driver-message", "truncated", "wrong-root", "no-driver"],
)
def test_parse_xml_refuses_what_is_not_the_log(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_xml(text)


def node(name: str, gpus: int = 8, **spec: Any) -> dict[str, Any]:
    labels = {"nvidia.com/cuda.driver-version.full": "570.86.16", "pool": "a"}
    return {
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
        "status": {"allocatable": {"nvidia.com/gpu": str(gpus)},
                   "conditions": [{"type": "Ready", "status": "True"}]},
    }  # fmt: skip


def holder(on: str, gpus: int, phase: str = "Running") -> dict[str, Any]:
    res = {"limits": {"nvidia.com/gpu": str(gpus)}}
    return {"spec": {"nodeName": on, "containers": [{"resources": res}]},
            "status": {"phase": phase}}  # fmt: skip


def test_plan_nodes_free_busy_and_unschedulable() -> None:
    nodes = [
        node("idle"), node("part"), node("full"), node("cpu", gpus=0),
        node("cordoned", unschedulable=True),
        node("tainted", taints=[{"key": "maint", "effect": "NoSchedule"}]),
        node("gputaint", taints=[{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]),
    ]  # fmt: skip
    pods = [holder("part", 3), holder("full", 8), holder("idle", 8, "Succeeded")]
    capacity, used = inv.device_plugin_gpus(nodes, pods)
    plan = inv.plan_nodes(nodes, capacity, used, Placement())
    assert [(t.node, t.gpus, t.total) for t in plan.targets] == [
        ("gputaint", 8, 8),
        ("idle", 8, 8),
        ("part", 5, 8),
    ]
    assert plan.busy == ["full"]
    assert plan.unschedulable == ["cordoned (cordoned)", "tainted (taint maint:NoSchedule)"]
    tolerate = Placement({"pool": "a"}, (Toleration("maint", "NoSchedule", operator="Exists"),))
    assert "tainted" in [t.node for t in inv.plan_nodes(nodes, capacity, used, tolerate).targets]
    elsewhere = inv.plan_nodes(nodes, capacity, used, Placement({"pool": "b"}))
    assert elsewhere.out_of_scope[0] == "cordoned"


def test_dra_capacity_and_use_come_from_slices_and_allocated_claims() -> None:
    gpu = {"type": {"string": "gpu"}}
    devices = [{"name": f"gpu-{i}", "attributes": gpu} for i in range(4)]
    devices.append({"name": "channel-0", "attributes": {"type": {"string": "channel"}}})
    slices = [
        {
            "spec": {
                "driver": "gpu.nvidia.com",
                "nodeName": "n0",
                "pool": {"name": "n0"},
                "devices": devices,
            }
        },
        {"spec": {"driver": "other", "nodeName": "n1", "devices": devices}},
    ]
    results = [{"driver": "gpu.nvidia.com", "pool": "n0", "device": f"gpu-{i}"} for i in (0, 1)]
    claims = [{"status": {"allocation": {"devices": {"results": results}}}}, {"status": {}}]
    assert inv.dra_gpus(slices, claims) == ({"n0": 4}, {"n0": 2})
    target = inv.Target("n0", 2, 4, None)
    claim = smi.gpu_claim(target)
    assert claim["spec"]["devices"]["requests"][0]["exactly"] == {
        "deviceClassName": "gpu.nvidia.com",
        "allocationMode": "ExactCount",
        "count": 2,
    }
    spec = smi.probe_pod(target, "img", dra=True)["spec"]
    ref = {"name": "gpus", "resourceClaimName": claim["metadata"]["name"]}
    assert spec["resourceClaims"] == [ref]
    assert spec["containers"][0]["resources"] == {"claims": [{"name": "gpus"}]}


def test_probe_pod_is_pinned_and_requests_the_free_gpus() -> None:
    target = inv.Target("gpu-0", 5, 8, "570.86.16")
    tolerate = Toleration("maint", "NoSchedule", operator="Exists")
    pod = place(smi.probe_pod(target, "img:1"), Placement({"pool": "a"}, (tolerate,)))
    spec = pod["spec"]
    term = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == ["gpu-0"]
    assert spec["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": "5"}}
    assert spec["containers"][0]["command"] == ["nvidia-smi", "-q", "-x"]
    assert spec["nodeSelector"] == {"pool": "a"}
    assert [t["key"] for t in spec["tolerations"]] == ["nvidia.com/gpu", "maint"]
    assert spec["securityContext"]["runAsNonRoot"] is True


@pytest.mark.parametrize(
    ("target", "code", "log", "problems"),
    [
        (inv.Target("n", 2, 8, "570.86.16"), 0, XML, []),
        (inv.Target("n", 3, 8, "570.86.16"), 0, XML, ["nvidia-smi sees 2 GPUs, 3 were allocated"]),
        (inv.Target("n", 2, 8, "570.124.06"), 0, XML,
         ["driver 570.86.16 loaded, the node's labels say 570.124.06"]),
        (inv.Target("n", 2, 8, None), 0, XML, ["the node has no "
         "nvidia.com/cuda.driver-version.full label to compare driver 570.86.16"]),
        (inv.Target("n", 2, 8, "570.86.16"), 9, DRIVER_FAILED,
         ["nvidia-smi exited 9: " + DRIVER_FAILED.strip()]),
    ],
    ids=["ok", "count", "driver", "no-label", "driver-not-loaded"],
)  # fmt: skip
def test_judge(target: inv.Target, code: int, log: str, problems: list[str]) -> None:
    assert smi.judge(target, code, log)[0] == problems


def test_judge_says_what_a_real_mig_gpus_partitions_are() -> None:
    from real_captures import capture

    log = capture("nvidia-smi", "a100-sxm4-v12.xml")  # an A100 80GB in four MIG devices
    problems, seen = smi.judge(inv.Target("n", 1, 1, "535.54.03"), 0, log)
    assert (problems, seen) == ([], "1 GPUs (NVIDIA A100-SXM4-80GB), driver 535.54.03, CUDA 12.2; "
                                    "MIG on, 4 MIG devices (14 SMs 19968 MiB)")  # fmt: skip


# ---- run() against the recording fake: the session creates, waits, always cleans up ----
RUN_RECIPE = ("componentRefs:\n- name: gpu-operator\n  namespace: gpu-operator\n"
              "  overrides: {devicePlugin: {enabled: true}}\n")  # fmt: skip


def _done(pod: dict[str, Any]) -> list[dict[str, Any]]:
    """What the kubelet makes of a probe pod: running, then exited 0."""
    node = pod["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0][
        "matchExpressions"][0]["values"][0]  # fmt: skip
    bound = {**pod, "spec": {**pod["spec"], "nodeName": node}}
    ended = {"terminated": {"exitCode": 0, "reason": "Completed"}}
    return [
        {**bound, "status": {"phase": "Running"}},
        {
            **bound,
            "status": {
                "phase": "Succeeded",
                "containerStatuses": [{"name": "nvidia-smi", "state": ended}],
            },
        },
    ]


def _kube() -> Any:
    sys.path.insert(0, str(Path(__file__).parent))
    from fakes import FakeKube

    nodes = [{"kind": "Node", **node("gpu-0", gpus=2)}, {"kind": "Node", **node("gpu-1", gpus=2)}]
    kube = FakeKube(nodes)
    kube.script["Pod"] = _done
    kube.logs_of = {smi.pod_name("gpu-0"): XML, smi.pod_name("gpu-1"): XML}
    return kube


def _run(kube: Any) -> Any:
    from aicr.checks import RunInputs
    from aicr.checks.entrypoint import run_check
    from aicr.config import EMPTY_CONFIG
    from aicr.recipe.load import parse_recipe

    inputs = RunInputs("r0123abcd", "aicr-validation", parse_recipe(RUN_RECIPE), EMPTY_CONFIG)
    return run_check("check-nvidia-smi", inputs, kube=kube)


def test_run_probes_every_node_through_the_session_and_removes_its_pods() -> None:
    kube = _kube()
    result = _run(kube)
    seen = "2 GPUs (NVIDIA H100 80GB HBM3), driver 570.86.16, CUDA 12.8"
    assert (result.status.value, result.message) == (
        "passed",
        f"nvidia-smi on 2 GPU nodes: gpu-0 ({seen}), gpu-1 ({seen})",
    )
    assert [(s.title, s.status.value if s.status else None) for s in result.evidence] == [
        ("GPU nodes", "informational"), ("node gpu-0", "passed"), ("node gpu-1", "passed"),
        ("workloads", "passed")]  # fmt: skip
    made = [c[1:] for c in kube.calls if c[0] == "create"]
    assert [c[1:] for c in kube.calls if c[0] == "delete"] == made[::-1]
    assert [o["metadata"]["name"] for o in kube.objects] == ["gpu-0", "gpu-1"]  # nodes only
    pod = next(c for c in kube.calls if c[0] == "create")
    assert pod[2] == "aicr-r0123abcd-check-nvidia-smi-w"  # the check's workload namespace


def test_a_gpu_node_advertising_no_gpus_is_reported_not_dropped() -> None:
    kube = _kube()
    lost = node("gpu-2", gpus=0)
    lost["metadata"]["labels"]["nvidia.com/gpu.present"] = "true"
    kube.objects.append({"kind": "Node", **lost})
    result = _run(kube)
    assert result.status.value == "failed"
    assert result.message == (
        "nvidia-smi failed on 1/3 GPU nodes: gpu-2: labelled as a GPU node but advertises 0 "
        "allocatable nvidia.com/gpu"
    )
    assert "gpu-2: labelled as a GPU node, advertises 0 GPUs" in result.evidence[0].answer


def test_plan_nodes_names_gpu_labelled_nodes_without_gpus() -> None:
    lost = node("lost", gpus=0)
    lost["metadata"]["labels"]["feature.node.kubernetes.io/pci-10de.present"] = "true"
    nodes = [node("idle"), node("cpu", gpus=0), lost]
    plan = inv.plan_nodes(nodes, *inv.device_plugin_gpus(nodes, []), Placement())
    assert ([t.node for t in plan.targets], plan.without_gpus) == (["idle"], ["lost"])


def test_a_failure_between_create_and_delete_leaves_nothing_behind() -> None:
    kube = _kube()
    kube.fail["logs"] = RuntimeError("connection reset while reading the log")
    result = _run(kube)
    assert (result.status.value, result.message) == (
        "other",
        "check raised RuntimeError: connection reset while reading the log",
    )
    assert [o["kind"] for o in kube.objects] == ["Node", "Node"]  # both probe pods gone
    assert len([c for c in kube.calls if c[0] == "delete"]) == 2
    workloads = result.evidence[-1]
    assert (workloads.title, workloads.status.value if workloads.status else None) == (
        "workloads",
        "passed",
    )


def test_run_does_not_import_the_generated_client() -> None:
    import subprocess

    here = str(Path(__file__).parent)
    code = (
        f"import sys; sys.path.insert(0, {here!r})\n"
        "from test_nvidia_smi import _kube, _run\n"
        "assert _run(_kube()).status.value == 'passed'\n"
        "assert 'kubernetes' not in sys.modules, 'the generated client was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
