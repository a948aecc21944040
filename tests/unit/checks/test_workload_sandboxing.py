"""workload-sandboxing on fakes: which RuntimeClasses are proven, the kernel verdicts, cleanup."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fakes import FakeKube

from aicr.checks import RunInputs, entrypoint
from aicr.checks.conformance.workload_sandboxing import build
from aicr.config import parse_config
from aicr.ctrf import Status
from aicr.kube.names import workload_namespace
from aicr.recipe.load import parse_recipe

Obj = dict[str, Any]
CHECK = "workload-sandboxing"
NODE_KERNEL = "6.8.0-1015-aws"
GVISOR_LOG = ("kernel=4.4.0\nversion=Linux version 4.4.0 #1 SMP Sun Jan 10 15:06:54 PST 2016\n"
              "dmesg=[    0.000000] Starting gVisor...\n")  # fmt: skip
NODE_LOG = f"kernel={NODE_KERNEL}\nversion=Linux version {NODE_KERNEL} (buildd)\ndmesg=\n"


CREATED: dict[str, Obj] = {}  # every pod the fake kubelet was given, by name


def runtime_class(name: str, handler: str, **scheduling: Any) -> Obj:
    rc = {"kind": "RuntimeClass", "metadata": {"name": name}, "handler": handler}
    return {**rc, "scheduling": scheduling} if scheduling else rc


def node(name: str = "n0", group: str = "system", taints: list[Obj] | None = None,
         **labels: str) -> Obj:  # fmt: skip
    return {"kind": "Node",
            "metadata": {"name": name, "labels": {"eks.amazonaws.com/nodegroup": group, **labels}},
            "spec": {"taints": taints or []},
            "status": {"nodeInfo": {"kernelVersion": NODE_KERNEL},
                       "conditions": [{"type": "Ready", "status": "True"}]}}  # fmt: skip


def pinned(pod: Obj) -> str:
    terms = pod["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]  # fmt: skip
    return str(terms[0]["matchExpressions"][0]["values"][0])


def fake(*objects: Obj, boxed_log: str = GVISOR_LOG, starts: bool = True,
         nodes: tuple[Obj, ...] = (), broken: tuple[str, ...] = ()) -> FakeKube:  # fmt: skip
    """Probe pods run where they are pinned; a sandboxed pod on a ``broken`` node never starts."""
    nodes = nodes or (node(),)
    kube = FakeKube([*nodes, *objects])

    def kubelet(pod: Obj) -> list[Obj]:
        CREATED[pod["metadata"]["name"]] = pod
        where = pinned(pod)
        if pod["spec"].get("runtimeClassName") and (not starts or where in broken):
            return []
        state = {"terminated": {"exitCode": 0}}
        return [{**pod, "spec": {**pod["spec"], "nodeName": where},
                 "status": {"phase": "Succeeded",
                            "containerStatuses": [{"name": "probe", "state": state}]}}]  # fmt: skip

    kube.script["Pod"] = kubelet
    for rc in objects:
        if rc["kind"] == "RuntimeClass":
            box = build.Sandbox(rc["metadata"]["name"], rc["handler"], "")
            for n in nodes:
                name = n["metadata"]["name"]
                kube.logs_of[box.pod(name)], kube.logs_of[box.control(name)] = boxed_log, NODE_LOG
    return kube


def run(kube: FakeKube, params: str = "{}") -> Any:
    config = parse_config(
        "{kind: ValidateConfig, apiVersion: aicr.nvidia.com/v1alpha1, spec: {validate: "
        f"{{checks: {{{CHECK}: {{params: {params}}}}}}}}}}}", "config.yaml")  # fmt: skip
    inputs = RunInputs("r0123abcd", "aicr-validation", parse_recipe("componentRefs: []\n"),
                       config)  # fmt: skip
    return entrypoint.run_check(CHECK, inputs, kube=kube)


def steps(result: Any) -> list[tuple[str, str]]:
    return [(s.title, s.status.value) for s in result.evidence]


def test_a_gvisor_class_is_proven_against_a_control_on_its_node_and_cleaned_up() -> None:
    kube = fake(runtime_class("gvisor", "runsc"), runtime_class("nvidia", "nvidia"))
    result = run(kube)
    assert (result.status, result.message) == (
        Status.PASSED, f"gvisor (runsc) sandboxed on n0: gVisor's kernel 4.4.0, the node and the "
        f"control pod {NODE_KERNEL}")  # fmt: skip
    assert steps(result) == [("RuntimeClasses", "informational"), ("RuntimeClass gvisor on n0",
                             "passed"), ("workloads", "passed")]  # fmt: skip
    made = [c[3] for c in kube.calls if c[0] == "create"]
    assert made == ["sandboxed-gvisor-n0", "control-gvisor-n0"]
    assert sorted(c[3] for c in kube.calls if c[0] == "delete") == sorted(made)
    control = CREATED["control-gvisor-n0"]
    assert "runtimeClassName" not in control["spec"]
    assert CREATED["sandboxed-gvisor-n0"]["spec"]["runtimeClassName"] == "gvisor"
    assert control["spec"]["securityContext"]["runAsNonRoot"] is True
    assert pinned(control) == pinned(CREATED["sandboxed-gvisor-n0"]) == "n0"


def test_no_sandboxed_runtime_class_fails() -> None:
    result = run(fake(runtime_class("nvidia", "nvidia")))
    assert (result.status, result.message) == (
        Status.FAILED, "no sandboxed RuntimeClass (a handler among runsc, gvisor, kata*)")
    assert not [c for c in run(fake()).evidence if c.title == "workloads"]


def test_a_class_running_the_nodes_kernel_is_not_sandboxed() -> None:
    kube = fake(runtime_class("gvisor", "runc"), boxed_log=NODE_LOG)
    result = run(kube, "{runtimeClasses: [gvisor]}")
    assert (result.status, result.message) == (
        Status.FAILED, "1/1 sandboxed RuntimeClasses failed: RuntimeClass gvisor on n0: the pod "
        f"under RuntimeClass gvisor (handler runc) reports the node's own kernel {NODE_KERNEL} "
        "on n0: it is not sandboxed")  # fmt: skip


def test_a_pod_that_never_starts_fails_with_the_kubelets_event() -> None:
    event = {"kind": "Event", "metadata": {"name": "e1", "namespace":
             workload_namespace("r0123abcd", CHECK)}, "reason": "FailedCreatePodSandBox",
             "involvedObject": {"name": "sandboxed-gvisor-n0"}, "message": 'no runtime for "runsc" '
             "is configured"}  # fmt: skip
    kube = fake(runtime_class("gvisor", "runsc"), event, starts=False)
    result = run(kube, "{startSeconds: 0.1}")
    assert (result.status, result.message) == (
        Status.FAILED, "1/1 sandboxed RuntimeClasses failed: RuntimeClass gvisor on n0: pod "
        "sandboxed-gvisor-n0 did not finish within 0s: FailedCreatePodSandBox: no runtime for "
        '"runsc" is configured')  # fmt: skip
    assert [c[3] for c in kube.calls if c[0] == "create"] == ["sandboxed-gvisor-n0",
                                                              "control-gvisor-n0"]  # fmt: skip
    assert steps(result)[-1] == ("workloads", "passed")


def test_a_named_class_that_does_not_exist_fails() -> None:
    result = run(fake(), "{runtimeClasses: [kata]}")
    assert (result.status, result.message) == (
        Status.FAILED, "RuntimeClass kata (named in params.runtimeClasses) does not exist")


@pytest.mark.parametrize(
    ("handler", "extra", "want"),
    [("runsc", (), True), ("gvisor", (), True), ("kata-qemu", (), True), ("kata", (), True),
     ("runc", (), False),
     ("nvidia", (), False), ("my-vm", ("my-vm",), True)],
)  # fmt: skip
def test_sandbox_handlers(handler: str, extra: tuple[str, ...], want: bool) -> None:
    assert build.is_sandbox_handler(handler, extra) is want


@pytest.mark.parametrize(
    ("code", "log", "want"),
    [(0, GVISOR_LOG, "gvisor"), (1, "boom\n", "the probe exited 1: boom"),
     (None, "", "the probe exited None: no output"),
     (0, "version=x\n", "the probe printed no kernel release")],
)  # fmt: skip
def test_read_report(code: int | None, log: str, want: str) -> None:
    report = build.read_report(code, log)
    assert (report if isinstance(report, str) else "gvisor" * report.gvisor) == want


def test_judge_needs_a_control_showing_the_nodes_kernel() -> None:
    box = build.Sandbox("kata", "kata-qemu", "")
    vm = build.Report("6.1.62", "Linux version 6.1.62", "")
    same = build.Report(NODE_KERNEL, "", "")
    assert build.judge(box, vm, same, "n0", NODE_KERNEL) == []
    assert build.judge(box, vm, vm, "n0", NODE_KERNEL) == [
        f"the control pod on n0 reports kernel 6.1.62, the node reports {NODE_KERNEL}: no "
        "baseline to tell a sandbox from the node"]  # fmt: skip


GKE_SANDBOX_TAINT = {"key": "sandbox.gke.io/runtime", "value": "gvisor", "effect": "NoSchedule"}


def test_gke_sandbox_probes_its_tainted_pool_with_the_classes_tolerations() -> None:
    # GKE Sandbox: RuntimeClass gvisor, handler gvisor, scheduling onto the sandbox pool's
    # label and tolerating its sandbox.gke.io/runtime=gvisor:NoSchedule taint.
    sandbox_pool = node("gke-sbx-0", "sandbox", [GKE_SANDBOX_TAINT],
                        **{"sandbox.gke.io/runtime": "gvisor"})  # fmt: skip
    rc = runtime_class("gvisor", "gvisor", nodeSelector={"sandbox.gke.io/runtime": "gvisor"},
                       tolerations=[{"key": "sandbox.gke.io/runtime", "operator": "Equal",
                                     "value": "gvisor", "effect": "NoSchedule"}])  # fmt: skip
    kube = fake(rc, nodes=(node("gke-default-0", "default"), sandbox_pool))
    result = run(kube)
    assert result.status == Status.PASSED, result.message
    assert result.message.startswith("gvisor (gvisor) sandboxed on gke-sbx-0: gVisor's kernel")
    control = CREATED["control-gvisor-gke-sbx-0"]["spec"]
    assert GKE_SANDBOX_TAINT["key"] in [t.get("key") for t in control["tolerations"]]


def test_every_node_group_the_class_can_reach_is_probed_and_a_broken_one_fails() -> None:
    gpu_taint = [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]
    nodes = (node("cpu-0"), node("cpu-1"), node("gpu-0", "gpu", gpu_taint),
             node("gpu-1", "gpu", gpu_taint), node("other", "tainted",
                                                   [{"key": "dedicated", "effect": "NoSchedule"}]))
    kube = fake(runtime_class("gvisor", "runsc"), nodes=nodes, broken=("gpu-0",))
    result = run(kube, "{startSeconds: 0.1}")
    assert [t for t, _ in steps(result)][1:3] == ["RuntimeClass gvisor on cpu-0",
                                                  "RuntimeClass gvisor on gpu-0"]
    assert (result.status, result.message) == (
        Status.FAILED, "1/2 sandboxed RuntimeClasses failed: RuntimeClass gvisor on gpu-0: pod "
        "sandboxed-gvisor-gpu-0 did not finish within 0s: Pending, not scheduled yet")  # fmt: skip
    every = run(fake(runtime_class("gvisor", "runsc"), nodes=nodes), "{everyNode: true}")
    assert [t for t, _ in steps(every)][1:-1] == [
        f"RuntimeClass gvisor on {n}" for n in ("cpu-0", "cpu-1", "gpu-0", "gpu-1")]
