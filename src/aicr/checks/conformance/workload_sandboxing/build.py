"""The pure part of workload-sandboxing: which RuntimeClasses sandbox, the probes, the verdict.

No client and no I/O: functions of the API's dicts, tested as tables.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from aicr.checks.probe_pods import pinned_to, restricted_pod_spec
from aicr.kube import events as kube_events
from aicr.kube import selectors
from aicr.kube.gpus import gpu_toleration
from aicr.kube.names import bounded
from aicr.kube.placement import Placement, tolerated

Obj = dict[str, Any]
IMAGE = "ubuntu"  # in aicr/checks/images.yaml
CONTAINER = "probe"
# gVisor's runsc (its own install docs), GKE Sandbox's gvisor (the RuntimeClass GKE creates
# is named and handled `gvisor`), and Kata Containers' handlers (kata, kata-qemu, kata-clh...).
HANDLERS = ("runsc", "gvisor")
HANDLER_PREFIXES = ("kata",)
# What the probe prints: the kernel release uname reports, /proc/version, the kernel
# log's first line (gVisor's own says "Starting gVisor..."; a node's is usually
# unreadable to an unprivileged pod, which prints nothing).
SCRIPT = (
    'echo "kernel=$(uname -r)"; echo "version=$(head -n1 /proc/version)"; '
    'echo "dmesg=$(dmesg 2>/dev/null | head -n1)"'
)
COMMAND = ["sh", "-c", SCRIPT]
SANDBOX_FAILED = "FailedCreatePodSandBox"


@dataclass(frozen=True)
class Sandbox:
    """A RuntimeClass to prove, and why it is taken as a sandbox."""

    name: str
    handler: str
    why: str  # "handler runsc", "named in params"
    # the RuntimeClass's scheduling: the nodes its pods may land on, the taints they tolerate
    node_selector: tuple[tuple[str, str], ...] = ()
    tolerations: tuple[Obj, ...] = ()

    def pod(self, node: str) -> str:
        """The probe pod that runs under it on ``node``."""
        return bounded(f"sandboxed-{self.name}-{node}")

    def control(self, node: str) -> str:
        """The control pod, without a RuntimeClass, on ``node``."""
        return bounded(f"control-{self.name}-{node}")


def _scheduling(rc: Obj) -> tuple[tuple[tuple[str, str], ...], tuple[Obj, ...]]:
    sched = rc.get("scheduling") or {}
    selector = tuple(sorted((str(k), str(v)) for k, v in (sched.get("nodeSelector") or {}).items()))
    return selector, tuple(dict(t) for t in sched.get("tolerations") or [])


def is_sandbox_handler(handler: str, extra: Iterable[str] = ()) -> bool:
    """True for runsc, kata* and the handlers the config adds."""
    return handler in (*HANDLERS, *extra) or handler.startswith(HANDLER_PREFIXES)


def sandboxes(
    runtime_classes: list[Obj], named: list[str] | None, extra: Iterable[str]
) -> tuple[list[Sandbox], list[str]]:
    """``(the RuntimeClasses to prove, problems)``.

    With ``named`` (params ``runtimeClasses``) exactly those, whatever their
    handler, a missing one being a problem; else every RuntimeClass whose
    handler is a sandbox handler.
    """
    handlers = {str(rc["metadata"]["name"]): str(rc.get("handler") or "") for rc in runtime_classes}
    scheduling = {str(rc["metadata"]["name"]): _scheduling(rc) for rc in runtime_classes}
    if named:
        found = [
            Sandbox(n, handlers[n], "named in params", *scheduling[n])
            for n in named
            if n in handlers
        ]
        return found, [
            f"RuntimeClass {n} (named in params.runtimeClasses) does not exist"
            for n in named
            if n not in handlers
        ]
    extra = tuple(extra)
    return [
        Sandbox(n, h, f"handler {h}", *scheduling[n])
        for n, h in sorted(handlers.items())
        if is_sandbox_handler(h, extra)
    ], []


# Labels naming a node's group (nodes of one group share their image and runtime config):
# EKS managed node groups, Karpenter NodePools, GKE node pools, AKS agent pools.
GROUP_LABELS = (
    "eks.amazonaws.com/nodegroup",
    "karpenter.sh/nodepool",
    "cloud.google.com/gke-nodepool",
    "kubernetes.azure.com/agentpool",
)
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"


def node_group(node: Obj) -> str:
    """The node's group: its node-group label, else its instance type, else the node alone."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    for key in (*GROUP_LABELS, INSTANCE_TYPE_LABEL):
        if labels.get(key):
            return f"{key}={labels[key]}"
    return f"node {node['metadata']['name']}"


