"""Reading ``nvidia-smi -q -x``: the driver, CUDA version and GPUs it lists.

Shared by every check whose probe runs nvidia-smi; pure, tested on plain text.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass


@dataclass(frozen=True)
class Gpu:
    """One GPU as nvidia-smi lists it."""

    product: str
    uuid: str


@dataclass(frozen=True)
class SmiReport:
    """What ``nvidia-smi -q -x`` said."""

    driver: str
    cuda: str
    gpus: tuple[Gpu, ...]


def parse_xml(text: str) -> SmiReport:
    """Parse ``nvidia-smi -q -x`` output; ValueError when it is not that document."""
    start = text.find("<?xml")
    if start < 0:
        start = text.find("<nvidia_smi_log")
    if start < 0:
        raise ValueError("no nvidia_smi_log document in the output")
    try:
        root = ET.fromstring(text[start:].encode())
    except ET.ParseError as exc:
        raise ValueError(f"malformed nvidia-smi XML: {exc}") from None
    if root.tag != "nvidia_smi_log":
        raise ValueError(f"unexpected XML root <{root.tag}>, not <nvidia_smi_log>")
    driver = (root.findtext("driver_version") or "").strip()
    if not driver:
        raise ValueError("nvidia-smi XML has no driver_version")
    gpus = tuple(
        Gpu((g.findtext("product_name") or "").strip(), (g.findtext("uuid") or "").strip())
        for g in root.findall("gpu")
    )
    return SmiReport(driver, (root.findtext("cuda_version") or "").strip(), gpus)


def first_line(log: str) -> str:
    """The first non-blank line of a probe's output ("no output" when there is none)."""
    return next((line.strip() for line in log.splitlines() if line.strip()), "no output")


def read_probe(exit_code: int | None, log: str) -> SmiReport | str:
    """What a probe running ``nvidia-smi -q -x`` reported, or why it reported nothing."""
    if exit_code != 0:
        return f"nvidia-smi exited {exit_code}: {first_line(log)}"
    try:
        return parse_xml(log)
    except ValueError as exc:
        return str(exc)
