"""One ``aicr validate`` run: inputs -> gate -> plan -> execution -> report -> exit code.

Every input is loaded and checked before anything touches the cluster, so bad
input exits 2 with nothing created. Nightly runs and CNCF submissions run the
identical path; ``--cncf-submission`` only adds the evidence at the end.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aicr import __version__, ctrf, defaults, flags, gate, trust
from aicr.catalog import load_catalog
from aicr.checks import workload_images
from aicr.config import EMPTY_CONFIG, ValidateConfig
from aicr.ctrf import Report, Status
from aicr.document import validate
from aicr.errors import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_VALIDATION_FAILED,
    FlagConflictError,
    Problem,
    SchemaError,
)
from aicr.kube import names
from aicr.kube.placement import TOLERATE_ALL, Placement, Toleration
from aicr.kube.target import KubeTarget
from aicr.limits import Kind
from aicr.phases import Phase
from aicr.plan import Plan, build, resolve_phases
from aicr.recipe.load import parse_recipe_with_lines
from aicr.recipe.model import Recipe
from aicr.result import CheckResult, Detail, to_test
from aicr.runner.context import RunContext
from aicr.runner.events import EventSink, discard
from aicr.runner.executor import Executor
from aicr.runner.orchestrate import PlanResults, StopReason, run_plan
from aicr.snapshot.load import parse_snapshot
from aicr.snapshot.model import Snapshot, require_gpu
from aicr.sources import read
from aicr.trust import LIVE_SNAPSHOT
from aicr.yaml_io import parse

if TYPE_CHECKING:
    from aicr.attestation.statement import Input, RunRecord
    from aicr.cncf import Aggregation
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


@dataclass
class Outcome:
    """What a run produced; the CLI renders it and exits with ``exit_code``."""

    report: Report
    exit_code: int
    plan: Plan | None = None
    gate: gate.GateOutcome | None = None
    warnings: list[str] = field(default_factory=list)
    aggregation: Aggregation | None = None
    submission_path: Path | None = None
    no_submission: str | None = None  # why --cncf-submission wrote nothing
    manifests: list[dict[str, Any]] | None = None
    leftovers: list[str] = field(default_factory=list)
    snapshot: Snapshot | None = None  # the one the gate saw (given or captured)
    record: RunRecord | None = None  # what an attestation of this run records


@dataclass(frozen=True)
class Inputs:
    """The loaded, checked inputs of a run."""

    recipe: Recipe
    snapshot: Snapshot | None
    config: ValidateConfig
    plan: Plan
    warnings: list[str]
    prepared: dict[str, Any] = field(default_factory=dict)  # check name -> preflight facts
    texts: dict[str, Input] = field(default_factory=dict)  # recipe/snapshot/config digests
    pools: list[Pool] | None = None  # --aks-gpu-pools, projected into every snapshot
    pod_security: dict[str, str] = field(default_factory=dict)  # check name -> workload level


def now_ms() -> int:
    """Wall-clock milliseconds, as CTRF wants."""
    return int(time.time() * 1000)


def is_aicr_agent_image(ref: str) -> bool:
    """True for NVIDIA's Go AICR image (AICR's --image default), on any registry or mirror."""
    name = ref.split("@", 1)[0]
    if ":" in name.rsplit("/", 1)[-1]:
        name = name.rsplit(":", 1)[0]
    repository = defaults.AICR_AGENT_REPOSITORY
    return name == repository or name.endswith("/" + repository)


def resolve_image(request: ValidateRequest, config: ValidateConfig) -> str:
    """--image wins; else the catalog image pinned to our version, on the run's mirror."""
    if request.image:
        return request.image
    return workload_images.on_registry(load_catalog().image_ref, workload_images.registry(config))


def load_inputs(request: ValidateRequest) -> Inputs:
    """Load and check every input; raises InputError (exit 2) before any cluster work."""
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
    if request.cncf_submission:
        from aicr import cncf

        warnings += cncf.check_vendor(config, request.config or "--config")
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
    if request.cncf_version:
        from aicr import cncf

        # A version we hold no data for is refused up front, submission or not.
        cncf.resolve_version(None, request.cncf_version, EMPTY_CONFIG)
    if request.cncf_submission:
        from aicr import cncf

        version = cncf.resolve_version(snapshot, request.cncf_version, config, match_cluster=True)
        reqs = cncf.load_requirements(version)
        warnings += cncf.check_not_applicable(reqs, config, request.config or "--config")
        cncf.check_recipe_coverage(reqs, plan.check_names, config)
        cncf.check_output_dir(Path(request.evidence_dir or ""), request.force)
    from aicr.catalog.params import check_params, preflight

    problems: list[Problem] = []
    pod_security: dict[str, str] = {}
    for c in plan.checks:
        if c.skip_reason is None:
            try:
                params = check_params(c.name, config.check(c.name).params, config_lines)
            except SchemaError as exc:
                problems += exc.problems
                continue
            if (level := params.workload_pod_security()) is not None:
                pod_security[c.name] = level
    if problems:
        raise SchemaError(problems)
    prepared = {
        c.name: out
        for c in plan.checks
        if c.skip_reason is None
        and (out := preflight(c.name, recipe, request.data_dir, request.recipe)) is not None
    }
    return Inputs(recipe, snapshot, config, plan, warnings, prepared, texts, pools, pod_security)


