"""nccl-tests' stdout (``all_reduce_perf`` and its siblings), read as every release prints it.

What rank 0 prints, from NVIDIA/nccl-tests ``src/common.cu`` and ``src/util.cu``. Each
layout change is dated by the first release tag whose source prints it (``git tag
--contains`` of the commit that added it, read in the repository's history):

- from **v2.17.4** (commit 9641693) a version line ``# nccl-tests version 2.17.4
  nccl-headers=... nccl-library=...``;
- the header ``# nThread 1 nGpus 1 minBytes 8 maxBytes 17179869184 step: 2(factor) ...``
  with the *requested* ``-b``/``-e``; ``agg iters``/``graph`` from v2.13.0, and
  ``unalign: 0`` at its end from **v2.18.2** (eb0d3d2, "Display unalign setting in output");
- from **v2.10.0** (1ae8cdc) ``# Reducing maxBytes to N due to memory limitation`` whenever
  the smallest GPU is too small for ``-e``: ``N = (memory - 1 GiB) / 3`` (``/ 2`` with
  ``-c 0``), from v2.16.6 (6edafa0) less a reserve of 1 GiB per 16 GiB, at most 4 GiB, so N
  is almost never a size the table reaches. Releases before v2.10.0 never lower maxBytes:
  a run too big for the GPU fails allocating its buffers, before the table;
- the rank lines ``#  Rank  3 Group  0 Pid 4242 on worker-1 device  3 [0000:5d:00] NVIDIA ...``:
  ``Group`` from **v2.13.4** (d313d20; ``#   Rank  3 Pid 4242 ...`` before), the bus as
  ``[0x5d]`` until the PCI domain and device join it in v2.14.1 (b4300cc);
- the table: one row per size, doubling from ``-b`` (``-f``) or stepping by ``-i``, while
  the size stays within maxBytes. Its columns are ``size count type redop root`` then
  ``time algbw busbw #wrong`` out-of-place and in-place; releases before **v2.13.0**
  (51af557) print no ``root`` column and an ``error`` column (the largest delta, not a
  count) instead of ``#wrong``; ``N/A`` stands where data checking is off;
- the summary ``# Out of bounds values : 0 OK`` and ``# Avg bus bandwidth : 157.29``, printed
  after the last size; from **v2.16.7** (dafb704, PR #316) ``# Collective test concluded:
  all_reduce_perf`` after it.

Output of ``mpirun --tag-output`` (``[1,0]<stdout>:`` before every line) and of Slurm's
``srun --label`` (`` 0: `` before every line, the task id) reads the same.
Anything else (NCCL's ``INFO`` lines, the launcher's messages) is ignored. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from aicr.parsers import ParseError

_TAG = re.compile(r"^\[\d+,\d+\]<(stdout|stderr)>:")
_LABEL = re.compile(r"^\s*\d+: ")  # srun --label: the task id, padded to the widest
_VERSION = re.compile(r"^#\s*nccl-tests version\s+(\S+)")
_HEADER = re.compile(
    r"^#\s*nThread\s+(\d+)\s+nGpus\s+(\d+)\s+minBytes\s+(\d+)\s+maxBytes\s+(\d+)"
    r"(?:\s+step:\s*(\d+)\((factor|bytes)\))?"
)
_REDUCED = re.compile(r"^#\s*Reducing maxBytes to\s+(\d+)")
# releases before 2.13 print no ``Group`` (``#   Rank  0 Pid 88131 on seville device  0 ...``)
_RANK = re.compile(
    r"^#\s+Rank\s+(\d+)\s+(?:Group\s+(\d+)\s+)?Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)\s+"
    r"\[([0-9a-fA-Fx:]+)\]\s+(.*?)\s*$"
)
_COLUMNS = re.compile(r"^#\s+size\s+count\s+type\s+(.*)$")
_OOB = re.compile(r"^#\s*Out of bounds values\s*:\s*(\d+)")
_AVG = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(\S+)")
_CONCLUDED = re.compile(r"^#\s*Collective test concluded")
_ROW = re.compile(r"^\s*\d+\s+\d+\s+\S+\s")
LEADING = ("size", "count", "type", "redop", "root")
WRONG = ("#wrong", "error")


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
    """One half of a row (out-of-place or in-place); ``None`` where the tool printed N/A."""

    time_us: float | None
    algbw: float | None
    busbw: float | None
    wrong: int | None  # None: data checking off, or a release that prints a delta (``error``)


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
class Run:
    """Everything read from one run's output."""

    version: str | None = None  # None: a release before 2.17.4 prints no version line
    min_bytes: int | None = None
    max_bytes: int | None = None  # what the run was asked for (-e)
    step: tuple[int, str] | None = None  # (2, "factor") or (1048576, "bytes")
    reduced_to: int | None = None  # what nccl-tests cut maxBytes to for lack of GPU memory
    ranks: list[RankLine] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    out_of_bounds: int | None = None
    avg_busbw: float | None = None
    concluded: bool = False  # the 2.16.7+ footer line
    problems: list[str] = field(default_factory=list)  # rows that could not be read

    @property
    def largest(self) -> Row | None:
        """The first row of the largest message size."""
        if not self.rows:
            return None
        top = max(r.size for r in self.rows)
        return next(r for r in self.rows if r.size == top)

    @property
    def largest_bytes(self) -> int | None:
        """The largest message size the table reached."""
        row = self.largest
        return None if row is None else row.size

    @property
    def busbw_at_largest(self) -> float | None:
        """Out-of-place bus bandwidth (GB/s) at the largest size."""
        row = self.largest
        return None if row is None else row.out_of_place.busbw

    @property
    def wrong(self) -> int:
        """Wrong elements over every row and both halves (0 where the tool printed no count)."""
        return sum((s.wrong or 0) for r in self.rows for s in (r.out_of_place, r.in_place))

    @property
    def effective_max(self) -> int | None:
        """The largest size nccl-tests may print: the request, or its memory reduction."""
        if self.max_bytes is None:
            return None
        return min(self.max_bytes, self.reduced_to) if self.reduced_to else self.max_bytes

    @property
    def last_size(self) -> int | None:
        """The last size nccl-tests' loop reaches from ``-b`` within the (reduced) maximum."""
        top, size = self.effective_max, self.min_bytes
        if top is None or size is None:
            return None
        size = min(size, top)  # 2.16.6+ lower minBytes to a reduced maximum
        factor, kind = self.step or (2, "factor")
        if size <= 0 or (kind == "factor" and factor <= 1) or (kind == "bytes" and factor <= 0):
            return size
        last = size
        while size <= top:
            last = size
            size = size * factor if kind == "factor" else size + factor
        return last

    @property
    def complete(self) -> bool:
        """The table reached the last size the loop steps to (within one step: counts round)."""
        last, largest = self.last_size, self.largest_bytes
        if last is None or largest is None or self.problems:
            return False
        factor, kind = self.step or (2, "factor")
        previous = last // factor if kind == "factor" and factor > 1 else last - factor
        return largest > previous or largest >= last

    def incomplete(self) -> str | None:
        """Why the output is not a whole run (None when it is): judged by table and summary."""
        if self.max_bytes is None:
            return "no nccl-tests header (`# nThread ... maxBytes ...`) in the output"
        if not self.columns:
            return "the results table never started"
        if self.problems:
            return "; ".join(self.problems)
        if not self.rows:
            return "the results table has no row"
        if not self.complete:
            reduced = f" (reduced from {self.max_bytes} B)" if self.reduced_to else ""
            stops = (
                f"the table stops at {self.largest_bytes} B, before {self.last_size} B, the last "
                f"size nccl-tests steps to within {self.effective_max} B{reduced}"
            )
            if self.avg_busbw is None or self.reduced_to:
                return f"{stops} (truncated)"
            # The summary follows the last size, so the loop ended early on purpose: only a
            # lowered maximum does that, and every release that lowers it says so.
            return (
                f"{stops}, yet the summary follows and no `# Reducing maxBytes` line says why "
                "(nccl-tests 2.10.0+ print one whenever they lower the maximum, older releases "
                "never lower it): lines are missing from this output"
            )
        if self.avg_busbw is None:
            return "the output ends before nccl-tests' summary (`# Avg bus bandwidth`)"
        return None


