"""The ``Executor`` protocol: what every executor does, in order of use."""

from __future__ import annotations

from typing import Any, Protocol

from aicr.plan import PlannedCheck
from aicr.result import CheckResult
from aicr.runner.context import RunContext
from aicr.runner.gpu_pool import GpuPool


class Executor(Protocol):
    """Runs planned checks somewhere and reports each one's result. Lifecycle in order of use."""

    def start(self, ctx: RunContext) -> None:
        """Create what the whole run shares (namespace, input ConfigMaps)."""

    def nodes(self, ctx: RunContext) -> list[dict[str, Any]]:
        """The cluster's Node objects (after ``start``), from which the trust class is told."""

    def gpu_pool(self, ctx: RunContext) -> GpuPool:
        """Where the run reserves GPUs before each GPU check starts (after ``start``)."""

    def run(self, check: PlannedCheck, ctx: RunContext) -> CheckResult:
        """Run one check to the end and return its result; never raises for check failures."""

    def stop(self) -> None:
        """Ask running checks to stop (interrupt or run timeout); ``run`` then returns soon."""

    def finish(self, ctx: RunContext) -> list[str]:
        """Remove everything the run created (unless --no-cleanup); return what remains."""