def _make_executor(kind: str) -> Executor:
    if kind == "local":
        from aicr.runner.local import LocalExecutor

        local: Executor = LocalExecutor()
        return local
    from aicr.runner.job import JobExecutor

    job: Executor = JobExecutor()
    return job


def _context(
    request: ValidateRequest,
    inputs: Inputs,
    snapshot: Snapshot | None,
    run_id: str,
    events: EventSink,
    cancel: threading.Event,
) -> RunContext:
    orchestrator = Placement(
        node_selector=request.orchestrator_node_selector or {},
        tolerations=(
            request.orchestrator_tolerations
            if request.orchestrator_tolerations is not None
            else TOLERATE_ALL
        ),
    )
    return RunContext(
        run_id=run_id,
        namespace=request.namespace,
        recipe=inputs.recipe,
        recipe_source=request.recipe,
        snapshot=snapshot,
        config=inputs.config,
        kube=request.kube,
        image=resolve_image(request, inputs.config),
        image_pull_secrets=request.image_pull_secrets,
        orchestrator=orchestrator,
        workloads=Placement(request.node_selector, request.tolerations),
        no_cleanup=request.no_cleanup,
        data_dir=request.data_dir,
        check_inputs=inputs.prepared,
        workload_pod_security=inputs.pod_security,
        events=events,
        cancel=cancel,
    )


def _capture(
    request: ValidateRequest, inputs: Inputs, run_id: str, warnings: list[str], events: EventSink
) -> tuple[Snapshot, list[str]]:
    """A live snapshot: the API, then a node agent per node group (as ``aicr snapshot``)."""
    from aicr.snapshot import agent
    from aicr.snapshot.capture import REQUEST_TIMEOUT_SECONDS

    placement = agent.AgentRequest(
        kube=request.kube,
        image=resolve_image(request, inputs.config),
        image_pull_secrets=request.image_pull_secrets,
        node_selector=dict(request.orchestrator_node_selector or {}),
        tolerations=request.orchestrator_tolerations or TOLERATE_ALL,
        no_cleanup=request.no_cleanup,
        name_prefix=request.name_prefix,
        run_id=run_id,
    )
    snapshot, agents = agent.capture(request.kube, REQUEST_TIMEOUT_SECONDS, placement, events)
    assert agents is not None  # asked for
    warnings += [
        f"node agent {line}; its group's file readings are missing (constraints on them "
        "fail closed)"
        for line in agents.failures
    ]
    return snapshot, agents.leftovers


def _all_ended(plan: Plan, status: Status, message: str, detail: Detail) -> PlanResults:
    results = PlanResults()
    for check in plan.checks:
        ended = CheckResult.ended(check, status, check.skip_reason or message, detail)
        results.results.append((check, ended))
    return results


def _exit_code(
    request: ValidateRequest,
    gate_outcome: gate.GateOutcome,
    results: PlanResults,
    aggregation: Aggregation | None,
) -> int:
    if results.stopped == StopReason.INTERRUPTED:
        return EXIT_INTERRUPTED
    if not request.fail_on_error:
        return EXIT_OK
    if gate_outcome.evaluated and not gate_outcome.passed:
        return EXIT_VALIDATION_FAILED
    if results.stopped == StopReason.TIMEOUT:
        return EXIT_VALIDATION_FAILED
    if request.cncf_submission and aggregation is not None:
        # CNCF.md: a failed check backing only SHOULDs does not fail a submission.
        return EXIT_VALIDATION_FAILED if aggregation.blocking else EXIT_OK
    failing = any(r.status in (Status.FAILED, Status.OTHER) for _, r in results.results)
    return EXIT_VALIDATION_FAILED if failing else EXIT_OK


def _report(
    request: ValidateRequest,
    run_id: str,
    start: int,
    results: PlanResults,
    gate_outcome: gate.GateOutcome,
    plan: Plan,
    snapshot_source: str | None,
    warnings: list[str],
) -> Report:
    tests = [to_test(check, result) for check, result in results.results]
    extra: dict[str, Any] = {
        "runId": run_id,
        "recipe": request.recipe,
        "snapshot": snapshot_source,
        "phases": [p.phase.value for p in plan.phases],
        "noCluster": request.no_cluster,
        "gate": gate_outcome.as_extra(),
        "interrupted": results.stopped == StopReason.INTERRUPTED,
        "timedOut": results.stopped == StopReason.TIMEOUT,
        "warnings": warnings,
    }
    return ctrf.build(
        tests,
        start=start,
        stop=now_ms(),
        version=__version__,
        run_id=run_id,
        timestamp=datetime.now(UTC).isoformat(timespec="seconds"),
        extra={"aicr": extra},
    )


