"""workload-sandboxing: a sandboxed RuntimeClass exists, and a pod under it really is sandboxed.

What it proves: the cluster has a RuntimeClass whose handler is a sandboxed
runtime (gVisor's ``runsc``, GKE Sandbox's ``gvisor``, Kata's ``kata*``, or one
the config adds through ``params.sandboxHandlers``; or exactly the ones
``params.runtimeClasses`` names), and on one node of each node group its pods
can land on (by the class's scheduling, the GPU taint and the run's placement;
every such node with ``params.everyNode``) a restricted pod under it reaches
the end of its command on a kernel of its own: its ``uname -r`` differs from
the kernel its node reports (``status.nodeInfo.kernelVersion``), or its kernel
log is gVisor's, while a control pod without a RuntimeClass on the same node
(tolerating what the class tolerates) shows the node's kernel. Every report is
recorded.

What it does not: it does not try to escape the sandbox, measure its overhead,
or check that untrusted workloads are made to use it (that is policy).

How it fails: no sandboxed RuntimeClass ("no sandboxed RuntimeClass", never
a skip, so the requirement reads Not Implemented); a pod that cannot start
(the kubelet's ``FailedCreatePodSandBox`` event, e.g. containerd's ``no
runtime for "runsc" is configured``, or where it got to); a sandboxed pod that
reports the node's own kernel (not sandboxed); a control pod that does not
(no baseline).
"""

from __future__ import annotations

from aicr.checks import CheckContext
from aicr.checks.conformance.workload_sandboxing import build
from aicr.checks.conformance.workload_sandboxing.params import Params as Params
from aicr.checks.probes import Waited
from aicr.checks.workload_images import workload_image
from aicr.kube import pod_status
from aicr.result import CheckResult, StepStatus

TITLE = "RuntimeClasses"


def _report(ctx: CheckContext, pod: build.Obj) -> build.Report | str:
    state = pod_status.terminated(pod) or {}
    log = ctx.probes.logs(pod["metadata"]["name"], build.CONTAINER)
    return build.read_report(state.get("exitCode"), log)


def _stuck(ctx: CheckContext, name: str, pending: dict[str, str], seconds: float) -> str:
    events = ctx.kube.list("Event", ctx.workload_namespace)
    why = build.sandbox_event(events, name) or pending.get(name, "not found")
    return f"did not finish within {int(seconds)}s: {why}"


def run(ctx: CheckContext) -> CheckResult:
    """Find the sandboxed RuntimeClasses; per class a sandboxed and a control probe."""
    params: Params = ctx.params
    boxes: list[build.Sandbox] = []
    with ctx.step(TITLE) as step:
        listed = ctx.kube.list("RuntimeClass")
        step.asked = "RuntimeClasses (node.k8s.io/v1)" + (
            f", named: {', '.join(params.runtime_classes)}" if params.runtime_classes else ""
        )
        step.answer = (
            ", ".join(f"{rc['metadata']['name']} (handler {rc.get('handler')})" for rc in listed)
            or "none"
        )
        boxes, problems = build.sandboxes(listed, params.runtime_classes, params.sandbox_handlers)
        handlers = ", ".join([*build.HANDLERS, "kata*", *params.sandbox_handlers])
        if problems:
            step.failed("; ".join(problems))
        elif not boxes:
            step.failed(f"no sandboxed RuntimeClass (a handler among {handlers})")
        else:
            step.info(", ".join(f"{b.name} ({b.why})" for b in boxes))
    if not boxes:  # the step's failure is the check's message (conclude when it raised)
        last = ctx.evidence[-1]
        return ctx.failed(last.verdict) if last.status == StepStatus.FAILED else ctx.conclude(TITLE)
    image = workload_image(build.IMAGE, check=ctx.name, config=ctx.config)
    nodes = ctx.kube.list("Node")
    targets: list[tuple[build.Sandbox, str]] = []
    for b in boxes:
        where = build.probe_nodes(b, nodes, ctx.workloads, params.every_node)
        if not where:
            with ctx.step(f"RuntimeClass {b.name}") as step:
                step.asked = f"Ready, schedulable nodes RuntimeClass {b.name}'s pods can land on"
                step.answer = "none"
                step.failed(
                    "no Ready node its scheduling (nodeSelector "
                    f"{dict(b.node_selector) or '{}'}, tolerations) and --node-selector admit"
                )
        targets += [(b, n) for n in where]
    for b, n in targets:
        ctx.probes.create(build.sandboxed_pod(b, image, n))
        ctx.probes.create(build.control_pod(b, image, n))
    waited = (
        ctx.probes.wait("Pod", pod_status.finished, budget=params.start_seconds)
        if targets
        else None
    )
    groups = {str(n["metadata"]["name"]): build.node_group(n) for n in nodes}
    for b, n in targets:
        assert waited is not None
        _judge(ctx, b, f"{image}; {groups[n]}", waited, n)
    return ctx.conclude("sandboxed RuntimeClasses", _passed(ctx))


def _judge(ctx: CheckContext, b: build.Sandbox, how: str, waited: Waited, node: str) -> None:
    ns = ctx.workload_namespace
    boxed_name, control_name = b.pod(node), b.control(node)
    with ctx.step(f"RuntimeClass {b.name} on {node}") as step:
        step.asked = (
            f"pod {ns}/{boxed_name} under RuntimeClass {b.name} and pod {ns}/{control_name} "
            f"without one, both on {node} ({how}): {build.SCRIPT}"
        )
        for who, name in (("pod", boxed_name), ("control pod", control_name)):
            if name in waited.pending or name not in waited.objects:
                step.answer = f"{who} {name} never finished"
                step.failed(f"{who} {name} " + _stuck(ctx, name, waited.pending, waited.seconds))
                return
        boxed = _report(ctx, waited.objects[boxed_name])
        control = _report(ctx, waited.objects[control_name])
        step.answer = f"sandboxed: {boxed}; control: {control}"
        if isinstance(boxed, str) or isinstance(control, str):
            step.failed(
                "; ".join(
                    f"{who}: {r}"
                    for who, r in (("sandboxed pod", boxed), ("control pod", control))
                    if isinstance(r, str)
                )
            )
            return
        node_obj = ctx.kube.get("Node", node) or {}
        kernel = str(
            ((node_obj.get("status") or {}).get("nodeInfo") or {}).get("kernelVersion") or "unknown"
        )
        step.answer += f"; node {node} reports kernel {kernel}"
        problems = build.judge(b, boxed, control, node, kernel)
        if problems:
            step.failed("; ".join(problems))
        else:
            step.passed(build.verdict(b, boxed, node, kernel))


def _passed(ctx: CheckContext) -> str:
    proven = [
        s.verdict
        for s in ctx.evidence
        if s.title.startswith("RuntimeClass ") and s.status == StepStatus.PASSED
    ]
    return "; ".join(proven)
