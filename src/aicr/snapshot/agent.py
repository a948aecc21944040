"""Node agents: one short-lived pod per node group reads the node's own files.

Each agent runs through the same Job path as a check (run-unique names, its own
ServiceAccount with nothing bound but its result ConfigMap, fail-closed statuses,
progress events, cleanup on every exit). Its pod is not privileged, runs as a
non-root user and drops every capability, and mounts read-only exactly the paths
of ``aicr.snapshot.host_files``. hostPath volumes are refused by the Pod Security
``baseline`` and ``restricted`` levels, so the agents run in a namespace of their
own, created for the run and labelled ``privileged``, and deleted with everything
else when the agents end: no other namespace is relaxed, and not for longer.

An agent that does not pass (unschedulable, image pull, timeout, unreadable file)
leaves its group without those readings, so constraints on them fail closed.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from aicr.catalog import CheckSpec
from aicr.ctrf import Status
from aicr.errors import ClusterError
from aicr.kube.placement import TOLERATE_ALL, Placement, Toleration
from aicr.kube.target import KubeTarget
from aicr.phases import Phase
from aicr.plan import HostPath, PlannedCheck
from aicr.result import CheckResult
from aicr.runner.events import EventSink, discard
from aicr.snapshot import host_files
from aicr.snapshot.groups import NodeGroup, from_snapshot, grouped_subtypes
from aicr.snapshot.model import Measurement, MeasurementType, Reading, Snapshot, Subtype

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

TIMEOUT = timedelta(minutes=2)  # reading three files; the rest is scheduling and image pull
ALL_GROUPS_PATHS = (HostPath(host_files.OS_RELEASE), HostPath(host_files.TOPOLOGY, folder=True))
GPU_GROUP_PATHS = (HostPath(host_files.TOOLKIT_CONFIG),)  # the toolkit lives on GPU nodes


def spec(name: str) -> CheckSpec:
    """The agent's entry, shaped as a catalog check so the Job path can run it."""
    return CheckSpec(
        name=name,
        phase=Phase.DEPLOYMENT,  # unused: agents run before any phase
        description="reads the node's os-release, container toolkit config and NUMA layout",
        timeout=TIMEOUT,
    )


@dataclass(frozen=True)
class AgentRequest:
    """Where and how the agents run (``aicr snapshot``'s agent flags)."""

    kube: KubeTarget
    image: str
    image_pull_secrets: tuple[str, ...] = ()
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: tuple[Toleration, ...] = TOLERATE_ALL
    no_cleanup: bool = False
    name_prefix: str | None = None
    timeout: timedelta = TIMEOUT
    # validate's run id, so one `aicr cleanup --run-id` also removes agents kept by --no-cleanup
    run_id: str | None = None


@dataclass
class AgentOutcome:
    """What the agents found: each group's result, and what cleanup left."""

    results: dict[str, CheckResult] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # group -> why no agent ran
    leftovers: list[str] = field(default_factory=list)
    run_id: str = ""

    @property
    def failures(self) -> list[str]:
        """One line per agent that ran and did not pass (skipped groups are not failures)."""
        return [
            f"{g}: {r.status.value}: {r.message}"
            for g, r in self.results.items()
            if r.status != Status.PASSED
        ]


def _host(
    group: NodeGroup, labels: dict[str, dict[str, str]], selector: dict[str, str]
) -> str | None:
    """The group's first node that matches ``selector``."""
    for node in group.nodes:
        have = labels.get(node, {})
        if all(have.get(k) == v for k, v in selector.items()):
            return node
    return None


def planned(group: NodeGroup, node: str, timeout: timedelta) -> PlannedCheck:
    """The agent of one group, pinned to ``node``, with the paths it may read."""
    paths = ALL_GROUPS_PATHS + (GPU_GROUP_PATHS if group.gpu else ())
    return PlannedCheck(
        spec(host_files.AGENT_PREFIX + group.name), timeout, node=node, host_paths=paths
    )