def _requirement_summary(
    request: ValidateRequest,
    inputs: Inputs,
    snapshot: Snapshot | None,
    report: Report,
    warnings: list[str],
) -> tuple[str, Aggregation] | None:
    """The requirement map, whenever the conformance phase ran.

    Outside a submission it is informational, and a version we cannot resolve is a
    warning, not an error.
    """
    if Phase.CONFORMANCE not in {p.phase for p in inputs.plan.phases}:
        return None
    from aicr import cncf
    from aicr.errors import InputError

    try:
        version = cncf.resolve_version(snapshot, request.cncf_version, inputs.config)
        reqs = cncf.load_requirements(version)
    except InputError as exc:
        if request.cncf_submission:
            raise
        warnings.append(f"no requirement summary: {exc}")
        return None
    return version, cncf.aggregate(reqs, report, inputs.plan.check_names, inputs.config)


def cncf_extra(aggregation: Aggregation) -> dict[str, Any]:
    """The requirement map as recorded in the report's extra."""
    return {
        "requirements": [
            {"id": r.id, "level": r.level, "status": r.status, "checks": list(r.checks)}
            for r in aggregation.rows
        ]
    }


def run(
    request: ValidateRequest,
    *,
    events: EventSink = discard,
    cancel: threading.Event | None = None,
    executor: Executor | None = None,
    inputs: Inputs | None = None,
) -> Outcome:
    """Run ``aicr validate``; returns the outcome, raises AicrError for bad input.

    ``inputs`` may be passed when the caller already loaded them (to show the plan first).
    """
    start = now_ms()
    run_id = names.new_run_id(request.name_prefix)
    cancel = cancel or threading.Event()
    inputs = inputs or load_inputs(request)
    warnings = list(inputs.warnings)
    plan = inputs.plan

    if request.dry_run:
        from aicr.runner.manifests import render_run

        ctx = _context(request, inputs, inputs.snapshot, run_id, events, cancel)
        results = _all_ended(
            plan, Status.SKIPPED, "dry run: nothing was applied", Detail.NO_CLUSTER
        )
        not_run = gate.run(inputs.recipe, None, why_not="dry run")
        report = _report(request, run_id, start, results, not_run, plan, request.snapshot, warnings)
        return Outcome(report, EXIT_OK, plan, not_run, warnings, manifests=render_run(plan, ctx))

    snapshot = inputs.snapshot
    snapshot_source = request.snapshot
    agent_leftovers: list[str] = []
    if snapshot is None and not request.no_cluster:
        snapshot, agent_leftovers = _capture(request, inputs, run_id, warnings, events)
        if inputs.pools is not None:
            from aicr.snapshot.aks import project

            snapshot = project(snapshot, inputs.pools)
        snapshot_source = LIVE_SNAPSHOT
        if request.require_gpu:
            require_gpu(snapshot, snapshot_source)
        if request.cncf_submission:
            from aicr import cncf

            # The live snapshot is the first moment the cluster's version is known.
            cncf.resolve_version(snapshot, request.cncf_version, inputs.config, match_cluster=True)
    why_not = "no snapshot given with --no-cluster" if snapshot is None else None
    gate_outcome = gate.run(inputs.recipe, snapshot, why_not=why_not)

    leftovers: list[str] = list(agent_leftovers)
    nodes: list[dict[str, Any]] = []
    if request.no_cluster:
        results = _all_ended(plan, Status.SKIPPED, "no-cluster: not run", Detail.NO_CLUSTER)
    elif not gate_outcome.passed:
        results = _all_ended(
            plan, Status.SKIPPED, "not run: the readiness gate failed", Detail.PHASE_STOPPED
        )
    else:
        run_executor = executor or _make_executor(request.executor)
        ctx = _context(request, inputs, snapshot, run_id, events, cancel)
        deadline = time.monotonic() + request.timeout.total_seconds() if request.timeout else None
        try:
            run_executor.start(ctx)
            nodes = run_executor.nodes(ctx)
            results = run_plan(
                plan,
                run_executor,
                ctx,
                parallel=request.parallel,
                events=events,
                deadline=deadline,
                timeout_text=request.timeout_text,
                gpus=run_executor.gpu_pool(ctx),
            )
        finally:
            leftovers += run_executor.finish(ctx)

    report = _report(request, run_id, start, results, gate_outcome, plan, snapshot_source, warnings)
    assert report.extra is not None  # _report always sets extra["aicr"]
    report.extra["aicr"]["trust"] = trust.classify(
        no_cluster=request.no_cluster,
        snapshot_given=snapshot_source != LIVE_SNAPSHOT,
        nodes=nodes,
    ).as_extra()
    report.extra["aicr"]["provenance"] = _provenance(request, inputs, nodes)
    summary = _requirement_summary(request, inputs, snapshot, report, warnings)
    version, aggregation = summary if summary else ("", None)
    if aggregation is not None:
        # The aggregation reads the report it annotates, so it is added afterwards.
        report.extra["aicr"]["cncf"] = {"version": version, **cncf_extra(aggregation)}
    outcome = Outcome(
        report,
        _exit_code(request, gate_outcome, results, aggregation),
        plan,
        gate_outcome,
        warnings,
        aggregation,
        leftovers=leftovers,
    )
    if request.cncf_submission:
        outcome.no_submission = _why_no_submission(gate_outcome, results, aggregation)
        if outcome.no_submission is None:
            _submit(request, inputs, snapshot, snapshot_source, version, outcome)
    outcome.snapshot = snapshot
    if request.emit_attestation:
        outcome.record = _record(request, inputs, snapshot, snapshot_source, outcome)
    return outcome


