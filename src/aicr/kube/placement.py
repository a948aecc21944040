"""Where pods go: a node selector and tolerations, as the flags give them.

``--node-selector`` / ``--toleration`` place the workloads checks create;
``--orchestrator-*`` place the check pods. Plain values, no client.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Toleration:
    """A pod toleration as given by ``--toleration key=value:effect`` or ``key:effect``."""

    key: str
    effect: str | None
    value: str | None = None
    operator: str = "Equal"

    def as_dict(self) -> dict[str, str]:
        """The Kubernetes form of the toleration."""
        out = {"key": self.key, "operator": self.operator}
        if self.value is not None:
            out["value"] = self.value
        if self.effect:
            out["effect"] = self.effect
        return out


TOLERATE_ALL = (Toleration(key="", effect=None, operator="Exists"),)


@dataclass(frozen=True)
class Placement:
    """Where pods go: a node selector and tolerations."""

    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: tuple[Toleration, ...] = ()


def from_dict(data: dict[str, Any]) -> Placement:
    """A placement from its run.json form (``nodeSelector``, ``tolerations`` in API shape)."""
    tolerations = tuple(
        Toleration(
            key=t.get("key", ""),
            effect=t.get("effect"),
            value=t.get("value"),
            operator=t.get("operator", "Equal"),
        )
        for t in data.get("tolerations") or []
    )
    return Placement(node_selector=dict(data.get("nodeSelector") or {}), tolerations=tolerations)


def tolerated(taint: dict[str, Any], tolerations: list[dict[str, Any]]) -> bool:
    """Whether ``tolerations`` let a pod on despite ``taint`` (PreferNoSchedule never bars)."""
    if taint.get("effect") not in ("NoSchedule", "NoExecute"):
        return True
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint.get("effect"):
            continue
        if t.get("operator") == "Exists" and (not t.get("key") or t["key"] == taint.get("key")):
            return True
        if t.get("key") == taint.get("key") and t.get("value") == taint.get("value"):
            return True
    return False
