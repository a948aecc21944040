"""The one list of components, and resolving `--with NAME[,NAME...]` against it."""

from __future__ import annotations

import difflib

from simcluster.components.base import Component, Image
from simcluster.components.prometheus import COMPONENT as PROMETHEUS

COMPONENTS: tuple[Component, ...] = (PROMETHEUS,)
BY_NAME = {c.name: c for c in COMPONENTS}
ALL = "all"


class ComponentInputError(ValueError):
    """An unknown component name (exit 2)."""


def resolve(spec: str) -> list[Component]:
    """Components named in `spec` (comma-separated, or `all`) plus what they need, in order."""
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
    wanted: list[str] = []

    def add(name: str) -> None:
        for dep in BY_NAME[name].requires:
            add(dep)
        if name not in wanted:
            wanted.append(name)

    for n in names:
        add(n)
    return [BY_NAME[n] for n in wanted]


def image_binary(image_repo: str) -> tuple[Component, Image] | None:
    """The component and binary that play an image repository, if any."""
    for c in COMPONENTS:
        if image_repo in c.images:
            return c, c.images[image_repo]
    return None


def image_repos() -> tuple[str, ...]:
    """Every image repository a component binary plays (the runtime owns their pods)."""
    return tuple(repo for c in COMPONENTS for repo in c.images)
