"""One ``aicr validate`` run: inputs -> gate -> plan -> execution -> report -> exit code.

Every input is loaded and checked before anything touches the cluster, so bad
input exits 2 with nothing created. Nightly runs and CNCF submissions run the
identical path; ``--cncf-submission`` only adds the evidence at the end.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aicr import __version__, ctrf, gate, trust
from aicr.ctrf import Report, Status
from aicr.errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_VALIDATION_FAILED
from aicr.kube import names
from aicr.phases import Phase
from aicr.plan import Plan
from aicr.result import CheckResult, Detail, to_test
from aicr.run_plan import ResolvedRun, ValidateRequest, resolve_run, with_snapshot
from aicr.runner.events import EventSink, discard
from aicr.runner.orchestrate import PlanResults, StopReason, run_plan
from aicr.snapshot.model import Snapshot, require_gpu
from aicr.trust import LIVE_SNAPSHOT

if TYPE_CHECKING:
    from aicr.attestation.statement import RunRecord
    from aicr.cncf import Aggregation
    from aicr.runner.context import RunContext
    from aicr.runner.executor import Executor


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


def now_ms() -> int:
    """Wall-clock milliseconds, as CTRF wants."""
    return int(time.time() * 1000)


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
    resolved: ResolvedRun,
    run_id: str,
    events: EventSink,
    cancel: threading.Event,
) -> RunContext:
    """What the executor reads, all of it from the resolved run and the request."""
    # imported here: a no-cluster run builds no context (the import-set test holds it)
    from aicr.runner.context import RunContext

    return RunContext(
        run_id=run_id,
        namespace=request.namespace,
        recipe=resolved.recipe,
        recipe_source=request.recipe,
        snapshot=resolved.snapshot,
        config=resolved.config,
        kube=request.kube,
        image=resolved.image,
        image_pull_secrets=request.image_pull_secrets,
        orchestrator=resolved.orchestrator,
        workloads=resolved.workloads,
        no_cleanup=request.no_cleanup,
        data_dir=request.data_dir,
        check_inputs=resolved.prepared,
        workload_pod_security=resolved.pod_security,
        events=events,
        cancel=cancel,
    )


def _capture(
    request: ValidateRequest,
    resolved: ResolvedRun,
    run_id: str,
    warnings: list[str],
    events: EventSink,
) -> tuple[Snapshot, list[str]]:
    """A live snapshot: the API, then a node agent per node group (as ``aicr snapshot``)."""
    from aicr.snapshot import agent
    from aicr.snapshot.capture import REQUEST_TIMEOUT_SECONDS

    placement = agent.AgentRequest(
        kube=request.kube,
        image=resolved.image,
        image_pull_secrets=request.image_pull_secrets,
        node_selector=dict(resolved.orchestrator.node_selector),
        tolerations=resolved.orchestrator.tolerations,
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
    resolved: ResolvedRun, report: Report, warnings: list[str]
) -> Aggregation | None:
    """The requirement map, whenever the conformance phase ran.

    Outside a submission it is informational, and a version that could not be told is a
    warning, not an error (a submission's was refused before the run).
    """
    if Phase.CONFORMANCE not in {p.phase for p in resolved.plan.phases}:
        return None
    if resolved.conformance is None:
        warnings.append(f"no requirement summary: {resolved.no_conformance}")
        return None
    from aicr import cncf

    reqs = resolved.conformance.requirements
    return cncf.aggregate(reqs, report, resolved.plan.check_names, resolved.config)


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
    resolved: ResolvedRun | None = None,
) -> Outcome:
    """Run ``aicr validate``; returns the outcome, raises AicrError for bad input.

    ``resolved`` may be passed when the caller already resolved the run (to show the
    plan first).
    """
    start = now_ms()
    run_id = names.new_run_id(request.name_prefix)
    cancel = cancel or threading.Event()
    resolved = resolved or resolve_run(request)
    warnings = list(resolved.warnings)
    plan = resolved.plan

    if request.dry_run:
        from aicr.runner.manifests import render_run

        ctx = _context(request, resolved, run_id, events, cancel)
        results = _all_ended(
            plan, Status.SKIPPED, "dry run: nothing was applied", Detail.NO_CLUSTER
        )
        not_run = gate.run(resolved.recipe, None, why_not="dry run")
        report = _report(request, run_id, start, results, not_run, plan, request.snapshot, warnings)
        return Outcome(report, EXIT_OK, plan, not_run, warnings, manifests=render_run(plan, ctx))

    snapshot_source = request.snapshot
    agent_leftovers: list[str] = []
    if resolved.snapshot is None and not request.no_cluster:
        captured, agent_leftovers = _capture(request, resolved, run_id, warnings, events)
        if resolved.pools is not None:
            from aicr.snapshot.aks import project

            captured = project(captured, resolved.pools)
        snapshot_source = LIVE_SNAPSHOT
        if request.require_gpu:
            require_gpu(captured, snapshot_source)
        # The live snapshot is the first moment the cluster's version is known.
        resolved = with_snapshot(resolved, request, captured)
    snapshot = resolved.snapshot
    why_not = "no snapshot given with --no-cluster" if snapshot is None else None
    gate_outcome = gate.run(resolved.recipe, snapshot, why_not=why_not)

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
        ctx = _context(request, resolved, run_id, events, cancel)
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
    report.extra["aicr"]["provenance"] = _provenance(
        resolved, nodes, [r for _, r in results.results]
    )
    aggregation = _requirement_summary(resolved, report, warnings)
    if aggregation is not None:
        assert resolved.conformance is not None  # the summary is of the resolved version
        # The aggregation reads the report it annotates, so it is added afterwards.
        version = resolved.conformance.version
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
            _submit(request, resolved, snapshot_source, outcome)
    outcome.snapshot = snapshot
    if request.emit_attestation:
        outcome.record = _record(request, resolved, snapshot_source, outcome)
    return outcome


def _provenance(
    resolved: ResolvedRun, nodes: list[dict[str, Any]], results: list[CheckResult]
) -> dict[str, Any]:
    """What the results came from: node groups' software, the images run, the catalog.

    The checks are built into the validator, so each check's version is the tool's.
    Every image the check pods and their workloads ran is recorded by the digest the
    kubelet reported (``aicr.result.ran_images``).
    """
    from aicr.attestation.statement import catalog_digest
    from aicr.result import ran_images
    from aicr.snapshot.provenance import node_groups

    return {
        "nodeGroups": node_groups(nodes),
        "validatorImage": resolved.image,
        "images": ran_images(results),
        "checkVersion": __version__,
        "catalog": {"sha256": catalog_digest()},
    }


def _record(
    request: ValidateRequest,
    resolved: ResolvedRun,
    snapshot_source: str | None,
    outcome: Outcome,
) -> RunRecord:
    """What the run's attestation records; a captured snapshot is digested as YAML."""
    from aicr.attestation.statement import Input, RunRecord, sha256_text
    from aicr.errors import ClusterError
    from aicr.serialize import Format, snapshot_text

    snapshot, texts = resolved.snapshot, resolved.texts
    given = texts.get("snapshot")
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
        recipe=texts["recipe"],
        snapshot=given,
        config=texts.get("config"),
        aks_gpu_pools=texts.get("aks-gpu-pools"),
        image=resolved.image,
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
    resolved: ResolvedRun,
    snapshot_source: str | None,
    outcome: Outcome,
) -> None:
    """Write the submission; a refusal is recorded on the outcome, so the report survives."""
    from aicr import cncf
    from aicr.errors import AicrError

    assert resolved.conformance is not None  # a submission's version is resolved up front
    run = cncf.SubmissionInputs(
        outcome.report,
        resolved.recipe,
        resolved.snapshot,
        resolved.config,
        resolved.conformance,
        request.recipe,
        snapshot_source,
        request.config or "config",
        checked=resolved.submission_checked,
    )
    try:
        result = cncf.submit(
            Path(request.evidence_dir or ""),
            run,
            force=request.force,
            aggregation=outcome.aggregation,
        )
    except AicrError as exc:
        outcome.no_submission = " ".join(str(exc).split())
        if request.fail_on_error:
            outcome.exit_code = EXIT_VALIDATION_FAILED
        return
    outcome.submission_path = result.path
    # The writer returns the checked warnings with its own (the verifier's): say each once.
    outcome.warnings.extend(w for w in result.warnings if w not in outcome.warnings)
