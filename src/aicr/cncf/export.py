"""junit.xml and e2e.log: the run's checks as test cases, both built from one list.

junit.xml carries each check's captured output (system-out), so the output of checks
that back no requirement reaches reviewers too; e2e.log stays one block per check.

Each check becomes one test case under its own catalog name. A non-passing check that
sits behind a Not Implemented or N/A requirement is exported as skipped with that reason,
because a reviewer's validator fails a whole artifact on any failing test case.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import TextIO
from xml.sax.saxutils import escape, quoteattr

from aicr.cncf.aggregation import Aggregation, skip_reason
from aicr.ctrf import Report, Status

SUITE_NAME = "aicr"
_CONTROL = bytes([*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20)])
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


class Outcome(StrEnum):
    """A test case's result as ``go test -v`` spells it."""

    PASS = "PASS"
    FAIL = "FAIL"
    SKIP = "SKIP"


@dataclass(frozen=True)
class ExportedCase:
    """One check as junit.xml and e2e.log show it."""

    name: str
    phase: str
    outcome: Outcome
    seconds: float
    message: str
    lines: tuple[str, ...] | list[str] = ()  # captured output, the test case's system-out

    @property
    def output(self) -> str:
        """The captured output as one text, made when written (never held for every case)."""
        return "\n".join(self.lines)


def cases(report: Report, agg: Aggregation | None) -> list[ExportedCase]:
    """The export list; junit.xml and e2e.log are both rendered from it, so they agree."""
    out = []
    for test in report.tests:
        message = (test.message or "").strip()
        reason = agg.export_skip_reason(test) if agg else None
        if test.status == Status.PASSED:
            outcome = Outcome.PASS
        elif reason is not None:
            outcome, message = Outcome.SKIP, reason
        elif test.status in (Status.SKIPPED, Status.PENDING):
            outcome, message = Outcome.SKIP, skip_reason(test)
        else:
            outcome = Outcome.FAIL
            message = f"{test.status.value}: {skip_reason(test)}"
        out.append(
            ExportedCase(
                test.name,
                test.phase or "checks",
                outcome,
                test.duration / 1000,
                message,
                test.stdout or (),
            )
        )
    return out


def junit(exported: list[ExportedCase]) -> str:
    """junit.xml as one text (``validate --junit``)."""
    out = io.StringIO()
    write_junit(exported, out)
    return out.getvalue()


def write_junit(exported: list[ExportedCase], out: TextIO) -> None:
    """junit.xml with one testsuite per phase and one testcase per check, written as it goes.

    It is streamed case by case, so captured output is never held twice.
    """
    suites: dict[str, list[ExportedCase]] = {}
    for case in exported:
        suites.setdefault(case.phase, []).append(case)
    out.write('<?xml version="1.0" encoding="utf-8"?>\n')
    out.write(f"<testsuites{_counts(exported)}>\n")
    for phase, cases in suites.items():
        name = quoteattr(f"{SUITE_NAME}.{phase}")
        out.write(f"\t<testsuite name={name}{_counts(cases)}>\n")
        for case in cases:
            out.write(
                f"\t\t<testcase name={quoteattr(_xml(case.name))} classname={name} "
                f'time="{case.seconds:.6f}">\n'
            )
            if case.outcome == Outcome.SKIP:
                message = quoteattr(_xml(case.message or "skipped"))
                out.write(f'\t\t\t<skipped type="skipped" message={message}/>\n')
            elif case.outcome == Outcome.FAIL:
                message = quoteattr(_xml(case.message or "failed"))
                out.write(f'\t\t\t<failure type="failure" message={message}/>\n')
            if case.lines:
                out.write(f"\t\t\t<system-out>{escape(_xml(case.output))}</system-out>\n")
            out.write("\t\t</testcase>\n")
        out.write("\t</testsuite>\n")
    out.write("</testsuites>\n")


def _counts(cases: list[ExportedCase]) -> str:
    failures = sum(1 for c in cases if c.outcome == Outcome.FAIL)
    skipped = sum(1 for c in cases if c.outcome == Outcome.SKIP)
    seconds = sum(c.seconds for c in cases)
    return (
        f' tests="{len(cases)}" failures="{failures}" errors="0" skipped="{skipped}" '
        f'time="{seconds:.6f}"'
    )


def _xml(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot hold (control characters, U+FFFE/F)."""
    if text.isascii():  # the common case, checked in C: only control characters to look for
        data = text.encode("ascii")
        if len(data.translate(None, _CONTROL)) == len(data):
            return text
    return _NOT_XML.sub("", text)


def e2e_log(exported: list[ExportedCase]) -> str:
    """``go test -v`` style output: one ``--- PASS|FAIL|SKIP: <check> (Ns)`` line per check."""
    lines = []
    for case in exported:
        lines.append(f"=== RUN   {case.name}")
        for msg_line in case.message.splitlines():
            lines.append(f"    {case.name}: {msg_line}")
        lines.append(f"--- {case.outcome.value}: {case.name} ({case.seconds:.2f}s)")
    total = sum(c.seconds for c in exported)
    failed = any(c.outcome == Outcome.FAIL for c in exported)
    lines.append("FAIL" if failed else "PASS")
    lines.append(f"{'FAIL' if failed else 'ok'}  \t{SUITE_NAME}\t{total:.3f}s")
    return "\n".join(lines) + "\n"
