"""What a probe running ``nvidia-smi -q -x`` reported: its driver, CUDA version and GPUs.

Shared by every check whose probe runs nvidia-smi; the document itself is read by
``aicr.parsers.nvidia_smi``. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass

from aicr.parsers import ParseError
from aicr.parsers.nvidia_smi import Gpu, parse_xml


@dataclass(frozen=True)
class SmiReport:
    """What ``nvidia-smi -q -x`` said."""

    driver: str
    cuda: str
    gpus: tuple[Gpu, ...]


def report(text: str) -> SmiReport:
    """The driver, CUDA version and GPUs of a ``nvidia-smi -q -x`` output (ParseError if none).

    The driver and CUDA version are read from the GPUs nvidia-smi lists: a document
    listing none says nothing to compare (``no GPU listed``).
    """
    gpus = tuple(parse_xml(text))
    if not gpus:
        return SmiReport("no GPU listed", "", gpus)
    return SmiReport(gpus[0].driver_version, gpus[0].cuda_version or "", gpus)


def first_line(log: str) -> str:
    """The first non-blank line of a probe's output ("no output" when there is none)."""
    return next((line.strip() for line in log.splitlines() if line.strip()), "no output")


def read_probe(exit_code: int | None, log: str) -> SmiReport | str:
    """What a probe running ``nvidia-smi -q -x`` reported, or why it reported nothing."""
    if exit_code != 0:
        return f"nvidia-smi exited {exit_code}: {first_line(log)}"
    try:
        return report(log)
    except ParseError as exc:
        return str(exc)
