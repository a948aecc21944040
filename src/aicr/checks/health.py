"""Is this object healthy? One judgment per kind, shared by every check that asks.

Each function returns the problems found (empty when healthy), phrased so that
``"<Kind> <ns>/<name>: <problem>"`` reads as a complete sentence for the user.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Obj = dict[str, Any]
BAD_WAITING = {
    "CrashLoopBackOff",
    "ImagePullBackOff",
    "ErrImagePull",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
}


def _status(obj: Obj) -> Obj:
    return obj.get("status") or {}


def _generation_lag(obj: Obj) -> list[str]:
    observed = _status(obj).get("observedGeneration")
    generation = (obj.get("metadata") or {}).get("generation")
    if observed is not None and generation is not None and observed < generation:
        return [f"controller has not observed generation {generation} yet (at {observed})"]
    return []


def deployment(obj: Obj) -> list[str]:
    """Every desired replica is updated and available."""
    want = (obj.get("spec") or {}).get("replicas", 1)
    status = _status(obj)
    if want == 0:
        return ["is scaled to 0 replicas"]
    problems = _generation_lag(obj)
    available = status.get("availableReplicas") or 0
    updated = status.get("updatedReplicas") or 0
    if available < want:
        problems.append(f"{available}/{want} replicas available")
    elif updated < want:
        problems.append(f"{updated}/{want} replicas updated to the current spec")
    return problems


def daemon_set(obj: Obj) -> list[str]:
    """Scheduled on at least one node and ready on every node it should run on."""
    status = _status(obj)
    want = status.get("desiredNumberScheduled") or 0
    if want == 0:
        return ["runs on no node (0 desired pods)"]
    problems = _generation_lag(obj)
    ready = status.get("numberReady") or 0
    if ready < want:
        problems.append(f"{ready}/{want} pods ready")
    unavailable = status.get("numberUnavailable") or 0
    if unavailable and ready >= want:
        problems.append(f"{unavailable} pods unavailable")
    return problems


def stateful_set(obj: Obj) -> list[str]:
    """Every desired replica ready."""
    want = (obj.get("spec") or {}).get("replicas", 1)
    if want == 0:
        return ["is scaled to 0 replicas"]
    ready = _status(obj).get("readyReplicas") or 0
    problems = _generation_lag(obj)
    if ready < want:
        problems.append(f"{ready}/{want} replicas ready")
    return problems


def pod(obj: Obj) -> list[str]:
    """Running and ready, or completed successfully."""
    status = _status(obj)
    phase = status.get("phase")
    if phase == "Succeeded":
        return []
    for cs in status.get("containerStatuses") or []:
        waiting = (cs.get("state") or {}).get("waiting") or {}
        if waiting.get("reason") in BAD_WAITING:
            return [f"container {cs.get('name')} is {waiting['reason']}"]
    if phase != "Running":
        reason = status.get("reason")
        return [f"is {phase or 'without a phase'}" + (f" ({reason})" if reason else "")]
    ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
    if not ready or ready.get("status") != "True":
        return ["is running but not ready"]
    return []


# Controllers that replace a pod that failed (evicted, preempted, its node shut down): the
# Failed pod stays behind until garbage-collected, while the workload's own status says
# whether the replacement is healthy.
REPLACING_OWNERS = frozenset({"ReplicaSet", "DaemonSet", "StatefulSet"})


def leftover(obj: Obj) -> str | None:
    """Why a pod no longer stands for its workload's health, or None when it does.

    A pod being deleted is on its way out; a Failed pod owned by a controller that
    replaces it (an Evicted pod of a Deployment, say) is a leftover. Neither is unhealthy:
    the workload that owns it is judged by its own status.
    """
    meta = obj.get("metadata") or {}
    if meta.get("deletionTimestamp"):
        return "is being deleted"
    status = _status(obj)
    owners = sorted(
        {str(o.get("kind")) for o in meta.get("ownerReferences") or []} & REPLACING_OWNERS
    )
    if status.get("phase") == "Failed" and owners:
        reason = f" ({status['reason']})" if status.get("reason") else ""
        return f"is a Failed leftover{reason} that its {owners[0]} replaces"
    return None


def namespace_pod(obj: Obj) -> list[str]:
    """A pod judged among its namespace's workloads: leftovers and live Job pods say nothing.

    A Job's pod that runs or finished is the Job's business; one that failed is reported.
    """
    owners = {o.get("kind") for o in (obj.get("metadata") or {}).get("ownerReferences") or []}
    if leftover(obj) is not None:
        return []
    if "Job" in owners and _status(obj).get("phase") != "Failed":
        return []
    return pod(obj)


def custom_resource_definition(obj: Obj) -> list[str]:
    """Established by the API server."""
    conditions = _status(obj).get("conditions") or []
    if any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions):
        return []
    return ["is not established"]


def namespace(obj: Obj) -> list[str]:
    """Active (not terminating)."""
    phase = _status(obj).get("phase")
    return [] if phase == "Active" else [f"is {phase or 'in an unknown phase'}"]


def exists(obj: Obj) -> list[str]:
    """Kinds with no health beyond existing (ConfigMap, Secret, ServiceAccount)."""
    return []


JUDGES: dict[str, Callable[[Obj], list[str]]] = {
    "Deployment": deployment,
    "DaemonSet": daemon_set,
    "StatefulSet": stateful_set,
    "Pod": pod,
    "CustomResourceDefinition": custom_resource_definition,
    "Namespace": namespace,
    "ConfigMap": exists,
    "Secret": exists,
    "ServiceAccount": exists,
}
WORKLOAD_KINDS = ("Deployment", "DaemonSet", "StatefulSet")
