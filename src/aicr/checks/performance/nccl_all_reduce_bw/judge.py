"""The verdict on one nccl-tests run: every rank where expected, a whole table, the gate.

Pure: a parsed ``aicr.parsers.nccl_tests.Run``, the ranks each worker host should hold, and
the recipe's constraint in, a ``Verdict`` out. The gate is the out-of-place bus
bandwidth at the largest message size, compared with the constraint's own
operator and number; nothing is scaled or forgiven.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from aicr.constraints import NumberGate
from aicr.parsers.nccl_tests import Run

Outcome = Literal["passed", "failed", "other"]


@dataclass(frozen=True)
class Host:
    """A worker pod as mpirun addresses it: its hostname, node and GPUs."""

    hostname: str
    node: str
    gpus: int


@dataclass(frozen=True)
class Verdict:
    """How the run came out, and the figures behind it."""

    outcome: Outcome
    message: str
    busbw: float | None = None
    size: int | None = None


def missing_ranks(report: Run, hosts: list[Host]) -> list[str]:
    """What is wrong with the rank lines: each host must show exactly its GPUs, once each."""
    problems: list[str] = []
    expected = sum(h.gpus for h in hosts)
    seen = sorted(r.rank for r in report.ranks)
    if seen != list(range(expected)):
        absent = sorted(set(range(expected)) - set(seen))
        extra = sorted(set(seen) - set(range(expected)))
        if absent:
            problems.append(f"rank lines missing for ranks {spans(absent)} of {expected}")
        if extra or len(seen) != len(set(seen)):
            problems.append(f"unexpected rank lines {seen} for {expected} ranks")
    by_host: dict[str, set[int]] = {}
    for r in report.ranks:
        by_host.setdefault(r.host, set()).add(r.device)
    for h in hosts:
        devices = by_host.pop(h.hostname, set())
        if devices != set(range(h.gpus)):
            problems.append(
                f"{h.hostname} (node {h.node}) shows devices "
                f"{sorted(devices) or 'none'}, expected 0-{h.gpus - 1}"
            )
    problems += [f"ranks on unknown host {host}" for host in sorted(by_host)]
    return problems


def spans(numbers: list[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``0-2,5`` (sorted input)."""
    parts, start = [], numbers[0]
    for a, b in zip(numbers, [*numbers[1:], None], strict=True):
        if b != a + 1:
            parts.append(str(start) if start == a else f"{start}-{a}")
            start = b if b is not None else a
    return ",".join(parts)


def judge(report: Run, hosts: list[Host], gate: NumberGate | None) -> Verdict:
    """The run's outcome: ``other`` when it cannot be judged, else the gate's verdict."""
    ranks = missing_ranks(report, hosts)
    if ranks:
        return Verdict("other", "; ".join(ranks))
    why = report.incomplete()
    if why:
        return Verdict("other", why)
    largest = report.largest
    assert largest is not None
    busbw, size = largest.out_of_place.busbw, largest.size
    if busbw is None:
        return Verdict("other", f"the table prints no out-of-place busbw (N/A) at {size} B")
    wrong = report.wrong
    if wrong or report.out_of_bounds:
        return Verdict(
            "failed",
            f"data errors: {wrong} wrong elements in the table, "
            f"out of bounds values {report.out_of_bounds}",
            busbw,
            size,
        )
    measured = f"out-of-place busbw {busbw:g} GB/s at {size} B"
    if gate is None:
        return Verdict(
            "passed", f"{measured} (no nccl-all-reduce-bw constraint to gate on)", busbw, size
        )
    if gate.holds(busbw):
        return Verdict("passed", f"{measured} satisfies {gate}", busbw, size)
    return Verdict("failed", f"{measured} does not satisfy {gate}", busbw, size)
