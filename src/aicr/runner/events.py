"""Progress events the orchestrator emits, for the live view, plain lines or JSON logs."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from aicr.result import CheckResult


class EventKind(StrEnum):
    """What happened."""

    PHASE_STARTED = "phase-started"
    PHASE_FINISHED = "phase-finished"
    CHECK_STARTED = "check-started"
    CHECK_UPDATE = "check-update"  # e.g. scheduled on a node, pulling image
    CHECK_FINISHED = "check-finished"
    MESSAGE = "message"


@dataclass(frozen=True)
class Event:
    """One progress event."""

    kind: EventKind
    phase: str | None = None
    check: str | None = None
    message: str = ""
    node: str | None = None
    result: CheckResult | None = None
    at: float = field(default_factory=time.time)


EventSink = Callable[[Event], None]


def discard(_: Event) -> None:
    """An event sink that ignores everything (library use, tests)."""