def _provenance(
    request: ValidateRequest, inputs: Inputs, nodes: list[dict[str, Any]]
) -> dict[str, Any]:
    """What the results came from: node groups' software, the validator image, the catalog.

    The checks are built into the validator, so each check's version is the tool's.
    """
    from aicr.attestation.statement import catalog_digest
    from aicr.snapshot.provenance import node_groups

    return {
        "nodeGroups": node_groups(nodes),
        "validatorImage": resolve_image(request, inputs.config),
        "checkVersion": __version__,
        "catalog": {"sha256": catalog_digest()},
    }


def _record(
    request: ValidateRequest,
    inputs: Inputs,
    snapshot: Snapshot | None,
    snapshot_source: str | None,
    outcome: Outcome,
) -> RunRecord:
    """What the run's attestation records; a captured snapshot is digested as YAML."""
    from aicr.attestation.statement import Input, RunRecord, sha256_text
    from aicr.errors import ClusterError
    from aicr.serialize import Format, snapshot_text

    given = inputs.texts.get("snapshot")
    if given is None and snapshot is not None:
        text = snapshot_text(snapshot, Format.YAML)
        given = Input(snapshot_source or "live capture", sha256_text(text))
    server = None
    if not request.no_cluster:
        from aicr.kube.target import load_configuration

        try:
            server = str(load_configuration(request.kube).host)
        except ClusterError:
            server = None
    return RunRecord(
        report=outcome.report,
        exit_code=outcome.exit_code,
        recipe=inputs.texts["recipe"],
        snapshot=given,
        config=inputs.texts.get("config"),
        aks_gpu_pools=inputs.texts.get("aks-gpu-pools"),
        image=resolve_image(request, inputs.config),
        server_url=server,
        kubernetes_version=snapshot.server_version if snapshot else None,
    )


def _why_no_submission(
    gate_outcome: gate.GateOutcome, results: PlanResults, aggregation: Aggregation | None
) -> str | None:
    """Why this run cannot back a submission, in one line; None when it can."""
    if results.stopped == StopReason.INTERRUPTED:
        return "the run was interrupted; a partial run cannot back a submission"
    if gate_outcome.evaluated and not gate_outcome.passed:
        return "the readiness gate failed, so no check ran"
    if results.stopped == StopReason.TIMEOUT:
        return "the run hit --timeout before every check finished"
    if aggregation is None:
        return "the plan has no conformance phase, so no requirement was decided"
    return "; ".join(aggregation.blocking) or None


def _submit(
    request: ValidateRequest,
    inputs: Inputs,
    snapshot: Snapshot | None,
    snapshot_source: str | None,
    version: str,
    outcome: Outcome,
) -> None:
    """Write the submission; a refusal is recorded on the outcome, so the report survives."""
    from aicr import cncf
    from aicr.errors import AicrError

    try:
        result = cncf.write_submission(
            Path(request.evidence_dir or ""),
            report=outcome.report,
            recipe=inputs.recipe,
            snapshot=snapshot,
            config=inputs.config,
            version=version,
            force=request.force,
            recipe_source=request.recipe,
            snapshot_source=snapshot_source,
            config_source=request.config or "config",
        )
        cncf.refuse_leaks(result.path)
    except AicrError as exc:
        outcome.no_submission = " ".join(str(exc).split())
        if request.fail_on_error:
            outcome.exit_code = EXIT_VALIDATION_FAILED
        return
    outcome.submission_path = result.path
    outcome.warnings.extend(result.warnings)
