"""Runs a plan through an executor: phase order, overlap limits, stop rules, interruption.

Checks of one phase start in recipe order as long as fewer than ``parallel``
run; a check that declares GPUs starts only once its reservation fits
(aicr.runner.gpu_pool). GPU checks start in plan order: the first one that does
not fit holds back every later GPU check until it has started, so a small later
check never starves a big earlier one (checks without GPUs still start). Results
are reported in plan order whatever the completion order, so a parallel run's
report equals a serial one's. A phase with a failed or ``other`` check stops the
later phases.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from aicr.ctrf import Status
from aicr.plan import Plan, PlannedCheck
from aicr.result import CheckResult, Detail
from aicr.runner.events import Event, EventKind, EventSink, discard

if TYPE_CHECKING:
    from concurrent.futures import Future

    # annotations only: a no-cluster run reads PlanResults and never loads the executors,
    # the run context or the GPU pool (the import-set test lists them)
    from aicr.runner.context import RunContext
    from aicr.runner.executor import Executor
    from aicr.runner.gpu_pool import GpuPool

POLL_SECONDS = 0.2  # how often the loop looks at the cancel flag and the run deadline


class StopReason(StrEnum):
    """Why a run ended early."""

    INTERRUPTED = "interrupted"
    TIMEOUT = "timeout"


@dataclass
class PlanResults:
    """Every planned check's result, in plan order, and why the run stopped early if it did."""

    results: list[tuple[PlannedCheck, CheckResult]] = field(default_factory=list)
    stopped: StopReason | None = None


def _failing(result: CheckResult) -> bool:
    return result.status in (Status.FAILED, Status.OTHER)


