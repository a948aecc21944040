"""Fakes for the Executor protocol, modelling the real one's behaviour for unit tests."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from aicr.ctrf import Status
from aicr.plan import PlannedCheck
from aicr.result import CheckResult, Detail, EvidenceSection, ImageRun
from aicr.runner.context import RunContext
from aicr.runner.gpu_pool import GpuPool, InventoryReader


@dataclass
class FakeExecutor:
    """Returns scripted results; records overlap so tests can prove locking and parallelism.

    ``results`` maps a check name to (status, message); unlisted checks pass. ``durations``
    makes a check take time; ``stop()`` ends running checks as interrupted, like the real one.
    """

    results: dict[str, tuple[Status, str]] = field(default_factory=dict)
    durations: dict[str, float] = field(default_factory=dict)
    raises: set[str] = field(default_factory=set)
    gpu_reader: InventoryReader | None = None  # None: the GPU checks go one at a time
    started: list[str] = field(default_factory=list)
    max_running: int = 0
    overlaps: list[tuple[str, str]] = field(default_factory=list)
    spans: dict[str, tuple[float, float]] = field(default_factory=dict)  # name -> (start, end)
    finished_cleanup: bool = False
    node_objects: list[dict[str, object]] = field(default_factory=list)  # what nodes() lists
    images: dict[str, list[ImageRun]] = field(default_factory=dict)  # what each check's pods ran
    _running: dict[str, PlannedCheck] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stop: threading.Event = field(default_factory=threading.Event)

    def start(self, ctx: RunContext) -> None:
        pass

    def nodes(self, ctx: RunContext) -> list[dict[str, object]]:
        return self.node_objects

    def gpu_pool(self, ctx: RunContext) -> GpuPool:
        return GpuPool(ctx.run_id, reader=self.gpu_reader)

    def run(self, check: PlannedCheck, ctx: RunContext) -> CheckResult:
        began = time.monotonic()
        with self._lock:
            self.started.append(check.name)
            for other in self._running.values():
                self.overlaps.append((other.name, check.name))
            self._running[check.name] = check
            self.max_running = max(self.max_running, len(self._running))
        try:
            if check.name in self.raises:
                raise RuntimeError("boom")
            # Like the Job executor, a running check ends itself on the run's cancel flag.
            deadline = time.monotonic() + self.durations.get(check.name, 0.0)
            while time.monotonic() < deadline:
                if self._stop.is_set() or ctx.cancel.is_set():
                    return CheckResult.ended(
                        check, Status.OTHER, "stopped while running", Detail.INTERRUPTED
                    )
                time.sleep(0.005)
            status, message = self.results.get(check.name, (Status.PASSED, "ok"))
            # a real check records what it asked of the cluster and what came back
            seen = EvidenceSection(title="probe", asked=f"{check.name} probe", answer=message)
            return CheckResult.ended(
                check, status, message, evidence=[seen], images=self.images.get(check.name, [])
            )
        finally:
            with self._lock:
                self._running.pop(check.name, None)
                self.spans[check.name] = (began, time.monotonic())

    def stop(self) -> None:
        self._stop.set()

    def finish(self, ctx: RunContext) -> list[str]:
        self.finished_cleanup = True
        return []


def wait_until(predicate: object, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(predicate) and predicate():
            return
        time.sleep(0.01)
    raise AssertionError("condition not met in time")
