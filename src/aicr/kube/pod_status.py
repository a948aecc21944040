"""What an object's status says, as pure functions of API-shaped dicts.

Shared by the runner (deciding a check pod's outcome) and the checks' probe
session (saying where a workload got to when a wait ran out), so the
scheduler's reason or a stuck image pull is read the same way in both.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
IMAGE_PULL_FINAL = {"ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"}
IMAGE_PULL_FIRST = {"ErrImagePull"}
TERMINAL_PHASES = ("Succeeded", "Failed")  # a pod in either runs no container again
CONFIG_ERRORS = {"CreateContainerConfigError", "CreateContainerError", "RunContainerError"}


def finished(pod: Obj) -> bool:
    """The pod ended (Succeeded or Failed): its containers will not run again."""
    return _status(pod).get("phase") in TERMINAL_PHASES


def started(pod: Obj) -> bool:
    """Every container runs (or ran), or the pod already ended: nothing waits to start."""
    if finished(pod):
        return True
    status = _status(pod)
    states = [cs.get("state") or {} for cs in status.get("containerStatuses") or []]
    want = len((pod.get("spec") or {}).get("containers") or [])
    return (
        status.get("phase") == "Running"
        and len(states) == want
        and all("running" in s or "terminated" in s for s in states)
    )


def _status(obj: Obj) -> Obj:
    return obj.get("status") or {}


def container_status(pod: Obj) -> Obj | None:
    """The status of the pod's first container, once the kubelet reported one."""
    statuses = _status(pod).get("containerStatuses") or []
    return statuses[0] if statuses else None


def node_of(pod: Obj) -> str | None:
    """The node the pod was bound to."""
    return (pod.get("spec") or {}).get("nodeName")


def unschedulable(pod: Obj) -> str | None:
    """The scheduler's reason when it could not place the pod."""
    for cond in _status(pod).get("conditions") or []:
        if (cond.get("type"), cond.get("status"), cond.get("reason")) == (
            "PodScheduled",
            "False",
            "Unschedulable",
        ):
            return str(cond.get("message") or "no reason given")
    return None


def waiting(pod: Obj) -> tuple[str, str] | None:
    """``(reason, message)`` of a container stuck before it could start."""
    cs = container_status(pod)
    state = ((cs or {}).get("state") or {}).get("waiting")
    if not state or not state.get("reason"):
        return None
    return str(state["reason"]), str(state.get("message") or "")


def terminated(pod: Obj) -> Obj | None:
    """The container's terminated state (exitCode, reason, message), once it ended."""
    cs = container_status(pod)
    state = ((cs or {}).get("state") or {}).get("terminated")
    return state if state else None


def evicted(pod: Obj) -> str | None:
    """The eviction message when the kubelet or the eviction API removed the pod."""
    status = _status(pod)
    if status.get("reason") == "Evicted":
        return str(status.get("message") or "evicted")
    for cond in status.get("conditions") or []:
        disrupted = cond.get("type") == "DisruptionTarget" and cond.get("status") == "True"
        if disrupted and cond.get("reason") in ("TerminationByKubelet", "EvictionByEvictionAPI"):
            return str(cond.get("message") or cond.get("reason"))
    return None


def _pod_where(pod: Obj) -> str:
    phase = str(_status(pod).get("phase") or "Pending")
    node = node_of(pod)
    on = f" on {node}" if node else ""
    if (why := evicted(pod)) is not None:
        return f"evicted{on}: {why}"
    if (state := terminated(pod)) is not None:
        reason = f" ({state['reason']})" if state.get("reason") else ""
        return f"{phase}{on}: exited {state.get('exitCode')}{reason}"
    if (why := unschedulable(pod)) is not None:
        return f"{phase}, unschedulable: {why}"
    if (stuck := waiting(pod)) is not None:
        said = f": {stuck[1]}" if stuck[1] else ""
        return f"{phase}{on}, container waiting: {stuck[0]}{said}"
    return f"{phase}{on}" if node else f"{phase}, not scheduled yet"


def where(obj: Obj | None) -> str:
    """Where an object got to, as a phrase: a pod's phase, node and what holds it; else conditions.

    ``None`` (never seen, or deleted) reads "not found".
    """
    if obj is None:
        return "not found"
    gone = " (being deleted)" if (obj.get("metadata") or {}).get("deletionTimestamp") else ""
    if obj.get("kind") == "Pod":
        return _pod_where(obj) + gone
    status = _status(obj)
    parts = [str(status["phase"])] if status.get("phase") else []
    for cond in status.get("conditions") or []:
        reason = f" ({cond['reason']}: {cond.get('message', '')})" if cond.get("reason") else ""
        parts.append(f"{cond.get('type')}={cond.get('status')}{reason}")
    return (", ".join(parts) or "no status yet") + gone
