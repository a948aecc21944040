"""The pure part of workload-sandboxing: which RuntimeClasses sandbox, the probes, the verdict.

No client and no I/O: functions of the API's dicts, tested as tables.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from aicr.checks.probe_pods import pinned_to, restricted_pod_spec
from aicr.kube.names import bounded

Obj = dict[str, Any]
IMAGE = "ubuntu"  # in aicr/checks/images.yaml
CONTAINER = "probe"
# gVisor's runsc, and Kata Containers' handlers (kata, kata-qemu, kata-clh, kata-fc, ...).
HANDLERS = ("runsc",)
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

    @property
    def pod(self) -> str:
        """The probe pod that runs under it."""
        return bounded(f"sandboxed-{self.name}")

    @property
    def control(self) -> str:
        """The control pod, without a RuntimeClass, on the same node."""
        return bounded(f"control-{self.name}")


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
    if named:
        found = [Sandbox(n, handlers[n], "named in params") for n in named if n in handlers]
        return found, [
            f"RuntimeClass {n} (named in params.runtimeClasses) does not exist"
            for n in named
            if n not in handlers
        ]
    extra = tuple(extra)
    return [
        Sandbox(n, h, f"handler {h}")
        for n, h in sorted(handlers.items())
        if is_sandbox_handler(h, extra)
    ], []


def _pod(name: str, image: str) -> Obj:
    container = {"name": CONTAINER, "image": image, "command": COMMAND}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": restricted_pod_spec([container]),
    }


def sandboxed_pod(box: Sandbox, image: str) -> Obj:
    """The probe under ``box``'s RuntimeClass (its scheduling comes from the RuntimeClass)."""
    pod = _pod(box.pod, image)
    pod["spec"]["runtimeClassName"] = box.name
    return pod


def control_pod(box: Sandbox, image: str, node: str) -> Obj:
    """The same probe without a RuntimeClass, pinned to the node the sandboxed one ran on."""
    pod = _pod(box.control, image)
    pod["spec"]["affinity"] = pinned_to(node)
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
    found = [
        e
        for e in events
        if (e.get("involvedObject") or {}).get("name") == pod and e.get("reason") == SANDBOX_FAILED
    ]
    if not found:
        return None
    last = max(found, key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or ""))
    return f"{SANDBOX_FAILED}: {last.get('message', '')}"


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
