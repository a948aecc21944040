"""The resolved run plan of one ``aicr validate``: inputs checked, every choice made once.

``resolve_run`` reads the recipe, snapshot and config, builds the phase plan with each
check's effective params, and decides the validator image, the placement of check pods
and of the workloads they create, and the CNCF version with its requirement set. The
executor (through ``RunContext``), the report and submission writers and the CNCF layer
read these from the ``ResolvedRun`` and resolve nothing again. Bad input raises InputError
(exit 2) with nothing created in the cluster.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aicr import defaults, flags, gate
from aicr.catalog import load_catalog
from aicr.checks import workload_images
from aicr.config import EMPTY_CONFIG, ValidateConfig
from aicr.document import validate
from aicr.errors import FlagConflictError, InputError, Problem, SchemaError
from aicr.kube import names
from aicr.kube.placement import TOLERATE_ALL, Placement, Toleration
from aicr.kube.target import KubeTarget
from aicr.limits import Kind
from aicr.phases import Phase
from aicr.plan import Plan, build, resolve_phases
from aicr.recipe.load import parse_recipe_with_lines
from aicr.recipe.model import Recipe
from aicr.snapshot.load import parse_snapshot
from aicr.snapshot.model import Snapshot, require_gpu
from aicr.sources import read
from aicr.yaml_io import parse

if TYPE_CHECKING:
    from aicr.attestation.statement import Input
    from aicr.catalog.params import CheckParams
    from aicr.cncf import Conformance
    from aicr.snapshot.aks import Pool


@dataclass(frozen=True)
class ValidateRequest:
    """Everything the user asked for, already parsed and checked for conflicts."""

    recipe: str
    snapshot: str | None = None
    config: str | None = None
    phases: tuple[str, ...] = ("all",)
    skip_checks: tuple[str, ...] = ()
    no_cluster: bool = False
    fail_on_error: bool = True
    kube: KubeTarget = field(default_factory=KubeTarget)
    namespace: str = defaults.NAMESPACE
    image: str | None = None
    image_pull_secrets: tuple[str, ...] = ()
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: tuple[Toleration, ...] = ()
    orchestrator_node_selector: dict[str, str] | None = None
    orchestrator_tolerations: tuple[Toleration, ...] | None = None
    no_cleanup: bool = False
    parallel: int = defaults.PARALLEL
    executor: str = defaults.EXECUTOR
    timeout: timedelta | None = None
    timeout_text: str = ""
    dry_run: bool = False
    cncf_submission: bool = False
    evidence_dir: str | None = None
    cncf_version: str | None = None
    force: bool = False
    data_dir: str | None = None
    name_prefix: str | None = None
    require_gpu: bool = False
    emit_attestation: bool = False  # record what an attestation needs (the CLI signs it)
    aks_gpu_pools: str | None = None  # `az aks nodepool list -o json` output
    snapshot_out: str | None = None  # where the CLI writes the snapshot the gate saw

    def __post_init__(self) -> None:
        """Refuse flag combinations that cannot mean anything (exit 2)."""
        problems: list[Problem] = []
        if self.cncf_submission != bool(self.evidence_dir):
            problems.append(Problem("--cncf-submission and --evidence-dir require each other"))
        if self.cncf_submission and self.skip_checks:
            problems.append(
                Problem(
                    "--skip-check cannot be used with --cncf-submission",
                    hint="a submission must run every check the recipe plans",
                )
            )
        if self.cncf_submission and self.no_cluster:
            problems.append(Problem("--no-cluster cannot be used with --cncf-submission"))
        if self.dry_run and self.cncf_submission:
            problems.append(Problem("--dry-run cannot be used with --cncf-submission"))
        if self.snapshot_out and (self.dry_run or (self.no_cluster and not self.snapshot)):
            mode = "--dry-run" if self.dry_run else "--no-cluster without -s"
            problems.append(Problem(f"--snapshot-out with {mode}: no snapshot is captured to keep"))
        if self.dry_run and self.emit_attestation:
            problems.append(
                Problem("--dry-run cannot be used with --emit-attestation", hint="nothing runs")
            )
        if self.parallel < 1:
            problems.append(Problem(f"--parallel must be at least 1, got {self.parallel}"))
        if self.executor not in ("job", "local"):
            problems.append(Problem(f"--executor must be job or local, got {self.executor}"))
        if self.name_prefix is not None and not names.is_name_prefix(self.name_prefix):
            problems.append(
                Problem(
                    f"--job-name '{self.name_prefix}': invalid name prefix",
                    hint=f"expected lowercase letters, digits and '-', at most "
                    f"{names.NAME_PREFIX_MAX} characters; it starts every object name of the run",
                )
            )
        if self.require_gpu and not self.snapshot and (self.no_cluster or self.dry_run):
            mode = "--no-cluster" if self.no_cluster else "--dry-run"
            problems.append(
                Problem(
                    f"--require-gpu with {mode} needs a snapshot to look for a GPU in",
                    hint="give -s FILE",
                )
            )
        if self.image and is_aicr_agent_image(self.image):
            problems.append(
                Problem(
                    f"--image {self.image}: this is AICR's snapshot agent, which cannot run "
                    "aicr's checks",
                    hint="drop --image to use the check image of this version",
                )
            )
        checked = (
            flags.namespace_problem(self.namespace, "--namespace"),
            flags.image_problem(self.image, "--image") if self.image is not None else None,
        )
        problems += [p for p in checked if p is not None]
        if problems:
            raise FlagConflictError(problems)


def is_aicr_agent_image(ref: str) -> bool:
    """True for NVIDIA's Go AICR image (AICR's --image default), on any registry or mirror."""
    name = ref.split("@", 1)[0]
    if ":" in name.rsplit("/", 1)[-1]:
        name = name.rsplit(":", 1)[0]
    repository = defaults.AICR_AGENT_REPOSITORY
    return name == repository or name.endswith("/" + repository)


@dataclass(frozen=True)
class ResolvedRun:
    """One run's inputs, loaded and checked, and every choice made from them, once."""

    recipe: Recipe
    snapshot: Snapshot | None  # the given one; a live capture replaces it (``with_snapshot``)
    config: ValidateConfig  # the run's mirror pinned in (check pods do not see our environment)
    plan: Plan  # each planned check with its effective params
    warnings: list[str]
    image: str  # the validator image: check pods and node agents
    orchestrator: Placement  # where check pods and node agents run
    workloads: Placement  # where the workloads checks create run
    # The CNCF version and requirement set; None when not wanted, not resolvable (then
    # ``no_conformance`` says why) or waiting for the live snapshot (``with_snapshot``).
    conformance: Conformance | None = None
    no_conformance: str | None = None
    prepared: dict[str, Any] = field(default_factory=dict)  # check name -> preflight facts
    texts: dict[str, Input] = field(default_factory=dict)  # recipe/snapshot/config digests
    pools: list[Pool] | None = None  # --aks-gpu-pools, projected into every snapshot
    # A submission's vendor data and N/A declarations, checked here: their warnings (also
    # in ``warnings``), which the writer takes as checked.
    submission_checked: tuple[str, ...] = ()

    @property
    def params(self) -> dict[str, CheckParams]:
        """Check name -> effective params, for every check that runs."""
        return {c.name: c.params for c in self.plan.checks if c.params is not None}

    @property
    def pod_security(self) -> dict[str, str]:
        """Check name -> the Pod Security level its params need in its workload namespace."""
        return {
            name: level
            for name, params in self.params.items()
            if (level := params.workload_pod_security()) is not None
        }


