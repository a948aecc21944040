"""The pure parts of cluster-autoscaling: its pods, the timeline it records, its verdicts.

No client and no I/O. The check fills the free GPUs of every existing GPU node
with one pod per node (sized from that node's free GPUs, pinned to it), so the
GPU pods it then creates fit no existing node whatever their size: only a new
node can run them. In DRA mode every pod's GPUs come from a ResourceClaim on
the NVIDIA DRA driver's DeviceClass: a filler's own claim, the scale-up pods'
claims from one ResourceClaimTemplate.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from aicr.checks.probe_pods import (
    gpu_claim,
    gpu_claim_template,
    pinned_to,
    restricted_pod_spec,
)
from aicr.checks.steps import now_iso
from aicr.kube import names as k8s_names
from aicr.kube.gpu_inventory import Target
from aicr.kube.gpus import GPU_RESOURCE, gpu_toleration

Obj = dict[str, Any]
IMAGE = "pause"  # in aicr/checks/images.yaml
CONTAINER = "hold"
FILL_PREFIX = "fill"
POD_PREFIX = "scale-up"
CLAIM = "gpus"  # the pods' resource claim and its one request (DRA mode)
TEMPLATE = POD_PREFIX  # the scale-up pods' ResourceClaimTemplate (DRA mode)


def _pod(name: str, image: str, gpus: int, deadline: int, claim: Obj | None) -> Obj:
    """A pause pod holding ``gpus`` GPUs: a limit, or (DRA) the claim source ``claim``."""
    gpu = {"claims": [{"name": CLAIM}]} if claim else {"limits": {GPU_RESOURCE: str(gpus)}}
    container = {"name": CONTAINER, "image": image, "resources": gpu}
    spec = restricted_pod_spec([container])
    if claim:
        spec["resourceClaims"] = [{"name": CLAIM, **claim}]
    spec["tolerations"] = [gpu_toleration()]
    spec["terminationGracePeriodSeconds"] = 0
    # Should cleanup itself be lost, the pods still end and free the node for scale-down.
    spec["activeDeadlineSeconds"] = max(1, deadline)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def filler_name(node: str) -> str:
    """The pod that holds ``node``'s free GPUs."""
    return k8s_names.bounded(f"{FILL_PREFIX}-{node}")


def filler_claim(target: Target) -> Obj:
    """DRA mode: the filler's claim for all of ``target.node``'s free GPUs."""
    return gpu_claim(filler_name(target.node), target.gpus, CLAIM)


def filler(target: Target, image: str, deadline: int, dra: bool = False) -> Obj:
    """A pod pinned to ``target.node`` holding all its free GPUs."""
    claim = {"resourceClaimName": filler_name(target.node)} if dra else None
    pod = _pod(filler_name(target.node), image, target.gpus, deadline, claim)
    pod["spec"]["affinity"] = pinned_to(target.node)
    return pod


def scale_up_template(gpus: int) -> Obj:
    """DRA mode: each scale-up pod's own claim for ``gpus`` whole GPUs."""
    return gpu_claim_template(TEMPLATE, gpus, CLAIM)


def scale_up_pods(count: int, gpus: int, image: str, deadline: int, dra: bool = False) -> list[Obj]:
    """The GPU pods no existing node fits (each node's free GPUs are held by a filler)."""
    claim = {"resourceClaimTemplateName": TEMPLATE} if dra else None
    return [_pod(f"{POD_PREFIX}-{i}", image, gpus, deadline, claim) for i in range(count)]


@dataclass
class Timeline:
    """What was seen when, each thing once: ``+12.3s (2026-...Z) node x registered``."""

    start: float = field(default_factory=time.monotonic)
    entries: list[str] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)

    def note(self, key: str, text: str) -> bool:
        """Record ``text`` the first time ``key`` is seen; True if it is new."""
        if key in self.seen:
            return False
        self.seen.add(key)
        self.entries.append(f"+{time.monotonic() - self.start:.1f}s ({now_iso()}) {text}")
        return True

    def text(self, since: int = 0) -> str:
        """The entries from ``since`` on, in order, for an evidence answer."""
        return "; ".join(self.entries[since:]) or "nothing seen"


def running(pod: Obj | None) -> bool:
    """The pod is bound and Running."""
    return bool(
        pod
        and (pod.get("status") or {}).get("phase") == "Running"
        and (pod.get("spec") or {}).get("nodeName")
    )


def judge_scale_up(
    pods: dict[str, Obj], before: set[str], groups: dict[str, str | None]
) -> list[str]:
    """Problems with where the pods ran: every one on a new node of a node group."""
    problems = []
    for name, pod in sorted(pods.items()):
        node = str((pod.get("spec") or {}).get("nodeName"))
        if node in before:
            problems.append(
                f"pod {name} ran on existing node {node}: an existing node had room, "
                "so no scale-up was shown"
            )
        elif groups.get(node) is None:
            problems.append(
                f"pod {name} ran on new node {node}, which belongs to no node group "
                "the autoscaler names"
            )
    return problems
