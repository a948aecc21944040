"""Executors run planned checks; the orchestrator decides order, overlap and stop rules.

``JobExecutor`` runs each check as a Kubernetes Job; ``LocalExecutor`` runs the
same check code as a subprocess with the check's own ServiceAccount token.
Both satisfy the ``Executor`` protocol and produce identical results.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from aicr.config import ValidateConfig
from aicr.k8s import KubeTarget
from aicr.plan import PlannedCheck
from aicr.recipe.model import Recipe
from aicr.result import CheckResult
from aicr.runner.events import EventSink, discard
from aicr.snapshot.model import Snapshot

if TYPE_CHECKING:
    from aicr.runner.gpu_pool import GpuPool


@dataclass(frozen=True)
class Toleration:
    """A pod toleration as given by ``--toleration key=value:effect`` or ``key:effect``."""

    key: str
    effect: str | None
    value: str | None = None
    operator: str = "Equal"

    def as_dict(self) -> dict[str, str]:
        """The Kubernetes form of the toleration."""
        out = {"key": self.key, "operator": self.operator}
        if self.value is not None:
            out["value"] = self.value
        if self.effect:
            out["effect"] = self.effect
        return out


TOLERATE_ALL = (Toleration(key="", effect=None, operator="Exists"),)


@dataclass(frozen=True)
class Placement:
    """Where pods go: a node selector and tolerations."""

    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: tuple[Toleration, ...] = ()


@dataclass(frozen=True)
class RunContext:
    """Everything a run's executor needs, fixed for the whole run."""

    run_id: str
    namespace: str
    recipe: Recipe
    recipe_source: str
    snapshot: Snapshot | None
    config: ValidateConfig
    kube: KubeTarget
    image: str
    image_pull_secrets: tuple[str, ...] = ()
    # check pods: tolerate every taint unless --orchestrator-* flags say otherwise
    orchestrator: Placement = field(default_factory=lambda: Placement(tolerations=TOLERATE_ALL))
    # workloads the checks create (GPU test pods): --node-selector / --toleration
    workloads: Placement = field(default_factory=Placement)
    no_cleanup: bool = False
    data_dir: str | None = None
    # per-check facts resolved before any cluster work (``aicr.checks.preflight``)
    check_inputs: dict[str, Any] = field(default_factory=dict, compare=False)
    # check name -> the Pod Security level its params need in its workload namespace
    workload_pod_security: dict[str, str] = field(default_factory=dict, compare=False)
    events: EventSink = field(default=discard, compare=False)
    cancel: threading.Event = field(default_factory=threading.Event, compare=False)


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