def resolve_image(request: ValidateRequest, config: ValidateConfig) -> str:
    """--image wins; else the catalog image pinned to our version, on the run's mirror."""
    if request.image:
        return request.image
    return workload_images.on_registry(load_catalog().image_ref, workload_images.registry(config))


def _placements(request: ValidateRequest) -> tuple[Placement, Placement]:
    """Check pods (tolerate every taint unless --orchestrator-* say otherwise), workloads."""
    orchestrator = Placement(
        node_selector=request.orchestrator_node_selector or {},
        tolerations=(
            request.orchestrator_tolerations
            if request.orchestrator_tolerations is not None
            else TOLERATE_ALL
        ),
    )
    return orchestrator, Placement(request.node_selector, request.tolerations)


def _waits_for_capture(request: ValidateRequest, config: ValidateConfig) -> bool:
    """True when the CNCF version can only come from the snapshot a live run captures.

    A submission never waits: its version comes from flag or config, or it is refused.
    """
    live = request.snapshot is None and not request.no_cluster and not request.dry_run
    chosen = request.cncf_submission or request.cncf_version or config.cncf.version
    return live and not chosen


def _conformance(
    request: ValidateRequest, config: ValidateConfig, snapshot: Snapshot | None, plan: Plan
) -> tuple[Conformance | None, str | None]:
    """The run's CNCF version and requirement set, resolved once; else None and why not.

    A submission must have one: any error is exit 2. A bad --cncf-version is refused
    up front, submission or not. Otherwise the version only labels the requirement
    summary of a conformance phase, and one that cannot be told is a warning.
    """
    from aicr import cncf

    if request.cncf_submission:
        return cncf.resolve_conformance(
            snapshot, request.cncf_version, config, match_cluster=True
        ), None
    if request.cncf_version:
        # The flag wins over config and snapshot, so this cannot fail for another reason.
        return cncf.resolve_conformance(snapshot, request.cncf_version, config), None
    if request.dry_run or Phase.CONFORMANCE not in {p.phase for p in plan.phases}:
        return None, None
    try:
        return cncf.resolve_conformance(snapshot, None, config), None
    except InputError as exc:
        return None, str(exc)