def _number(token: str) -> float | None:
    return None if token == "N/A" else float(token)


def _side(tokens: list[str], names: list[str]) -> Side:
    values = dict(zip(names, tokens, strict=True))
    wrong_name = next(n for n in names if n in WRONG)
    wrong = values[wrong_name]
    count = _number(wrong) if wrong_name == "#wrong" else None
    return Side(
        time_us=_number(values.get("time") or values.get("cputime") or "N/A"),
        algbw=_number(values["algbw"]),
        busbw=_number(values["busbw"]),
        wrong=None if count is None else int(count),
    )


def _columns(spec: str) -> tuple[list[str], str | None]:
    """``(names per side, both sides)`` from the text after ``size count type``."""
    names = spec.split()
    lead = 0
    while lead < 2 and names and names[0] in LEADING:
        names, lead = names[1:], lead + 1
    names = [n for n in names if n != "timestamp"]
    half = len(names) // 2
    sides = (names[:half], names[half:])
    for side in sides:
        if not {"algbw", "busbw"} <= set(side) or not any(n in WRONG for n in side):
            return [], f"unknown table columns: {spec.strip()}"
    return ["size", "count", "type", *LEADING[3 : 3 + lead], *names], None


def _row(line: str, columns: list[str]) -> Row:
    lead = sum(1 for c in columns if c in LEADING)
    body_names = columns[lead:]
    tokens = line.split()
    head, body = tokens[:lead], tokens[lead : lead + len(body_names)]
    if len(body) != len(body_names):
        raise ValueError(f"{len(tokens)} fields, expected at least {lead + len(body_names)}")
    half = len(body_names) // 2
    return Row(
        size=int(head[0]),
        count=int(head[1]),
        dtype=head[2],
        redop=head[3] if lead > 3 else "",
        out_of_place=_side(body[:half], body_names[:half]),
        in_place=_side(body[half:], body_names[half:]),
    )


