"""The trust class of a run: how much of what a report says was observed on a real cluster.

- ``observed``: checks ran on a live cluster and the snapshot was captured by this run;
- ``given-snapshot``: checks ran live, but the snapshot was supplied (``--snapshot``);
- ``offline``: ``--no-cluster``, nothing was observed;
- ``simulated``: the cluster's nodes are KWOK's (this project's simulated cluster, or any
  other), so nothing observed there says anything about real hardware.

``simulated`` is decided from the cluster itself, never from a flag a user could omit: KWOK
manages the nodes that carry its annotation ``kwok.x-k8s.io/node`` (its controller runs
with ``--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake``, kwok.sigs.k8s.io
"Manage nodes"), and nodes that Karpenter's KWOK provider creates have a ``kwok://``
provider id. One such node is enough.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

# How a run names a snapshot it captured from the cluster instead of reading a file.
LIVE_SNAPSHOT = "live capture"
KWOK_ANNOTATION = "kwok.x-k8s.io/node"
KWOK_PROVIDER_PREFIX = "kwok://"


class TrustClass(StrEnum):
    """How far a report's claims rest on observation of a real cluster."""

    OBSERVED = "observed"
    GIVEN_SNAPSHOT = "given-snapshot"
    OFFLINE = "offline"
    SIMULATED = "simulated"


@dataclass(frozen=True)
class Trust:
    """A trust class and why it was given."""

    cls: TrustClass
    why: str

    def as_extra(self) -> dict[str, str]:
        """The form the report records under ``extra.aicr.trust``."""
        return {"class": self.cls.value, "why": self.why}


def simulated_node(nodes: Iterable[Mapping[str, Any]]) -> str | None:
    """Why the cluster of ``nodes`` is simulated (the first KWOK node found), or None."""
    for node in nodes:
        meta = node.get("metadata") or {}
        name = meta.get("name") or "(unnamed)"
        if KWOK_ANNOTATION in (meta.get("annotations") or {}):
            return f"node {name} carries KWOK's annotation {KWOK_ANNOTATION}"
        provider = str((node.get("spec") or {}).get("providerID") or "")
        if provider.startswith(KWOK_PROVIDER_PREFIX):
            return f"node {name} has KWOK's provider id {KWOK_PROVIDER_PREFIX}..."
    return None


def classify(
    *, no_cluster: bool, snapshot_given: bool, nodes: Iterable[Mapping[str, Any]]
) -> Trust:
    """The trust class of a run from what it did and the nodes the cluster listed."""
    if no_cluster:
        return Trust(TrustClass.OFFLINE, "--no-cluster: no check ran on a cluster")
    kwok = simulated_node(nodes)
    if kwok is not None:
        return Trust(TrustClass.SIMULATED, kwok)
    if snapshot_given:
        return Trust(TrustClass.GIVEN_SNAPSHOT, "checks ran live; the snapshot was supplied")
    return Trust(TrustClass.OBSERVED, "checks ran live; this run captured the snapshot")


def of_report(extra: Mapping[str, Any] | None) -> Trust:
    """The trust class a report records.

    A report from before trust classes is judged by what it says it did (``noCluster``, a
    snapshot source other than a live capture).
    """
    aicr = (extra or {}).get("aicr") or {}
    if not isinstance(aicr, Mapping):
        aicr = {}
    recorded = aicr.get("trust")
    if isinstance(recorded, Mapping):
        try:
            return Trust(TrustClass(str(recorded.get("class"))), str(recorded.get("why") or ""))
        except ValueError:
            pass  # an unknown class is judged like an unrecorded one, never trusted more
    if aicr.get("noCluster"):
        return Trust(TrustClass.OFFLINE, "the report says --no-cluster")
    source = aicr.get("snapshot")
    if source and source != LIVE_SNAPSHOT:
        return Trust(TrustClass.GIVEN_SNAPSHOT, "the report names a supplied snapshot")
    return Trust(TrustClass.OBSERVED, "the report records no trust class; it ran live")


# Every page of a simulated submission opens with this, and every PRODUCT.yaml note starts
# with it; ``aicr evidence verify`` refuses a directory holding it unless --allow-simulated.
SIMULATED_MARK = "SIMULATED CLUSTER"
SIMULATED_BANNER = (
    f"{SIMULATED_MARK}: this submission was rendered from a run on KWOK nodes, for a demo; "
    "it is no evidence of any real platform and must not be submitted."
)
