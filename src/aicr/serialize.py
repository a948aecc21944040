"""Reports and snapshots serialized as text in the ``-t/--format`` formats: json, yaml, table.

These are AICR's serializer formats; ``writers`` decides where the text goes.
``table`` is for people: two aligned columns, FIELD and VALUE, one row per reading
(snapshot) or per summary count (report).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from enum import StrEnum
from typing import Any

import yaml

from aicr import ctrf
from aicr.ctrf import Report
from aicr.snapshot.model import Snapshot


class Format(StrEnum):
    """What ``-t`` accepts."""

    JSON = "json"
    YAML = "yaml"
    TABLE = "table"


EXTENSIONS = {Format.JSON: "json", Format.YAML: "yaml", Format.TABLE: "txt"}


def _yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def table(rows: Iterable[tuple[str, Any]]) -> str:
    """FIELD and VALUE columns, aligned, with a header; ``<empty>`` when there are no rows."""
    body = [(str(k), "" if v is None else str(v)) for k, v in rows]
    if not body:
        return "<empty>\n"
    rows_out = [("FIELD", "VALUE"), ("-----", "-----"), *body]
    width = max(len(k) for k, _ in rows_out)
    return "".join(f"{k.ljust(width)}  {v}".rstrip() + "\n" for k, v in rows_out)


def report_text(report: Report, fmt: Format) -> str:
    """The CTRF report as JSON (the default, as AICR), YAML, or a table of its summary."""
    if fmt == Format.JSON:
        return ctrf.dumps(report)
    if fmt == Format.YAML:
        return _yaml(json.loads(ctrf.dumps(report)))
    summary = report.results.summary.model_dump(exclude_none=True)
    return table((f"summary.{key}", value) for key, value in summary.items())


def snapshot_text(snapshot: Snapshot, fmt: Format) -> str:
    """The snapshot in AICR's file format (YAML or JSON), or a table of ``Type.subtype.key``."""
    if fmt == Format.TABLE:
        return table(
            (f"{m.type.value}.{sub.subtype}.{key}", value)
            for m in snapshot.measurements
            for sub in m.subtypes
            for key, value in sub.data.items()
        )
    data = snapshot.model_dump(mode="json", by_alias=True, exclude_none=True)
    if fmt == Format.JSON:
        return json.dumps(data, indent=2) + "\n"
    return _yaml(data)