def with_snapshot(run: ResolvedRun, request: ValidateRequest, snapshot: Snapshot) -> ResolvedRun:
    """The run with its live snapshot; the CNCF version is resolved now if it waited for it.

    A submission's version (known up front) must be the captured cluster's minor.
    """
    run = replace(run, snapshot=snapshot)
    if run.conformance is not None:
        if request.cncf_submission:
            run.conformance.check_cluster(snapshot)
        return run
    if _waits_for_capture(request, run.config):
        conformance, why = _conformance(request, run.config, snapshot, run.plan)
        return replace(run, conformance=conformance, no_conformance=why)
    return run


def resolve_run(request: ValidateRequest) -> ResolvedRun:
    """Load and check every input and make every choice; InputError (exit 2) before the cluster."""
    from aicr.attestation.statement import Input, sha256_text

    texts: dict[str, Input] = {}

    def text_of(role: str, ref: str, kind: Kind) -> str:
        text = read(ref, request.kube, kind=kind)
        return record(role, ref, text)

    def record(role: str, ref: str, text: str) -> str:
        texts[role] = Input(ref, sha256_text(text))
        return text

    config, config_lines = EMPTY_CONFIG, None
    if request.config:
        config_lines = parse(text_of("config", request.config, Kind.CONFIG), request.config)
        config = validate(ValidateConfig, config_lines)
    config = workload_images.pin_registry(config)
    warnings: list[str] = []
    checked: list[str] = []
    if request.cncf_submission:
        from aicr import cncf

        checked += cncf.check_vendor(config, request.config or "--config")
        warnings += checked
    recipe_text = text_of("recipe", request.recipe, Kind.RECIPE)
    recipe, loaded = parse_recipe_with_lines(recipe_text, request.recipe)
    gate.check_paths(recipe, request.recipe)
    pools = None
    if request.aks_gpu_pools:
        from aicr.snapshot import aks

        ref = request.aks_gpu_pools
        pools = aks.parse_pools(record("aks-gpu-pools", ref, aks.read_pools(ref)), ref)
    snapshot = None
    if request.snapshot:
        snapshot_text = text_of("snapshot", request.snapshot, Kind.SNAPSHOT)
        snapshot = parse_snapshot(snapshot_text, request.snapshot)
        if pools is not None:
            snapshot = aks.project(snapshot, pools)
    if snapshot is not None and request.require_gpu:
        require_gpu(snapshot, request.snapshot or "")
    plan = build(
        recipe,
        load_catalog(),
        phases=resolve_phases(request.phases),
        skip_checks=request.skip_checks,
        config=config,
        source=request.recipe,
        line_of=loaded.line_of,
        config_lines=config_lines,
    )
    warnings += plan.warnings
    conformance, no_conformance = None, None
    if not _waits_for_capture(request, config):
        conformance, no_conformance = _conformance(request, config, snapshot, plan)
    if request.cncf_submission:
        from aicr import cncf

        assert conformance is not None  # a submission's version is known or refused by now
        reqs = conformance.requirements
        na = cncf.check_not_applicable(reqs, config, request.config or "--config")
        checked += na
        warnings += na
        cncf.check_recipe_coverage(reqs, plan.check_names, config)
        cncf.check_output_dir(Path(request.evidence_dir or ""), request.force)
    if plan.param_problems:
        raise SchemaError(plan.param_problems)
    from aicr.catalog.params import preflight

    prepared = {
        c.name: out
        for c in plan.checks
        if c.skip_reason is None
        and (out := preflight(c.name, recipe, request.data_dir, request.recipe)) is not None
    }
    orchestrator, workloads = _placements(request)
    return ResolvedRun(
        recipe,
        snapshot,
        config,
        plan,
        warnings,
        resolve_image(request, config),
        orchestrator,
        workloads,
        conformance,
        no_conformance,
        prepared,
        texts,
        pools,
        tuple(checked),
    )
