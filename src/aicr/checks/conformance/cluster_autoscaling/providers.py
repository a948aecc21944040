"""Which cluster autoscaler a cluster runs, read from its API objects, and what they say.

No client and no I/O: functions of the API's dicts, tested against objects
built from each provider's published formats.

- Karpenter: NodePools (``karpenter.sh/v1``), their nodes labelled
  ``karpenter.sh/nodepool``, NodeClaims; which cloud by the NodePool's
  ``nodeClassRef.group`` (AKS node auto-provisioning is Karpenter with
  ``karpenter.azure.com`` AKSNodeClasses).
- Cluster Autoscaler: its status ConfigMap ``kube-system/cluster-autoscaler-status``
  (the YAML form of ``clusterstate/api/types.go``: ``autoscalerStatus``,
  ``clusterWide``, ``nodeGroups[].scaleUp/scaleDown``; older releases write
  plain text, recognised by its first line), its pod events
  (``TriggeredScaleUp``, ``NotTriggerScaleUp``) and its node taints
  (``ToBeDeletedByClusterAutoscaler``); which cloud by the node-group label on
  nodes (GKE ``cloud.google.com/gke-nodepool``, AKS
  ``kubernetes.azure.com/agentpool``, EKS ``eks.amazonaws.com/nodegroup``).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import yaml

Obj = dict[str, Any]
KARPENTER_API = "karpenter.sh/v1"
NODEPOOL_LABEL = "karpenter.sh/nodepool"
KARPENTER_DISRUPTED_TAINT = "karpenter.sh/disrupted"
CA_NAMESPACE = "kube-system"
CA_STATUS = "cluster-autoscaler-status"
CA_TO_BE_DELETED_TAINT = "ToBeDeletedByClusterAutoscaler"
CA_CANDIDATE_TAINT = "DeletionCandidateOfClusterAutoscaler"
# Karpenter's NodeClass API group -> what the platform calls it
KARPENTER_CLOUDS = {
    "karpenter.k8s.aws": "Karpenter (AWS)",
    "karpenter.azure.com": "AKS node auto-provisioning (Karpenter)",
    "karpenter.kwok.sh": "Karpenter (KWOK provider)",
}
# The label each managed platform puts on its nodes naming their node group
NODE_GROUP_LABELS = {
    "cloud.google.com/gke-nodepool": "GKE cluster autoscaler",
    "kubernetes.azure.com/agentpool": "AKS cluster autoscaler",
    "eks.amazonaws.com/nodegroup": "Cluster Autoscaler (EKS)",
}
# Karpenter's words on a pod with resource claims that it will not provision for: its
# scheduler says so while its IGNORE_DRA_REQUESTS option is true, the default from v1.7 to
# v1.14.1 at least (pkg/controllers/provisioning/scheduling/scheduler.go, Scheduler.add),
# and holds that error permanent (it never relaxes such a pod's needs to retry).
KARPENTER_DRA_REFUSAL = "Dynamic Resource Allocation requirements that are not yet supported"
KARPENTER_DRA_BEHAVIOUR = (
    "Karpenter does not provision nodes for pods with DRA resource claims "
    "while its IGNORE_DRA_REQUESTS option is true (its default from v1.7 "
    "to v1.14.1 at least)"
)
# "pod triggered scale-up: [{gpu-pool 0->1 (max: 4)}]" (several groups: one {...} each)
_SCALE_UP = re.compile(r"\{(\S+) (\d+)->(\d+) \(max: (\d+)\)\}")


@dataclass(frozen=True)
class Provider:
    """The autoscaler found: its kind (karpenter or cluster-autoscaler), name, node groups."""

    kind: str
    name: str
    node_groups: tuple[str, ...]
    found: str  # what showed it, for the evidence

    @property
    def karpenter(self) -> bool:
        """Karpenter (any cloud): NodeClaims show the scale events."""
        return self.kind == "karpenter"


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def _labels(obj: Obj) -> dict[str, str]:
    return _meta(obj).get("labels") or {}


def karpenter(node_pools: list[Obj]) -> Provider | None:
    """Karpenter from its NodePools; None when there is none."""
    if not node_pools:
        return None
    groups = sorted(
        {
            str(
                (((p.get("spec") or {}).get("template") or {}).get("spec") or {})
                .get("nodeClassRef", {})
                .get("group", "")
            )
            for p in node_pools
        }
    )
    names = [KARPENTER_CLOUDS.get(g, f"Karpenter ({g or 'no nodeClassRef'})") for g in groups]
    pools = tuple(sorted(str(_meta(p).get("name")) for p in node_pools))
    return Provider(
        "karpenter", " + ".join(names), pools, f"{KARPENTER_API} NodePools {', '.join(pools)}"
    )


def read_status(configmap: Obj | None) -> Obj | None:
    """The Cluster Autoscaler status document; ``{}`` for the plain-text form; None if absent."""
    if configmap is None:
        return None
    text = str((configmap.get("data") or {}).get("status") or "")
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        doc = None
    return doc if isinstance(doc, dict) else {}


def cluster_autoscaler(configmap: Obj | None, nodes: list[Obj]) -> Provider | None:
    """Cluster Autoscaler from its status ConfigMap; the platform from its nodes' labels."""
    status = read_status(configmap)
    if status is None:
        return None
    groups = tuple(str(g.get("name")) for g in status.get("nodeGroups") or [] if g.get("name"))
    platform = next(
        (
            name
            for label, name in NODE_GROUP_LABELS.items()
            if any(label in _labels(n) for n in nodes)
        ),
        "Cluster Autoscaler",
    )
    state = status.get("autoscalerStatus") or "status in the plain-text form"
    return Provider(
        "cluster-autoscaler", platform, groups, f"ConfigMap {CA_NAMESPACE}/{CA_STATUS} ({state})"
    )


