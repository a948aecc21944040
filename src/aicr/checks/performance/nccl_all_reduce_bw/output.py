"""nccl-tests' stdout, read as it is printed (``src/util.cu`` of NVIDIA/nccl-tests).

What is read:

- the header ``# nThread 1 nGpus 1 minBytes 8 maxBytes 17179869184 step: 2(factor) ...``
  and ``# Reducing maxBytes to N due to memory limitation``;
- the rank lines ``#  Rank  3 Group  0 Pid   4242 on   worker-1 device  3 [0000:5d:00] NVIDIA
  H100 80GB HBM3`` (rank 0 gathers every process's lines and prints them in rank order);
- the table: its column header line (``size count type redop root`` then the out-of-place
  and in-place columns, ``time algbw busbw #wrong`` each, more with ``-I``) and one row
  per message size; ``#wrong`` is ``N/A`` when data checking is off;
- the footer: ``# Out of bounds values : 0 OK``, ``# Avg bus bandwidth : 157.29`` and
  ``# Collective test concluded: all_reduce_perf``.

Anything else (NCCL's own ``NCCL INFO`` lines, mpirun's messages) is ignored. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_HEADER = re.compile(r"^#\s*nThread\s+(\d+)\s+nGpus\s+(\d+)\s+minBytes\s+(\d+)\s+maxBytes\s+(\d+)")
_REDUCED = re.compile(r"^#\s*Reducing maxBytes to\s+(\d+)")
_RANK = re.compile(
    r"^#\s+Rank\s+(\d+)\s+Group\s+(\d+)\s+Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)\s+"
    r"\[([0-9a-fA-Fx:]+)\]\s+(.*?)\s*$"
)
_COLUMNS = re.compile(r"^#\s+size\s+count\s+type\s+redop\s+root\s+(.*)$")
_OOB = re.compile(r"^#\s*Out of bounds values\s*:\s*(\d+)")
_AVG = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(\S+)")
_CONCLUDED = re.compile(r"^#\s*Collective test concluded")
_ROW = re.compile(r"^\s*\d+\s+\d+\s+\S+\s+\S+\s+-?\d+\s")
SIDE = ("time", "algbw", "busbw", "#wrong")


@dataclass(frozen=True)
class RankLine:
    """One rank as nccl-tests reports it: where it runs and on which device."""

    rank: int
    group: int
    pid: int
    host: str
    device: int
    bus: str
    name: str


@dataclass(frozen=True)
class Side:
    """One half of a row: out-of-place or in-place."""

    time_us: float
    algbw: float
    busbw: float
    wrong: int | None  # None: data checking was off (``N/A``)


@dataclass(frozen=True)
class Row:
    """One message size."""

    size: int
    count: int
    dtype: str
    redop: str
    out_of_place: Side
    in_place: Side


@dataclass
class Report:
    """Everything read from one run's output."""

    max_bytes: int | None = None  # what the run was asked for
    reduced_to: int | None = None  # what nccl-tests cut it to for lack of GPU memory
    ranks: list[RankLine] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    out_of_bounds: int | None = None
    avg_busbw: float | None = None
    concluded: bool = False
    problems: list[str] = field(default_factory=list)  # rows that could not be read

    @property
    def largest(self) -> Row | None:
        """The row of the largest message size."""
        return max(self.rows, key=lambda r: r.size) if self.rows else None

    @property
    def wrong(self) -> int:
        """Wrong elements over every row and both halves."""
        return sum((s.wrong or 0) for r in self.rows for s in (r.out_of_place, r.in_place))

    def incomplete(self) -> str | None:
        """Why the output is not a whole run (None when it is)."""
        if self.max_bytes is None:
            return "no nccl-tests header (`# nThread ... maxBytes ...`) in the output"
        if not self.columns:
            return "the results table never started"
        if self.problems:
            return "; ".join(self.problems)
        if not self.rows:
            return "the results table has no row"
        expected = self.reduced_to or self.max_bytes
        largest = self.largest
        assert largest is not None
        if largest.size < expected:
            return (
                f"the table stops at {largest.size} B, before the {expected} B the run "
                "was asked for (truncated)"
            )
        if self.avg_busbw is None or not self.concluded:
            return "the output ends before nccl-tests' summary (`# Avg bus bandwidth`)"
        return None


def _number(token: str) -> float:
    return float(token)


def _side(tokens: list[str], names: list[str]) -> Side:
    values = dict(zip(names, tokens, strict=True))
    wrong = values["#wrong"]
    return Side(
        time_us=_number(values.get("time") or values.get("cputime") or "nan"),
        algbw=_number(values["algbw"]),
        busbw=_number(values["busbw"]),
        wrong=None if wrong == "N/A" else int(_number(wrong)),
    )


def _row(line: str, columns: list[str]) -> Row:
    tokens = line.split()
    half = len(columns) // 2
    head, body = tokens[:5], tokens[5 : 5 + len(columns)]
    if len(body) != len(columns):
        raise ValueError(f"{len(tokens)} fields, expected at least {5 + len(columns)}")
    return Row(
        size=int(head[0]),
        count=int(head[1]),
        dtype=head[2],
        redop=head[3],
        out_of_place=_side(body[:half], columns[:half]),
        in_place=_side(body[half:], columns[half:]),
    )


def parse(text: str) -> Report:
    """Read one nccl-tests run (rank 0's stdout, or the launcher's log)."""
    report = Report()
    for raw in text.splitlines():
        line = raw.rstrip()
        if m := _HEADER.match(line):
            report.max_bytes = int(m.group(4))
        elif m := _REDUCED.match(line):
            report.reduced_to = int(m.group(1))
        elif m := _RANK.match(line):
            rank, group, pid, host, device, bus, name = m.groups()
            report.ranks.append(
                RankLine(int(rank), int(group), int(pid), host, int(device), bus, name)
            )
        elif (m := _COLUMNS.match(line)) and "busbw" in m.group(1):
            names = [c for c in m.group(1).split() if c not in ("timestamp",)]
            if len(names) % 2 or names[: len(SIDE)][1:3] != ["algbw", "busbw"]:
                report.problems.append(f"unknown table columns: {m.group(1).strip()}")
            report.columns = names
        elif m := _OOB.match(line):
            report.out_of_bounds = int(m.group(1))
        elif m := _AVG.match(line):
            try:
                report.avg_busbw = float(m.group(1))
            except ValueError:
                report.problems.append(f"unreadable average bus bandwidth {m.group(1)!r}")
        elif _CONCLUDED.match(line):
            report.concluded = True
        elif report.columns and _ROW.match(line):
            try:
                report.rows.append(_row(line, report.columns))
            except ValueError as exc:
                report.problems.append(f"unreadable table row {line.strip()!r}: {exc}")
    return report
