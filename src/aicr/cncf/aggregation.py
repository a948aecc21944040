"""Fail-closed aggregation: check outcomes of a run -> one status per CNCF requirement.

A requirement is Implemented only when every check that backs it is in the report and
passed. Anything else (failed, skipped, pending, other, missing) is incomplete: an
applicable MUST then blocks the submission, a SHOULD renders Not Implemented. N/A comes
only from the validate config, with a justification, for conditional requirements.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from aicr.cncf.requirements import UPSTREAM_REVISION, Level, Requirement, RequirementSet
from aicr.config import NA_PATH, ValidateConfig
from aicr.ctrf import Report, Status, Test
from aicr.errors import InputError, Problem

# Statuses that count as a failed check for exit codes (a crash or timeout is no pass).
FAILING: frozenset[Status] = frozenset({Status.FAILED, Status.OTHER})
UNBACKED = "no aicr check backs this requirement yet, so the run cannot show it"


class ReqStatus(StrEnum):
    """Where a requirement ended up; the first three are PRODUCT.yaml statuses."""

    IMPLEMENTED = "Implemented"
    NOT_IMPLEMENTED = "Not Implemented"
    NOT_APPLICABLE = "N/A"
    INCOMPLETE = "incomplete"  # an applicable MUST without a full pass: blocks a submission


@dataclass(frozen=True)
class CheckOutcome:
    """One expected check of a requirement, as the run left it."""

    name: str
    test: Test | None
    planned: bool

    @property
    def passed(self) -> bool:
        """True only for a check that is in the report and passed."""
        return self.test is not None and self.test.status == Status.PASSED

    @property
    def verdict(self) -> str:
        """The CTRF status, or ``missing``."""
        return self.test.status.value if self.test else "missing"

    def describe(self) -> str:
        """Why this check does not count as a pass, in one phrase."""
        test = self.test
        if test is None:
            where = "planned by the recipe" if self.planned else "not planned by the recipe"
            return f"{self.name} is missing from the report ({where})"
        detail = _detail(test)
        return f"{self.name} {test.status.value}" + (f" ({detail})" if detail else "")


def _detail(test: Test) -> str:
    extra: dict[str, Any] = test.extra or {}
    parts = [str(extra[k]) for k in ("statusDetail", "reason") if extra.get(k)]
    if test.message:
        parts.append(test.message.strip().splitlines()[0] if test.message.strip() else "")
    return "; ".join(p for p in parts if p)


def skip_reason(test: Test) -> str:
    """The reason a skipped (or otherwise unfinished) check gives."""
    return _detail(test) or test.status.value


@dataclass(frozen=True)
class RequirementResult:
    """One requirement's status and why."""

    requirement: Requirement
    status: ReqStatus
    checks: list[CheckOutcome]
    justification: str | None = None

    @property
    def reasons(self) -> list[str]:
        """Why it is not Implemented, one phrase per check that did not pass.

        Read from the checks' tests, so the same decision over a redacted report
        (``Aggregation.over``) quotes only redacted messages.
        """
        if self.status in (ReqStatus.IMPLEMENTED, ReqStatus.NOT_APPLICABLE):
            return []
        if not self.checks:
            return [UNBACKED]
        return [c.describe() for c in self.checks if not c.passed]

    @property
    def id(self) -> str:
        """The requirement id."""
        return self.requirement.id

    @property
    def product_status(self) -> str:
        """The PRODUCT.yaml status (an incomplete MUST is never written)."""
        return (
            ReqStatus.NOT_IMPLEMENTED.value
            if self.status == ReqStatus.INCOMPLETE
            else self.status.value
        )


@dataclass(frozen=True)
class SummaryRow:
    """One line of the requirement summary printed after a run."""

    id: str
    level: str
    status: str
    checks: list[str]  # "<check> (<verdict>)", in the requirement's order


