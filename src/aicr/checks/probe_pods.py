"""Building blocks of the workloads checks create: node pinning, placement, a safe pod shape.

Pure functions of dicts. ``place`` is what the probe session applies to every
pod (or pod template) it creates, so ``--node-selector`` / ``--toleration``
reach every workload the same way.
"""

from __future__ import annotations

import copy
from typing import Any

from aicr.kube.gpus import GPU_DEVICE_CLASS
from aicr.kube.placement import Placement

Obj = dict[str, Any]
HOSTNAME_LABEL = "kubernetes.io/hostname"
NOBODY = 65534  # any fixed non-zero uid satisfies the restricted Pod Security level


def pinned_to(node: str) -> Obj:
    """Required node affinity for exactly ``node`` (by its hostname label)."""
    term = {"matchExpressions": [{"key": HOSTNAME_LABEL, "operator": "In", "values": [node]}]}
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
        }
    }


def restricted_pod_spec(containers: list[Obj]) -> Obj:
    """A pod spec that passes restricted Pod Security: no token, non-root, no privileges."""
    locked = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    return {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": NOBODY,
            "runAsGroup": NOBODY,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [{**c, "securityContext": dict(locked)} for c in containers],
    }


def gpu_claim(name: str, count: int, request: str) -> Obj:
    """A ResourceClaim ``name`` for ``count`` whole GPUs of the NVIDIA DRA driver."""
    exactly = {"deviceClassName": GPU_DEVICE_CLASS, "allocationMode": "ExactCount", "count": count}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name},
        "spec": {"devices": {"requests": [{"name": request, "exactly": exactly}]}},
    }


def gpu_claim_template(
    name: str, count: int, request: str, labels: dict[str, str] | None = None
) -> Obj:
    """A ResourceClaimTemplate ``name`` whose claims are ``gpu_claim``'s, labelled ``labels``.

    A generated claim carries the template's ``spec.metadata`` labels, not its own.
    """
    claim = gpu_claim(name, count, request)
    spec: Obj = {"spec": claim["spec"]}
    if labels:
        spec["metadata"] = {"labels": dict(labels)}
    return {
        "apiVersion": claim["apiVersion"],
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name},
        "spec": spec,
    }


def _pod_spec(obj: Obj) -> Obj | None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return None
    if obj.get("kind") == "Pod":
        return spec
    template = spec.get("template")
    if isinstance(template, dict) and isinstance(template.get("spec"), dict):
        return template["spec"]  # type: ignore[no-any-return]
    return None


def place(obj: Obj, placement: Placement) -> Obj:
    """A copy of ``obj`` whose pod spec (a Pod's, or a workload's template) honours ``placement``.

    The node selector is merged in (the user's keys win) and the user's
    tolerations are added after the workload's own, without repeats.
    """
    out = copy.deepcopy(obj)
    spec = _pod_spec(out)
    if spec is None or (not placement.node_selector and not placement.tolerations):
        return out
    if placement.node_selector:
        spec["nodeSelector"] = {**(spec.get("nodeSelector") or {}), **placement.node_selector}
    tolerations = list(spec.get("tolerations") or [])
    for t in (t.as_dict() for t in placement.tolerations):
        if t not in tolerations:
            tolerations.append(t)
    if tolerations:
        spec["tolerations"] = tolerations
    return out
