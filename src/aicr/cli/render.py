"""Everything the user reads on stderr: plan, gate, live progress, summaries.

stdout is reserved for the report. On a terminal progress is a live table;
otherwise one plain line per event; with --log-json one JSON object per line.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING

from rich.console import Console
from rich.live import Live
from rich.table import Table

from aicr.ctrf import Report, Status
from aicr.gate import GateOutcome
from aicr.plan import Plan
from aicr.runner.events import Event, EventKind

if TYPE_CHECKING:
    from aicr.cncf import Aggregation
    from aicr.snapshot.agent import AgentOutcome

console = Console(stderr=True, highlight=False, soft_wrap=True)
if not console.is_terminal:
    # Logs and CI output are read in wide viewers; 80 columns would fold every message.
    console.width = max(console.width, 160)

_STYLE = {
    Status.PASSED: "green",
    Status.FAILED: "red",
    Status.OTHER: "magenta",
    Status.SKIPPED: "yellow",
    Status.PENDING: "cyan",
}


def warnings(messages: list[str]) -> None:
    """Print warnings, one per line."""
    for message in messages:
        console.print(f"[yellow]warning:[/] {message}")


def note(message: str, *, json_lines: bool = False) -> None:
    """One informational line; a JSON object under --log-json."""
    if json_lines:
        console.out(
            json.dumps({"time": round(time.time(), 3), "event": "note", "message": message}),
            highlight=False,
        )
    else:
        console.print(f"note: {message}", markup=False)


def agent_progress(json_lines: bool) -> Callable[[Event], None]:
    """Progress of the node agents: one note per update of their pods (scheduled, pulling)."""

    def sink(event: Event) -> None:
        if event.kind == EventKind.CHECK_UPDATE and event.check:
            where = f" on {event.node}" if event.node else ""
            note(f"{event.check}{where}: {event.message}", json_lines=json_lines)

    return sink


def agents(outcome: AgentOutcome, *, json_lines: bool = False) -> None:
    """One line per node agent: where it ran and how it ended; what cleanup left."""
    for group, result in outcome.results.items():
        where = f" on {result.node}" if result.node else ""
        note(
            f"node agent {group}{where}: {result.status.value}: {result.message}",
            json_lines=json_lines,
        )
    for group, why in outcome.skipped.items():
        note(f"node agent {group}: not run: {why}", json_lines=json_lines)
    for line in outcome.leftovers:
        note(f"left in the cluster (run {outcome.run_id}): {line}", json_lines=json_lines)


def plan(the_plan: Plan) -> None:
    """The phase -> check plan, with timeouts and the GPUs each check reserves."""
    for phase_plan in the_plan.phases:
        console.print(f"[bold]{phase_plan.phase.value}[/]")
        for check in phase_plan.checks:
            notes = [f"timeout {int(check.timeout.total_seconds())}s"]
            if check.reserves:
                notes.append(f"reserves {check.reserves}")
            if check.skip_reason:
                notes.append(check.skip_reason)
            console.print(f"  {check.name}  [dim]({', '.join(notes)})[/]")
        if sum(1 for c in phase_plan.checks if c.gpus and not c.skip_reason) > 1:
            console.print(
                "  [dim]GPU checks start in this order as their reservations fit "
                "the cluster's free GPUs; the others may overlap freely[/]"
            )


def gate(outcome: GateOutcome) -> None:
    """The readiness gate's verdict and every constraint that did not pass."""
    if not outcome.evaluated:
        console.print(f"readiness gate: [yellow]not evaluated[/] ({outcome.reason})")
        return
    verdict = "[green]passed[/]" if outcome.passed else "[red]failed[/]"
    console.print(f"readiness gate: {verdict} ({len(outcome.results)} constraints)")
    for result in outcome.results:
        if result.verdict == "passed":
            continue
        level = "error" if result.blocks else "warning"
        fix = f" — {result.remediation}" if result.remediation else ""
        console.print(
            f"  [{'red' if result.blocks else 'yellow'}]{level}[/] {result.name} "
            f"{result.expression}: {result.message}{fix}"
        )