def _schedulable(node: Obj, box: Sandbox, placement: Placement) -> bool:
    labels = (node.get("metadata") or {}).get("labels") or {}
    spec, status = node.get("spec") or {}, node.get("status") or {}
    ready = any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in status.get("conditions") or []
    )
    wanted = {**dict(box.node_selector), **placement.node_selector}
    tols = [*probe_tolerations(box), *(t.as_dict() for t in placement.tolerations)]
    return (
        ready
        and not spec.get("unschedulable")
        and selectors.matches({"matchLabels": wanted}, labels)
        and all(tolerated(t, tols) for t in spec.get("taints") or [])
    )


def probe_tolerations(box: Sandbox) -> list[Obj]:
    """What a probe tolerates: the RuntimeClass's own tolerations and the GPU taint.

    A sandboxed GPU workload tolerates the GPU taint, so GPU nodes are where the
    sandbox must hold too; the control pod gets the same, to sit on the same node.
    """
    return [*box.tolerations, gpu_toleration()]


def probe_nodes(box: Sandbox, nodes: list[Obj], placement: Placement, every: bool) -> list[str]:
    """The nodes to probe ``box`` on: one per node group it can schedule onto, or every one.

    A RuntimeClass's pods land wherever its ``scheduling.nodeSelector`` (and
    ``--node-selector``) allow and its tolerations admit; its handler must work on each.
    """
    fit = sorted(
        (n for n in nodes if _schedulable(n, box, placement)),
        key=lambda n: str(n["metadata"]["name"]),
    )
    if every:
        return [str(n["metadata"]["name"]) for n in fit]
    first: dict[str, str] = {}
    for n in fit:
        first.setdefault(node_group(n), str(n["metadata"]["name"]))
    return sorted(first.values())


def _pod(name: str, image: str) -> Obj:
    container = {"name": CONTAINER, "image": image, "command": COMMAND}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": restricted_pod_spec([container]),
    }


def sandboxed_pod(box: Sandbox, image: str, node: str) -> Obj:
    """The probe under ``box``'s RuntimeClass, pinned to ``node``.

    The RuntimeClass admission controller adds the class's own tolerations; the GPU
    taint's is the probe's.
    """
    pod = _pod(box.pod(node), image)
    pod["spec"]["runtimeClassName"] = box.name
    pod["spec"]["affinity"] = pinned_to(node)
    pod["spec"]["tolerations"] = [gpu_toleration()]
    return pod


def control_pod(box: Sandbox, image: str, node: str) -> Obj:
    """The same probe without a RuntimeClass on the same node, tolerating what the class does."""
    pod = _pod(box.control(node), image)
    pod["spec"]["affinity"] = pinned_to(node)
    pod["spec"]["tolerations"] = probe_tolerations(box)
    return pod


@dataclass(frozen=True)
class Report:
    """What one probe printed."""

    kernel: str
    version: str
    dmesg: str

    @property
    def gvisor(self) -> bool:
        """True when the kernel log is gVisor's own."""
        return "gVisor" in self.dmesg

    def __str__(self) -> str:
        log = f"; dmesg {self.dmesg!r}" if self.dmesg else ""
        return f"kernel {self.kernel} ({self.version}){log}"


def read_report(exit_code: int | None, log: str) -> Report | str:
    """The probe's report, or what was wrong with it."""
    fields = dict(line.split("=", 1) for line in log.splitlines() if "=" in line)
    if exit_code != 0:
        tail = log.strip().splitlines()[-1:] or ["no output"]
        return f"the probe exited {exit_code}: {tail[0]}"
    if not fields.get("kernel"):
        return "the probe printed no kernel release"
    return Report(fields["kernel"], fields.get("version", ""), fields.get("dmesg", ""))


def sandbox_event(events: list[Obj], pod: str) -> str | None:
    """The newest FailedCreatePodSandBox message the kubelet recorded for ``pod``."""
    return kube_events.latest(events, pod, SANDBOX_FAILED)


def judge(box: Sandbox, boxed: Report, control: Report, node: str, node_kernel: str) -> list[str]:
    """Problems with ``box``'s proof (none: the sandboxed pod ran on a kernel of its own)."""
    under = f"the pod under RuntimeClass {box.name} (handler {box.handler})"
    if control.kernel != node_kernel:
        return [
            f"the control pod on {node} reports kernel {control.kernel}, the node reports "
            f"{node_kernel}: no baseline to tell a sandbox from the node"
        ]
    if boxed.kernel == node_kernel and not boxed.gvisor:
        return [
            f"{under} reports the node's own kernel {node_kernel} on {node}: it is not sandboxed"
        ]
    return []


def verdict(box: Sandbox, boxed: Report, node: str, node_kernel: str) -> str:
    """The passing step's sentence."""
    what = "gVisor's kernel" if boxed.gvisor else "a kernel of its own"
    return (
        f"{box.name} ({box.handler}) sandboxed on {node}: {what} {boxed.kernel}, the node "
        f"and the control pod {node_kernel}"
    )
