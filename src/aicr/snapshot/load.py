"""Snapshot loading: reference -> text -> model."""

from __future__ import annotations

from aicr import sources
from aicr.document import validate
from aicr.kube.target import KubeTarget
from aicr.limits import Kind
from aicr.snapshot.model import Snapshot
from aicr.yaml_io import parse


def parse_snapshot(text: str, source: str = "snapshot.yaml") -> Snapshot:
    """Parse snapshot YAML."""
    return validate(Snapshot, parse(text, source))


def load_snapshot(ref: str, kube: KubeTarget | None = None) -> Snapshot:
    """Load a snapshot from a path, an http(s) URL or ``cm://namespace/name`` (read via kube)."""
    return parse_snapshot(sources.read(ref, kube, kind=Kind.SNAPSHOT), ref)
