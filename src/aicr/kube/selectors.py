"""Kubernetes label selectors (``matchLabels`` and ``matchExpressions``) matched against labels.

The API server's own rule, for selectors that checks read from the cluster: a
Gateway listener's ``allowedRoutes.namespaces.selector``, a Prometheus' monitor
selectors. An empty selector matches everything; a null one is the caller's case.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _expression(expr: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, op = str(expr.get("key")), expr.get("operator")
    values = [str(v) for v in expr.get("values") or []]
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":
        return key not in labels or labels[key] not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    raise ValueError(f"label selector operator {op!r} is not In, NotIn, Exists or DoesNotExist")


def matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """Whether ``labels`` satisfy ``selector``: every matchLabels pair and every expression."""
    wanted = selector.get("matchLabels") or {}
    if any(labels.get(k) != str(v) for k, v in wanted.items()):
        return False
    return all(_expression(e, labels) for e in selector.get("matchExpressions") or [])


def describe(selector: Mapping[str, Any]) -> str:
    """``a=b, c in (x,y)``: the selector as kubectl would write it; ``everything`` when empty."""
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for e in selector.get("matchExpressions") or []:
        op, key = e.get("operator"), e.get("key")
        values = ",".join(str(v) for v in e.get("values") or [])
        parts.append(
            {"In": f"{key} in ({values})", "NotIn": f"{key} notin ({values})"}.get(
                str(op), f"{key}" if op == "Exists" else f"!{key}"
            )
        )
    return ", ".join(parts) or "everything"
