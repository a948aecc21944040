"""The one list of components, and resolving `--with NAME[,NAME...]` against it."""

from __future__ import annotations

import difflib

from simcluster.components.base import Component, Image, plays_image
from simcluster.components.coscheduling import COMPONENT as COSCHEDULING
from simcluster.components.dcgm_exporter import COMPONENT as DCGM_EXPORTER
from simcluster.components.gateway import COMPONENT as GATEWAY
from simcluster.components.karpenter import COMPONENT as KARPENTER
from simcluster.components.kubeflow_crds import COMPONENT as KUBEFLOW_CRDS
from simcluster.components.kuberay import COMPONENT as KUBERAY
from simcluster.components.kueue import COMPONENT as KUEUE
from simcluster.components.prometheus import COMPONENT as PROMETHEUS
from simcluster.components.prometheus_adapter import COMPONENT as PROMETHEUS_ADAPTER
from simcluster.components.prometheus_operator import COMPONENT as PROMETHEUS_OPERATOR

COMPONENTS: tuple[Component, ...] = (
    PROMETHEUS,
    PROMETHEUS_OPERATOR,
    PROMETHEUS_ADAPTER,
    DCGM_EXPORTER,
    KUEUE,
    COSCHEDULING,
    KARPENTER,
    GATEWAY,
    KUBERAY,
    KUBEFLOW_CRDS,
)
BY_NAME = {c.name: c for c in COMPONENTS}
ALL = "all"


class ComponentInputError(ValueError):
    """An unknown component name (exit 2)."""


def resolve(spec: str) -> list[Component]:
    """Components named in `spec` (comma-separated, or `all`) plus what they require, each after
    what it requires or is to follow."""
    names = [n.strip() for n in spec.split(",") if n.strip()]
    if not names:
        raise ComponentInputError("--with needs at least one component name")
    if ALL in names:
        names = [c.name for c in COMPONENTS]
    for n in names:
        if n not in BY_NAME:
            close = difflib.get_close_matches(n, [*BY_NAME, ALL], n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            raise ComponentInputError(
                f"unknown component {n!r}{hint} (components: {', '.join(BY_NAME)}, or {ALL})"
            )
    closure: set[str] = set()

    def need(name: str) -> None:
        closure.add(name)
        for dep in BY_NAME[name].requires:
            need(dep)

    for n in names:
        need(n)
    ordered: list[str] = []

    def place(name: str) -> None:
        if name in ordered:
            return
        c = BY_NAME[name]
        for dep in (*c.requires, *(a for a in c.after if a in closure)):
            place(dep)
        ordered.append(name)

    for n in names:
        place(n)
    return [BY_NAME[n] for n in ordered]


def image_binary(image: str) -> tuple[Component, Image] | None:
    """The component and binary that play an image, if any."""
    for c in COMPONENTS:
        for repo, binary in c.images.items():
            if plays_image(repo, image):
                return c, binary
    return None


def image_repos() -> tuple[str, ...]:
    """Every image repository a component binary plays (the runtime owns their pods)."""
    return tuple(repo for c in COMPONENTS for repo in c.images)