def node_group(node: Obj, provider: Provider, events: list[Obj]) -> str | None:
    """The node group (NodePool) a node belongs to, from its labels or the scale-up event."""
    labels = _labels(node)
    if provider.karpenter:
        return labels.get(NODEPOOL_LABEL)
    for label in NODE_GROUP_LABELS:
        if labels.get(label):
            return labels[label]
    grown = scaled_up_groups(events)
    return grown[0] if len(grown) == 1 else None


def scaled_up_groups(events: list[Obj]) -> list[str]:
    """Node groups Cluster Autoscaler's ``TriggeredScaleUp`` pod events say it grew."""
    found: list[str] = []
    for e in events:
        if e.get("reason") == "TriggeredScaleUp":
            for m in _SCALE_UP.finditer(str(e.get("message") or "")):
                if m[1] not in found:
                    found.append(m[1])
    return found


def autoscaler_events(events: list[Obj], provider: Provider) -> list[str]:
    """What the autoscaler told the check's pods (reason: message), oldest first, no repeats."""
    source = "karpenter" if provider.karpenter else "cluster-autoscaler"
    out: list[str] = []
    for e in sorted(events, key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or "")):
        by = str((e.get("source") or {}).get("component") or e.get("reportingComponent") or "")
        if source in by:
            line = f"{e.get('reason')}: {e.get('message')}"
            if line not in out:
                out.append(line)
    return out


def refused_claims(said: list[str], provider: Provider) -> str | None:
    """Karpenter's event line refusing the pods for their resource claims, or None."""
    if not provider.karpenter:
        return None
    return next((line for line in said if KARPENTER_DRA_REFUSAL in line), None)


def scale_down_began(
    node: Obj | None, claim: Obj | None, status: Obj | None, groups: Collection[str]
) -> str | None:
    """What shows the autoscaler began removing the node, or None.

    Karpenter: the NodeClaim (or node) is being deleted, or the node carries its
    ``karpenter.sh/disrupted`` taint. Cluster Autoscaler: the node carries
    ``ToBeDeletedByClusterAutoscaler`` or ``DeletionCandidateOfClusterAutoscaler``,
    or the status names one of ``groups`` (the node's) with scale-down candidates.
    """
    if claim is not None and _meta(claim).get("deletionTimestamp"):
        meta = _meta(claim)
        return f"NodeClaim {meta.get('name')} deleted at {meta['deletionTimestamp']}"
    if node is not None and _meta(node).get("deletionTimestamp"):
        return f"node deleted at {_meta(node)['deletionTimestamp']}"
    for taint in ((node or {}).get("spec") or {}).get("taints") or []:
        key = taint.get("key")
        if key in (KARPENTER_DISRUPTED_TAINT, CA_TO_BE_DELETED_TAINT, CA_CANDIDATE_TAINT):
            since = f" since {taint['timeAdded']}" if taint.get("timeAdded") else ""
            return f"node tainted {key}{since}"
    for g in (status or {}).get("nodeGroups") or []:
        down = g.get("scaleDown") or {}
        group = g.get("name")
        if group in groups and down.get("status") == "CandidatesPresent":
            when = down.get("lastTransitionTime")
            return (
                f"Cluster Autoscaler status: node group {group} scaleDown CandidatesPresent "
                f"({down.get('candidates', '?')} candidates)" + (f" since {when}" if when else "")
            )
    return None


def scale_down_delay(node_pools: list[Obj], pool: str | None) -> str | None:
    """The NodePool's ``disruption.consolidateAfter`` and policy, for messages."""
    for p in node_pools:
        if _meta(p).get("name") == pool:
            d = (p.get("spec") or {}).get("disruption") or {}
            return (
                f"NodePool {pool} consolidationPolicy {d.get('consolidationPolicy', '?')}, "
                f"consolidateAfter {d.get('consolidateAfter', '?')}"
            )
    return None
