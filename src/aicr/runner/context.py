"""Everything a run's executor needs, fixed for the whole run."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from aicr.config import ValidateConfig
from aicr.kube.placement import TOLERATE_ALL, Placement
from aicr.kube.target import KubeTarget
from aicr.recipe.model import Recipe
from aicr.runner.events import EventSink, discard
from aicr.snapshot.model import Snapshot


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