def summary(report: Report) -> None:
    """The final table of checks, then the counts."""
    table = Table(title="checks", title_justify="left")
    for column in ("phase", "check", "status", "duration"):
        table.add_column(column, no_wrap=True)
    table.add_column("message", overflow="fold")
    for test in report.tests:
        style = _STYLE.get(test.status, "")
        table.add_row(
            test.phase or "",
            test.name,
            f"[{style}]{test.status.value}[/]",
            f"{test.duration / 1000:.1f}s",
            test.message or "",
        )
    console.print(table)
    s = report.results.summary
    console.print(
        f"{s.tests} checks: {s.passed} passed, {s.failed} failed, "
        f"{s.skipped} skipped, {s.other} other"
    )


def requirements(aggregation: Aggregation, version: str) -> None:
    """The CNCF requirement map: id, level, status, backing checks."""
    table = Table(title=f"CNCF AI Conformance v{version} requirements", title_justify="left")
    for column in ("requirement", "level", "status", "checks"):
        table.add_column(column, overflow="fold")
    for row in aggregation.rows:
        style = "green" if row.status == "Implemented" else "red" if row.level == "MUST" else ""
        status = f"[{style}]{row.status}[/]" if style else row.status
        table.add_row(row.id, row.level, status, ", ".join(row.checks) or "-")
    console.print(table)


@dataclass
class _Row:
    phase: str
    state: str = "pending"
    node: str = ""
    started: float | None = None
    ended: float | None = None


@dataclass
class Progress:
    """An event sink that shows progress the way the output stream suits."""

    the_plan: Plan
    mode: str = "auto"  # auto | plain | json
    rows: dict[str, _Row] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _live: Live | None = None

    def __post_init__(self) -> None:
        """Pick the mode: a live table only on a terminal."""
        if self.mode == "auto":
            self.mode = "live" if console.is_terminal else "plain"
        for check in self.the_plan.checks:
            self.rows[check.name] = _Row(check.phase.value)

    def __enter__(self) -> Progress:
        if self.mode == "live":
            self._live = Live(
                self._table(), console=console, refresh_per_second=4, get_renderable=self._table
            )
            self._live.__enter__()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._live is not None:
            self._live.__exit__(kind, exc, tb)

    def _table(self) -> Table:
        table = Table(box=None)
        for column in ("phase", "check", "state", "node", "elapsed"):
            table.add_column(column)
        now = time.monotonic()
        for name, row in self.rows.items():
            elapsed = ""
            if row.started is not None:
                elapsed = f"{(row.ended or now) - row.started:.0f}s"
            table.add_row(row.phase, name, row.state, row.node, elapsed)
        return table

    def __call__(self, event: Event) -> None:
        """Receive one event (from any thread)."""
        with self._lock:
            row = self.rows.get(event.check or "")
            if row is not None:
                if event.kind == EventKind.CHECK_STARTED:
                    row.state, row.started = "running", time.monotonic()
                elif event.kind == EventKind.CHECK_UPDATE:
                    row.state = event.message or row.state
                elif event.kind == EventKind.CHECK_FINISHED and event.result is not None:
                    row.state, row.ended = event.result.status.value, time.monotonic()
                row.node = event.node or row.node
            if self.mode == "json":
                console.out(json.dumps(_event_json(event)), highlight=False)
            elif self.mode == "plain":
                console.out(_event_line(event), highlight=False)


def _event_json(event: Event) -> dict[str, object]:
    out: dict[str, object] = {"time": round(event.at, 3), "event": event.kind.value}
    for key in ("phase", "check", "node"):
        if getattr(event, key):
            out[key] = getattr(event, key)
    if event.message:
        out["message"] = event.message
    if event.result is not None:
        out["status"] = event.result.status.value
        out["durationMs"] = event.result.stop_ms - event.result.start_ms
    return out


def _event_line(event: Event) -> str:
    stamp = time.strftime("%H:%M:%S", time.localtime(event.at))
    subject = " ".join(x for x in (event.phase, event.check) if x)
    what = event.kind.value
    if event.result is not None:
        what = event.result.status.value
    node = f" on {event.node}" if event.node else ""
    message = f": {event.message}" if event.message else ""
    return f"{stamp} {what} {subject}{node}{message}"