def run(snapshot: Snapshot, request: AgentRequest, events: EventSink = discard) -> AgentOutcome:
    """Run one agent per node group of ``snapshot`` (a live capture) and collect the results."""
    from aicr.config import EMPTY_CONFIG
    from aicr.kube import names
    from aicr.kube.names import new_run_id
    from aicr.kube.target import api_client
    from aicr.recipe.model import Recipe
    from aicr.runner import manifests
    from aicr.runner.context import RunContext
    from aicr.runner.job import JobExecutor

    labels = {
        sub.subtype.removeprefix("node."): dict(sub.context or {})
        for m in snapshot.measurements
        if m.type == MeasurementType.K8S
        for sub in m.subtypes
        if sub.subtype.startswith("node.")
    }
    outcome = AgentOutcome(run_id=request.run_id or new_run_id(request.name_prefix))
    checks = []
    for group in from_snapshot(snapshot):
        node = _host(group, labels, request.node_selector)
        if node is None:
            outcome.skipped[group.name] = "no node of the group matches --node-selector"
        else:
            checks.append((group.name, planned(group, node, request.timeout)))
    if not checks:
        return outcome
    namespace = names.workload_namespace(outcome.run_id, "node-agent")
    ctx = RunContext(
        run_id=outcome.run_id,
        namespace=namespace,
        recipe=Recipe(),
        recipe_source="aicr snapshot",
        snapshot=None,
        config=EMPTY_CONFIG,
        kube=request.kube,
        image=request.image,
        image_pull_secrets=request.image_pull_secrets,
        orchestrator=Placement(tolerations=request.tolerations),
        no_cleanup=request.no_cleanup,
        events=events,
    )
    executor = JobExecutor()
    try:
        # Created first and labelled privileged; the executor then uses it as it is.
        privileged = manifests.namespace(
            outcome.run_id, namespace, part="agent", pod_security="privileged"
        )
        _create(api_client(request.kube), privileged)
        executor.start(ctx)
        with ThreadPoolExecutor(max_workers=len(checks)) as pool:
            done = pool.map(lambda item: (item[0], executor.run(item[1], ctx)), checks)
            outcome.results = dict(done)
    finally:
        outcome.leftovers = executor.finish(ctx)
    return outcome


def _create(api: ApiClient, namespace: dict[str, Any]) -> None:
    """Create the agents' namespace; a refusal is a ClusterError naming it."""
    from kubernetes.client.exceptions import ApiException

    from aicr.kube.target import describe_api_error
    from aicr.runner import run_kinds

    try:
        run_kinds.create(api, namespace)
    except ApiException as exc:
        name = namespace["metadata"]["name"]
        raise ClusterError(
            f"cannot create the node agents' namespace {name}: {describe_api_error(exc)}"
        ) from None


def merge(snapshot: Snapshot, outcome: AgentOutcome) -> Snapshot:
    """``snapshot`` with every agent's readings, per group where groups differ."""
    groups = [g.name for g in from_snapshot(snapshot)]
    per_group = {
        g: host_files.readings(r) for g, r in outcome.results.items() if r.status == Status.PASSED
    }
    complete = len(per_group) == len(groups)
    keys = sorted({key for found in per_group.values() for key in found})
    by_type: dict[MeasurementType, list[Subtype]] = {}
    for kind, name in keys:
        tables: dict[str, dict[str, Reading]] = {
            g: found.get((kind, name), {}) for g, found in per_group.items()
        }
        by_type.setdefault(kind, []).extend(grouped_subtypes(name, tables, complete=complete))
    measurements = list(snapshot.measurements)
    for kind, subtypes in by_type.items():
        existing = next((i for i, m in enumerate(measurements) if m.type == kind), None)
        if existing is None:
            measurements.append(Measurement(type=kind, subtypes=subtypes))
        else:
            old = measurements[existing]
            measurements[existing] = old.model_copy(update={"subtypes": [*old.subtypes, *subtypes]})
    metadata = dict(snapshot.metadata)
    metadata["source"] = "live capture with node agents"
    missing = outcome.failures + [f"{g}: {why}" for g, why in outcome.skipped.items()]
    if missing:
        metadata["agent-missing"] = "; ".join(missing)
    return snapshot.model_copy(update={"measurements": measurements, "metadata": metadata})


def capture(
    kube: KubeTarget,
    request_timeout: float,
    request: AgentRequest | None,
    events: EventSink = discard,
) -> tuple[Snapshot, AgentOutcome | None]:
    """A live capture from the API, then (unless ``request`` is None) the node agents'."""
    from aicr.snapshot.capture import capture as from_api

    taken = from_api(kube, request_timeout)
    if request is None:
        return taken, None
    outcome = run(taken, request, events)
    return merge(taken, outcome), outcome
