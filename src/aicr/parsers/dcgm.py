"""A dcgm-exporter ``/metrics`` page: its samples, each a name, labels and a value.

The Prometheus text format, read by prometheus_client's own parser. dcgm-exporter
labels each GPU's series ``gpu``, ``UUID``, ``device``, ``modelName``, ``Hostname``
(and ``DCGM_FI_DRIVER_VERSION``-style labels for fields it exports as labels); on
Kubernetes it adds ``container``, ``namespace`` and ``pod`` (empty while no pod holds
the GPU), and for a GPU a DRA claim holds also ``dra_claim_name``,
``dra_claim_namespace``, ``dra_driver_name``, ``dra_pool_name`` and
``dra_device_name`` (its ``internal/pkg/transformation``). DCGM's blank values come
through as the very large numbers it uses for them. Pure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from aicr.parsers import ParseError

INT64_BLANK = float(0x7FFFFFFFFFFFFFF0)
BLANKS = frozenset(
    {float(0x7FFFFFF0 + i) for i in range(4)} | {140737488355328.0 + i for i in range(4)}
)


def _value(value: float) -> float:
    """The sample's number, NaN for DCGM's blank values."""
    return math.nan if value >= INT64_BLANK or value in BLANKS else value


@dataclass(frozen=True)
class Sample:
    """One sample of a scraped page."""

    name: str
    labels: dict[str, str]
    value: float
    timestamp: float | None = None  # an explicit timestamp (seconds), rare on live exporters


@dataclass(frozen=True)
class Page:
    """What one exporter endpoint served: its samples, and the families it declared."""

    samples: tuple[Sample, ...]
    declared: frozenset[str]  # every family named in HELP/TYPE lines


def parse(text: str) -> Page:
    """The samples of a Prometheus text page; ParseError naming the line it cannot read."""
    # prometheus_client pulls in http.server and ssl: only a scrape pays for them
    from prometheus_client.parser import text_string_to_metric_families

    samples: list[Sample] = []
    declared: set[str] = set()
    try:
        for family in text_string_to_metric_families(text):
            declared.add(family.name)
            samples += [
                Sample(
                    s.name,
                    dict(s.labels),
                    _value(float(s.value)),
                    None if s.timestamp is None else float(s.timestamp),
                )
                for s in family.samples
            ]
    except ValueError as exc:
        raise ParseError(f"not the Prometheus text format: {exc}") from None
    return Page(tuple(samples), frozenset(declared))
