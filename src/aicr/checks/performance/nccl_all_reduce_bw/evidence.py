"""How the check's figures read in evidence: topology, the workload, the table, images, logs."""

from __future__ import annotations

import shlex

from aicr.checks.performance.nccl_all_reduce_bw.build import Launch, Launcher, Obj, worker_hosts
from aicr.checks.performance.nccl_all_reduce_bw.judge import Host, spans
from aicr.parsers.nccl_tests import Run

LOG_CHARS = 16000


# Allocatable resources that are not a fabric device (what is left are NICs: EFA, RDMA...).
NOT_FABRIC = ("cpu", "memory", "pods", "ephemeral-storage", "nvidia.com/gpu")


def fabric_resources(node: Obj) -> dict[str, str]:
    """The node's allocatable device-plugin resources other than GPUs (EFA, RDMA/IB NICs)."""
    allocatable = (node.get("status") or {}).get("allocatable") or {}
    return {
        k: str(v)
        for k, v in sorted(allocatable.items())
        if k not in NOT_FABRIC and not k.startswith("hugepages-")
    }


def topology(nodes: dict[str, int], nics: dict[str, dict[str, str]]) -> str:
    """``gpu-a: 8 GPUs, vpc.amazonaws.com/efa 32; gpu-b: 8 GPUs (no NIC resource)``."""
    parts = []
    for n, g in nodes.items():
        devices = ", ".join(f"{k} {v}" for k, v in (nics.get(n) or {}).items())
        parts.append(f"{n}: {g} GPUs" + (f", {devices}" if devices else " (no NIC resource)"))
    return "; ".join(parts) or "no GPU node"


def workload(launch: Launch, launcher: Launcher) -> str:
    """The image, the test's command line, the fabric env, capabilities and resources."""
    hosts = worker_hosts(launch) if launcher == "job" else None
    env = ", ".join(f"{k}={v}" for k, v in sorted(launch.env.items())) or "none"
    caps = ", ".join(launch.capabilities) or "none"
    extra = ", ".join(f"{k}: {v}" for k, v in sorted(launch.resources.items())) or "none"
    return (
        f"image {launch.image}; launcher: {shlex.join(launch.mpirun_argv(hosts))}; "
        f"env: {env}; capabilities: {caps}; extra resources per worker: {extra}"
    )


def pod_security(level: str, pods: list[Obj]) -> str:
    """The workload namespace's level, then each pod's security fields as the API returned them."""
    lines = [f"workload namespace Pod Security: {level}"]
    for p in pods:
        spec = p.get("spec") or {}
        for c in spec.get("containers") or []:
            sc = c.get("securityContext") or {}
            added = (sc.get("capabilities") or {}).get("add") or []
            lines.append(
                f"{p['metadata']['name']}/{c.get('name')}: "
                f"privileged {bool(sc.get('privileged'))}, "
                f"allowPrivilegeEscalation {sc.get('allowPrivilegeEscalation')}, "
                f"capabilities.add [{', '.join(added)}], "
                f"hostNetwork {bool(spec.get('hostNetwork'))}"
            )
    return "\n".join(lines)


def table(report: Run) -> str:
    """The table as read: one line per size, out-of-place and in-place busbw and #wrong."""
    if not report.rows:
        return "no table"
    lines = ["size(B) oop-busbw oop-#wrong ip-busbw ip-#wrong"]
    for r in report.rows:
        o, i = r.out_of_place, r.in_place
        lines.append(
            f"{r.size} {_shown(o.busbw)} {_shown(o.wrong)} {_shown(i.busbw)} {_shown(i.wrong)}"
        )
    version = report.version or "no version line (before 2.17.4)"
    lines.append(
        f"avg bus bandwidth {report.avg_busbw}; out of bounds {report.out_of_bounds}; "
        f"{len(report.ranks)} rank lines; nccl-tests {version}"
    )
    return "\n".join(lines)


def _shown(value: float | int | None) -> str:
    return "N/A" if value is None else f"{value:g}"


def ranks(report: Run, hosts: list[Host]) -> str:
    """Where each worker's ranks ran: ``nccl-worker-0 on gpu-a: ranks 0-7, devices 0-7``."""
    lines = []
    for h in hosts:
        mine = [r for r in report.ranks if r.host == h.hostname]
        span = f"ranks {spans(sorted(r.rank for r in mine))}" if mine else "no rank line"
        devices = ",".join(f"{r.device} [{r.bus}]" for r in mine)
        lines.append(f"{h.hostname} on {h.node} ({h.gpus} GPUs): {span}; devices {devices or '-'}")
    return "\n".join(lines)


def images(pods: list[Obj]) -> str:
    """``pod: image@digest`` for each pod's containers, as the kubelet reports them."""
    out = []
    for p in pods:
        for cs in (p.get("status") or {}).get("containerStatuses") or []:
            out.append(
                f"{p['metadata']['name']}/{cs.get('name')}: {cs.get('image')} "
                f"({cs.get('imageID') or 'no imageID reported'})"
            )
    return "; ".join(out) or "no container status"


def tail(log: str) -> str:
    """The log, or its last ``LOG_CHARS`` characters."""
    return log if len(log) <= LOG_CHARS else "[...]\n" + log[-LOG_CHARS:]
