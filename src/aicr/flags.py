"""Parsing of structured flag values (--toleration, --node-selector) with the expected syntax."""

from __future__ import annotations

import re
from collections.abc import Iterable

from aicr.errors import FlagConflictError, Problem
from aicr.kube.placement import Toleration

EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_LABEL_KEY = re.compile(
    r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)
_LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")


def parse_toleration(text: str, flag: str) -> Toleration:
    """``key=value:Effect`` (operator Equal) or ``key:Effect`` (operator Exists)."""
    expected = f"expected key=value:Effect or key:Effect, Effect one of {', '.join(EFFECTS)}"
    head, sep, effect = text.rpartition(":")
    if not sep or effect not in EFFECTS:
        raise FlagConflictError(Problem(f"{flag} '{text}': invalid toleration", hint=expected))
    key, eq, value = head.partition("=")
    if not _LABEL_KEY.match(key) or (eq and not _LABEL_VALUE.match(value)):
        raise FlagConflictError(Problem(f"{flag} '{text}': invalid key or value", hint=expected))
    if eq:
        return Toleration(key=key, value=value, effect=effect, operator="Equal")
    return Toleration(key=key, effect=effect, operator="Exists")


def parse_node_selector(values: Iterable[str], flag: str) -> dict[str, str]:
    """Repeatable ``key=value`` pairs (commas also separate pairs)."""
    out: dict[str, str] = {}
    for raw in values:
        for item in filter(None, (p.strip() for p in raw.split(","))):
            key, eq, value = item.partition("=")
            if not eq or not _LABEL_KEY.match(key) or not _LABEL_VALUE.match(value):
                raise FlagConflictError(
                    Problem(
                        f"{flag} '{item}': invalid node selector",
                        hint="expected key=value with Kubernetes label syntax",
                    )
                )
            if key in out and out[key] != value:
                raise FlagConflictError(
                    Problem(f"{flag}: '{key}' given twice with different values")
                )
            out[key] = value
    return out


# A namespace name is a DNS-1123 label.
_NAMESPACE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
NAMESPACE_MAX = 63
# An image reference as the distribution grammar writes it: [host[:port]/]path[:tag][@digest].
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_HOST = rf"{_LABEL}(?:\.{_LABEL})*"
_IMAGE = re.compile(
    rf"^(?:{_HOST}(?::[0-9]+)?/)?{_COMPONENT}(?:/{_COMPONENT})*"
    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?"
    r"(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$"
)


def namespace_problem(value: str, flag: str) -> Problem | None:
    """Why ``value`` is not a namespace name, or None."""
    if len(value) <= NAMESPACE_MAX and _NAMESPACE.match(value):
        return None
    return Problem(
        f"{flag} '{value}': not a valid namespace name",
        hint=f"expected at most {NAMESPACE_MAX} lowercase letters, digits and '-', "
        "starting and ending with a letter or digit",
    )


def image_problem(value: str, flag: str) -> Problem | None:
    """Why ``value`` is not an image reference, or None."""
    if _IMAGE.match(value):
        return None
    return Problem(
        f"{flag} '{value}': not a valid image reference",
        hint="expected [registry[:port]/]name[:tag][@sha256:digest], name in lowercase",
    )
