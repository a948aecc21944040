"""CTRF (Common Test Report Format) models, merge, read and write.

One CTRF test per check. Phase, requirement ids and check metadata live in
``labels`` and ``extra`` so the report stays valid against the official schema.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from aicr.errors import FileFormatError, Problem, SchemaError

SPEC_VERSION = "1.0.0"
TOOL_NAME = "aicr"


class Status(StrEnum):
    """CTRF test statuses; ``other`` covers every way a check can end without a verdict."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    PENDING = "pending"
    OTHER = "other"


class _Ctrf(BaseModel):
    # CTRF documents written by other tools may carry schema fields we do not use.
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")


class Test(_Ctrf):
    """One check's outcome."""

    __test__ = False  # not a pytest test class, despite the name CTRF gives it

    name: str = Field(min_length=1)
    status: Status
    duration: int = 0
    start: int | None = None
    stop: int | None = None
    suite: list[str] | None = None
    message: str | None = None
    trace: str | None = None
    stdout: list[str] | None = None
    labels: dict[str, Any] | None = None
    extra: dict[str, Any] | None = None

    @property
    def phase(self) -> str | None:
        """The phase the check ran in (the first suite element)."""
        return self.suite[0] if self.suite else None

    @property
    def requirements(self) -> list[str]:
        """CNCF requirement ids the check backs, as recorded by the run."""
        value = (self.labels or {}).get("requirements", [])
        return [value] if isinstance(value, str) else list(value)


class Tool(_Ctrf):
    """The producer of the report."""

    name: str
    version: str | None = None
    extra: dict[str, Any] | None = None


class Summary(_Ctrf):
    """Counts and timing; always recomputed from the tests."""

    tests: int
    passed: int
    failed: int
    skipped: int
    pending: int
    other: int
    start: int
    stop: int
    duration: int | None = None
    suites: int | None = None


class Results(_Ctrf):
    """The results block of a report."""

    tool: Tool
    summary: Summary
    tests: list[Test]
    environment: dict[str, Any] | None = None
    extra: dict[str, Any] | None = None


class Report(_Ctrf):
    """A whole CTRF document."""

    report_format: str = "CTRF"
    spec_version: str = SPEC_VERSION
    report_id: str | None = None
    run_id: str | None = None
    timestamp: str | None = None
    generated_by: str | None = None
    results: Results
    extra: dict[str, Any] | None = None

    @property
    def tests(self) -> list[Test]:
        """All tests of the report."""
        return self.results.tests

    def test(self, name: str) -> Test | None:
        """The test named ``name``, if the report has it."""
        return next((t for t in self.results.tests if t.name == name), None)


def summarize(tests: Iterable[Test], start: int, stop: int) -> Summary:
    """Count statuses; the summary never disagrees with the tests."""
    tests = list(tests)
    counts = {s: sum(1 for t in tests if t.status == s) for s in Status}
    return Summary(
        tests=len(tests),
        passed=counts[Status.PASSED],
        failed=counts[Status.FAILED],
        skipped=counts[Status.SKIPPED],
        pending=counts[Status.PENDING],
        other=counts[Status.OTHER],
        start=start,
        stop=stop,
        duration=max(0, stop - start),
        suites=len({t.phase for t in tests if t.phase}),
    )


def build(
    tests: list[Test],
    *,
    start: int,
    stop: int,
    version: str,
    run_id: str | None = None,
    timestamp: str | None = None,
    extra: dict[str, Any] | None = None,
) -> Report:
    """Assemble a report from finished tests."""
    return Report(
        report_id=str(uuid.uuid4()),
        run_id=run_id,
        timestamp=timestamp,
        generated_by=f"{TOOL_NAME} {version}",
        results=Results(
            tool=Tool(name=TOOL_NAME, version=version),
            summary=summarize(tests, start, stop),
            tests=tests,
        ),
        extra=extra,
    )


def merge(reports: list[Report], *, version: str) -> Report:
    """Merge several reports (for example one per phase) into one; later tests win by name."""
    if not reports:
        raise ValueError("nothing to merge")
    by_name: dict[str, Test] = {}
    for report in reports:
        for test in report.tests:
            by_name[test.name] = test
    start = min(r.results.summary.start for r in reports)
    stop = max(r.results.summary.stop for r in reports)
    extra: dict[str, Any] = {}
    for report in reports:
        extra.update(report.extra or {})
    return build(
        list(by_name.values()),
        start=start,
        stop=stop,
        version=version,
        run_id=reports[0].run_id,
        timestamp=reports[-1].timestamp,
        extra=extra or None,
    )


def dumps(report: Report) -> str:
    """Serialize with camelCase keys, omitting unset fields."""
    return (
        json.dumps(report.model_dump(mode="json", by_alias=True, exclude_none=True), indent=2)
        + "\n"
    )


def parse(text: str, source: str) -> Report:
    """Parse a CTRF document; bad JSON or a bad shape is an input error naming the field."""
    from aicr import json_io

    data = json_io.parse(text, source)
    if not isinstance(data, dict) or data.get("reportFormat") != "CTRF":
        raise SchemaError(Problem("not a CTRF report (expected reportFormat: CTRF)", source=source))
    try:
        return Report.model_validate(data)
    except ValidationError as exc:
        from aicr.document import format_path

        raise SchemaError(
            [
                Problem(e["msg"], source=source, field_path=format_path(tuple(e["loc"])))
                for e in exc.errors()
            ]
        ) from None


def read(path: Path) -> Report:
    """Read a CTRF report from a file (within the report size cap)."""
    from aicr import sources
    from aicr.limits import Kind

    try:
        text = sources.read(str(path), kind=Kind.REPORT)
    except FileFormatError as exc:
        hint = "expected a CTRF JSON report as written by aicr validate -o"
        raise FileFormatError([replace(p, hint=p.hint or hint) for p in exc.problems]) from None
    return parse(text, str(path))