class _PhaseRun:
    """The scheduling loop of one phase."""

    def __init__(
        self,
        executor: Executor,
        ctx: RunContext,
        parallel: int,
        events: EventSink,
        deadline: float | None,
        stop_message: str,
        gpus: GpuPool,
    ) -> None:
        self.executor, self.ctx, self.parallel = executor, ctx, max(1, parallel)
        self.events, self.deadline, self.stop_message = events, deadline, stop_message
        self.gpus = gpus
        self.stopped: StopReason | None = None
        self.waiting: dict[str, str] = {}  # check -> why it has not started yet (GPUs)

    def _stop(self, reason: StopReason) -> None:
        if self.stopped is None:
            self.stopped = reason
            self.ctx.cancel.set()
            self.executor.stop()

    def _run_one(self, check: PlannedCheck) -> CheckResult:
        self.events(Event(EventKind.CHECK_STARTED, check.phase.value, check.name))
        try:
            return self.executor.run(check, self.ctx)
        except Exception as exc:  # an executor bug must still end as a fail-closed result
            return CheckResult.ended(
                check,
                Status.OTHER,
                f"executor error: {type(exc).__name__}: {exc}",
                Detail.INTERNAL,
            )
        finally:
            if check.gpus is not None:
                self.gpus.release(check)

    def _unstarted(self, check: PlannedCheck) -> CheckResult:
        detail = Detail.TIMEOUT if self.stopped == StopReason.TIMEOUT else Detail.INTERRUPTED
        why = self.waiting.get(check.name)
        message = f"not started: {self.stop_message}" + (f" ({why})" if why else "")
        return CheckResult.ended(check, Status.OTHER, message, detail)

    def _may_start(self, check: PlannedCheck, done: dict[str, CheckResult]) -> bool:
        """Reserve ``check``'s GPUs; False while it waits (said once per reason)."""
        decision = self.gpus.try_reserve(check)
        if decision.refused is not None:
            result = CheckResult.ended(
                check, Status.OTHER, decision.refused, Detail.API_UNREACHABLE
            )
            done[check.name] = result
            self.events(
                Event(
                    EventKind.CHECK_FINISHED,
                    check.phase.value,
                    check.name,
                    result.message,
                    None,
                    result,
                )
            )
            return False
        if decision.holding is None:
            if self.waiting.get(check.name) != decision.waiting:
                self.waiting[check.name] = decision.waiting
                self.events(
                    Event(EventKind.CHECK_UPDATE, check.phase.value, check.name, decision.waiting)
                )
            return False
        self.waiting.pop(check.name, None)
        self.events(
            Event(
                EventKind.CHECK_UPDATE,
                check.phase.value,
                check.name,
                f"reserved {decision.holding}",
            )
        )
        return True

    def run(self, checks: list[PlannedCheck]) -> dict[str, CheckResult]:
        # here, not at the top: a no-cluster run reads PlanResults and runs no check, and
        # concurrent.futures brings logging with it
        from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

        done: dict[str, CheckResult] = {}
        pending = [c for c in checks if c.skip_reason is None]
        for check in checks:
            if check.skip_reason is not None:
                done[check.name] = CheckResult.ended(
                    check, Status.SKIPPED, check.skip_reason, Detail.SKIP_FLAG
                )
        running: dict[Future[CheckResult], PlannedCheck] = {}
        with ThreadPoolExecutor(max_workers=self.parallel, thread_name_prefix="check") as pool:
            while pending or running:
                if self.ctx.cancel.is_set():
                    self._stop(self.stopped or StopReason.INTERRUPTED)
                if self.deadline is not None and time.monotonic() >= self.deadline:
                    self._stop(StopReason.TIMEOUT)
                if self.stopped:
                    for check in pending:
                        done[check.name] = self._unstarted(check)
                    pending = []
                gpu_blocked = False  # an earlier GPU check waits: later ones keep behind it
                for check in list(pending):
                    if len(running) >= self.parallel:
                        break
                    if check.gpus is not None and (gpu_blocked or not self._may_start(check, done)):
                        gpu_blocked = True
                        if check.name in done:  # refused: it ended without starting
                            pending.remove(check)
                        continue
                    pending.remove(check)
                    running[pool.submit(self._run_one, check)] = check
                if not running:
                    if pending:
                        self.ctx.cancel.wait(POLL_SECONDS)  # every pending check waits for GPUs
                    continue
                finished, _ = wait(running, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
                for future in finished:
                    check = running.pop(future)
                    result = self._timed_out(future.result())
                    done[check.name] = result
                    self.events(
                        Event(
                            EventKind.CHECK_FINISHED,
                            check.phase.value,
                            check.name,
                            result.message,
                            result.node,
                            result,
                        )
                    )
        if self.ctx.cancel.is_set() and self.stopped is None:
            # The executor saw the signal first and ended the last running check itself.
            self.stopped = StopReason.INTERRUPTED
        return done

    def _timed_out(self, result: CheckResult) -> CheckResult:
        """A check cut short by the run's deadline says so, rather than 'interrupted'."""
        if self.stopped == StopReason.TIMEOUT and result.detail == Detail.INTERRUPTED:
            return result.model_copy(
                update={
                    "detail": Detail.TIMEOUT,
                    "message": f"{self.stop_message}: {result.message}",
                }
            )
        return result


def run_plan(
    plan: Plan,
    executor: Executor,
    ctx: RunContext,
    *,
    parallel: int,
    events: EventSink = discard,
    deadline: float | None = None,
    timeout_text: str = "",
    gpus: GpuPool | None = None,
) -> PlanResults:
    """Run every phase of ``plan``; results come back in plan order.

    ``gpus`` holds the run's GPU reservations; without one, GPU checks run one at a time.
    """
    from aicr.runner.gpu_pool import GpuPool

    pool = gpus or GpuPool(ctx.run_id)
    try:
        return _run_phases(plan, executor, ctx, parallel, events, deadline, timeout_text, pool)
    finally:
        pool.close()


def _run_phases(
    plan: Plan,
    executor: Executor,
    ctx: RunContext,
    parallel: int,
    events: EventSink,
    deadline: float | None,
    timeout_text: str,
    gpus: GpuPool,
) -> PlanResults:
    out = PlanResults()
    failed_phase: str | None = None
    stop_message = (
        f"the run's --timeout {timeout_text} expired" if timeout_text else "the run was stopped"
    )
    for phase_plan in plan.phases:
        phase = phase_plan.phase.value
        if out.stopped is None and ctx.cancel.is_set():
            out.stopped = StopReason.INTERRUPTED
        if failed_phase is not None or out.stopped is not None:
            for check in phase_plan.checks:
                if out.stopped is not None:
                    detail = (
                        Detail.TIMEOUT if out.stopped == StopReason.TIMEOUT else Detail.INTERRUPTED
                    )
                    result = CheckResult.ended(
                        check, Status.OTHER, f"not started: {stop_message}", detail
                    )
                else:
                    result = CheckResult.ended(
                        check,
                        Status.SKIPPED,
                        f"not run: the {failed_phase} phase had failing checks",
                        Detail.PHASE_STOPPED,
                    )
                out.results.append((check, result))
            continue
        events(Event(EventKind.PHASE_STARTED, phase))
        phase_run = _PhaseRun(executor, ctx, parallel, events, deadline, stop_message, gpus)
        done = phase_run.run(phase_plan.checks)
        out.results.extend((c, done[c.name]) for c in phase_plan.checks)
        out.stopped = phase_run.stopped
        if any(_failing(done[c.name]) for c in phase_plan.checks):
            failed_phase = phase
        events(Event(EventKind.PHASE_FINISHED, phase))
    return out