def _lines(text: str) -> list[str]:
    """The lines printed, without ``--tag-output`` (stderr dropped) or ``--label`` prefixes."""
    out = []
    for raw in text.splitlines():
        line = raw.rstrip()
        tagged = _TAG.match(line.lstrip())
        if tagged:
            if tagged.group(1) == "stderr":
                continue
            line = line.lstrip()[tagged.end() :]
        elif labelled := _LABEL.match(line):
            line = line[labelled.end() :]
        out.append(line)
    return out


def parse(text: str) -> Run:
    """Read one nccl-tests run (rank 0's stdout, or the launcher's log).

    Raises ParseError when the text holds neither nccl-tests' header nor its table.
    """
    run = Run()
    for line in _lines(text):
        if m := _VERSION.match(line):
            run.version = m.group(1)
        elif m := _HEADER.match(line):
            run.min_bytes, run.max_bytes = int(m.group(3)), int(m.group(4))
            if m.group(5):
                run.step = (int(m.group(5)), m.group(6))
        elif m := _REDUCED.match(line):
            run.reduced_to = int(m.group(1))
        elif m := _RANK.match(line):
            rank, group, pid, host, device, bus, name = m.groups()
            run.ranks.append(
                RankLine(int(rank), int(group or 0), int(pid), host, int(device), bus, name)
            )
        elif (m := _COLUMNS.match(line)) and "busbw" in m.group(1):
            columns, problem = _columns(m.group(1))
            if problem:
                run.problems.append(problem)
            run.columns = columns
        elif m := _OOB.match(line):
            run.out_of_bounds = int(m.group(1))
        elif m := _AVG.match(line):
            try:
                run.avg_busbw = float(m.group(1))
            except ValueError:
                run.problems.append(f"unreadable average bus bandwidth {m.group(1)!r}")
        elif _CONCLUDED.match(line):
            run.concluded = True
        elif run.columns and _ROW.match(line):
            try:
                run.rows.append(_row(line, run.columns))
            except ValueError as exc:
                run.problems.append(f"unreadable table row {line.strip()!r}: {exc}")
    if run.max_bytes is None and not run.columns:
        first = next((ln.strip() for ln in _lines(text) if ln.strip()), "no output")
        raise ParseError(
            "not nccl-tests output: no header (`# nThread ... maxBytes ...`) and no results "
            f"table; it begins {first[:200]!r}"
        )
    return run
