"""Sub-results of a check: one evidence section per step, each with its status and time.

``with ctx.step(title) as step:`` records one step; the body says ``step.passed``,
``step.failed`` or ``step.info`` with the reason. A step that raises is ``other``
(the exception's text is its reason) and the check goes on with its next step; a
step that says nothing is ``other`` too, never a pass. ``conclude`` turns the
judged steps into the check's status and message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from aicr.ctrf import Status
from aicr.result import EvidenceSection, StepStatus

NO_VERDICT = "the step recorded no verdict"


def now_iso() -> str:
    """The current time as ISO 8601 UTC with milliseconds, as evidence timestamps read."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Step:
    """One step being recorded: what it asked, what came back, how it came out."""

    title: str
    asked: str = ""
    answer: str = ""
    status: StepStatus | None = None
    reason: str = ""
    started: str = field(default_factory=now_iso)

    def _end(self, status: StepStatus, reason: str) -> None:
        self.status, self.reason = status, reason

    def passed(self, reason: str) -> None:
        """The step showed what it set out to show."""
        self._end(StepStatus.PASSED, reason)

    def failed(self, reason: str) -> None:
        """The step found something wrong; ``reason`` says what."""
        self._end(StepStatus.FAILED, reason)

    def info(self, reason: str) -> None:
        """The step only looked (what it saw feeds later steps); it judges nothing."""
        self._end(StepStatus.INFO, reason)

    def other(self, reason: str) -> None:
        """The step could not find out."""
        self._end(StepStatus.OTHER, reason)

    def section(self) -> EvidenceSection:
        """The evidence section this step becomes."""
        status, reason = self.status, self.reason
        if status is None:
            status, reason = StepStatus.OTHER, NO_VERDICT
        return EvidenceSection(
            title=self.title,
            asked=self.asked,
            answer=self.answer,
            verdict=reason,
            status=status,
            timestamp=self.started,
        )


def conclude(
    sections: list[EvidenceSection], noun: str, passed: str | None = None
) -> tuple[Status, str]:
    """The check's status and message from its judged steps (informational ones aside).

    Any failed step fails the check and every failed or unjudged step is named
    ("2/5 probes failed: a: ... | b: ..."); only unjudged ones make it ``other``;
    no judged step at all fails: nothing passes vacuously.
    """
    judged = [
        s for s in sections if s.status in (StepStatus.PASSED, StepStatus.FAILED, StepStatus.OTHER)
    ]
    if not judged:
        return Status.FAILED, f"no {noun} were judged"
    bad = [s for s in judged if s.status != StepStatus.PASSED]
    if not bad:
        return Status.PASSED, passed or f"{len(judged)}/{len(judged)} {noun} passed"
    named = " | ".join(f"{s.title}: {s.verdict}" for s in bad)
    if any(s.status == StepStatus.FAILED for s in bad):
        return Status.FAILED, f"{len(bad)}/{len(judged)} {noun} failed: {named}"
    return Status.OTHER, f"{len(bad)}/{len(judged)} {noun} could not be judged: {named}"