@dataclass(frozen=True)
class Aggregation:
    """Per-requirement statuses of one run for one conformance version."""

    version: str
    results: list[RequirementResult]
    tests: list[Test]
    reqs: RequirementSet
    interrupted: bool = False

    def result(self, requirement_id: str) -> RequirementResult | None:
        """The result for ``requirement_id``."""
        return next((r for r in self.results if r.id == requirement_id), None)

    def over(self, report: Report) -> Aggregation:
        """These decisions shown over ``report``: the same run with its values redacted.

        Every status stays as decided; each check's test, and so every reason (which
        quotes the check's message), is ``report``'s. A report whose checks differ by
        name or status is not the run that was decided, and is refused.
        """
        ran = [(t.name, t.status) for t in self.tests]
        if [(t.name, t.status) for t in report.tests] != ran:
            raise ValueError("the report's checks are not those of the decided run")
        results = [
            replace(res, checks=[replace(c, test=report.test(c.name)) for c in res.checks])
            for res in self.results
        ]
        return replace(self, results=results, tests=list(report.tests))

    @property
    def unbacked_tests(self) -> list[Test]:
        """Checks of the run that back no requirement of this version (listed in README)."""
        return [t for t in self.tests if not self.reqs.backed_by(t.name)]

    @property
    def failed_checks(self) -> list[Test]:
        """Checks that failed or ended without a verdict (``other``)."""
        return [t for t in self.tests if t.status in FAILING]

    def _tolerated(self, test: Test) -> bool:
        """A failed check is tolerated in a submission only behind SHOULD or N/A requirements."""
        backed = self.reqs.backed_by(test.name)
        if not backed:
            return False
        for req in backed:
            res = self.result(req.id)
            if req.level == Level.MUST and not (res and res.status == ReqStatus.NOT_APPLICABLE):
                return False
        return True

    @property
    def contradictions(self) -> list[tuple[str, list[str]]]:
        """(requirement, passed checks) where the config declares N/A but the run shows it.

        A submission cannot say "we provide no autoscaler" beside a passed autoscaling check.
        """
        return [
            (res.id, passed)
            for res in self.results
            if res.status == ReqStatus.NOT_APPLICABLE
            and (passed := [c.name for c in res.checks if c.passed])
        ]

    @property
    def blocking(self) -> list[str]:
        """Why a submission from this run must fail; empty when it may be written."""
        reasons = [
            f"{req_id} is declared N/A in the config, but its check {', '.join(checks)} "
            "ran and passed"
            for req_id, checks in self.contradictions
        ]
        if self.interrupted:
            reasons.append("the run was interrupted; a partial run cannot back a submission")
        for res in self.results:
            if res.status == ReqStatus.INCOMPLETE:
                reasons.append(f"MUST {res.id} is incomplete: " + "; ".join(res.reasons))
        for test in self.failed_checks:
            if not self.reqs.backed_by(test.name):
                detail = _detail(test)
                reasons.append(
                    f"check {test.name} {test.status.value}"
                    + (f" ({detail})" if detail else "")
                    + f"; it backs no v{self.version} requirement, so nothing excuses it"
                )
            elif not self._tolerated(test) and not any(
                r.status == ReqStatus.INCOMPLETE and test.name in r.requirement.checks
                for r in self.results
            ):
                reasons.append(f"check {test.name} {test.status.value}")
        return reasons

    def export_skip_reason(self, test: Test) -> str | None:
        """Why a non-passing check behind N/A requirements only is exported as skipped.

        None when the check is exported as it is: passed, behind a MUST, or behind a SHOULD
        that renders Not Implemented (a failed SHOULD check is a failure, never a skip).
        """
        if test.status == Status.PASSED:
            return None
        backed = [self.result(r.id) for r in self.reqs.backed_by(test.name)]
        statuses = {r.status for r in backed if r}
        if statuses != {ReqStatus.NOT_APPLICABLE}:
            return None
        ids = ", ".join(r.id for r in backed if r)
        return f"{test.status.value}: {skip_reason(test)}; {ids} reported N/A"

    @property
    def rows(self) -> list[SummaryRow]:
        """The requirement summary: id, level, status, backing checks with their verdicts."""
        out = []
        for res in self.results:
            checks = [f"{c.name} ({c.verdict})" for c in res.checks]
            out.append(SummaryRow(res.id, res.requirement.level.value, res.status.value, checks))
        return out


