"""junit.xml and e2e.log: the run's checks as test cases, both built from one list.

junit.xml carries each check's captured output (system-out), so the output of checks
that back no requirement reaches reviewers too; e2e.log stays one block per check.

Each check becomes one test case under its own catalog name. A non-passing check that
sits behind a Not Implemented or N/A requirement is exported as skipped with that reason,
because a reviewer's validator fails a whole artifact on any failing test case.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import junit_xml

from aicr.cncf.aggregation import Aggregation, skip_reason
from aicr.ctrf import Report, Status

SUITE_NAME = "aicr"


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
    output: str = ""  # captured output, shown as the test case's system-out


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
                "\n".join(test.stdout or []),
            )
        )
    return out


def junit(exported: list[ExportedCase]) -> str:
    """junit.xml with one testsuite per phase and one testcase per check."""
    suites: dict[str, list[junit_xml.TestCase]] = {}
    for case in exported:
        tc = junit_xml.TestCase(
            case.name,
            classname=f"{SUITE_NAME}.{case.phase}",
            elapsed_sec=case.seconds,
            stdout=case.output or None,
        )
        if case.outcome == Outcome.SKIP:
            tc.add_skipped_info(case.message or "skipped")
        elif case.outcome == Outcome.FAIL:
            tc.add_failure_info(case.message or "failed")
        suites.setdefault(case.phase, []).append(tc)
    text: str = junit_xml.to_xml_report_string(
        [junit_xml.TestSuite(f"{SUITE_NAME}.{phase}", tcs) for phase, tcs in suites.items()],
        encoding="utf-8",
    )
    return text


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