def check_not_applicable(reqs: RequirementSet, config: ValidateConfig, source: str) -> list[str]:
    """Refuse N/A declarations the rules do not allow; return warnings for allowed ones."""
    problems: list[Problem] = []
    warnings: list[str] = []
    conditional = [r.id for r in reqs.requirements if r.conditional]
    for req_id, justification in config.cncf.not_applicable.items():
        path = f"{NA_PATH}.{req_id}"
        req = reqs.get(req_id)
        if req is None:
            close = difflib.get_close_matches(req_id, reqs.ids, n=1)
            hint = f"did you mean '{close[0]}'?" if close else "known: " + ", ".join(reqs.ids)
            problems.append(
                Problem(f"v{reqs.version} has no requirement '{req_id}'", source, None, path, hint)
            )
            continue
        if not req.conditional:
            problems.append(
                Problem(
                    f"{req_id} is not conditional, so it cannot be N/A",
                    source,
                    None,
                    path,
                    "only these may be N/A: " + ", ".join(conditional),
                )
            )
        if not justification or not justification.strip():
            problems.append(
                Problem(
                    "N/A needs a written justification of why the requirement's context "
                    "does not apply",
                    source,
                    None,
                    path,
                )
            )
        if req.level == Level.MUST and not reqs.hybrid and req.conditional:
            warnings.append(
                f"{req_id} is a MUST declared N/A. The FAQ allows it with a "
                f"justification for a conditional requirement, but {UPSTREAM_REVISION} "
                f"rejects N/A on a MUST: expect this v{reqs.version} submission to fail "
                f"upstream CI until a reviewer accepts it by hand."
            )
    if problems:
        raise InputError(problems)
    return warnings


def check_recipe_coverage(
    reqs: RequirementSet, planned_checks: list[str], config: ValidateConfig
) -> None:
    """Refuse a submission run whose recipe cannot back every applicable MUST."""
    planned = set(planned_checks)
    problems = []
    for req in reqs.requirements:
        if req.level != Level.MUST or req.id in config.cncf.not_applicable:
            continue
        if not req.checks:
            problems.append(Problem(f"MUST {req.id} has no aicr check backing it", "recipe"))
            continue
        missing = [c for c in req.checks if c not in planned]
        if missing:
            hint = "add it to validation.conformance.checks"
            if req.conditional:
                hint += f", or declare it N/A with a justification in {NA_PATH}"
            problems.append(
                Problem(
                    f"MUST {req.id} needs check(s) {', '.join(missing)}, which the recipe "
                    "does not plan",
                    "recipe",
                    None,
                    "validation.conformance.checks",
                    hint,
                )
            )
    if problems:
        raise InputError(problems)


def aggregate(
    reqs: RequirementSet, report: Report, planned_checks: list[str], config: ValidateConfig
) -> Aggregation:
    """Decide every requirement of ``reqs`` from the checks in ``report``."""
    planned = set(planned_checks)
    not_applicable = config.cncf.not_applicable
    results = []
    for req in reqs.requirements:
        outcomes = [CheckOutcome(c, report.test(c), c in planned) for c in req.checks]
        if req.id in not_applicable and req.conditional:
            results.append(
                RequirementResult(
                    req,
                    ReqStatus.NOT_APPLICABLE,
                    outcomes,
                    justification=not_applicable[req.id].strip(),
                )
            )
            continue
        if outcomes and all(o.passed for o in outcomes):
            status = ReqStatus.IMPLEMENTED
        elif req.level == Level.MUST:
            status = ReqStatus.INCOMPLETE
        else:
            status = ReqStatus.NOT_IMPLEMENTED
        results.append(RequirementResult(req, status, outcomes))
    aicr_extra = (report.extra or {}).get("aicr") or {}
    interrupted = bool(aicr_extra.get("interrupted")) if isinstance(aicr_extra, dict) else False
    return Aggregation(reqs.version, results, list(report.tests), reqs, interrupted)
