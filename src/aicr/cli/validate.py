"""``aicr validate``: options, one request, one library call, rendering."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import click

from aicr import defaults, durations, flags
from aicr.cli import compat, options, render
from aicr.errors import EXIT_INTERRUPTED, FlagConflictError, Problem
from aicr.kube.target import KubeTarget
from aicr.run_plan import ValidateRequest
from aicr.validate import Outcome, run

PHASE_CHOICES = ("deployment", "performance", "conformance", "all")
CHECK_IMAGE_ENV = "AICR_CHECK_IMAGE"
# AICR reads this for its snapshot agent's image; here it would point the checks at it.
AICR_AGENT_IMAGE_ENV = "AICR_VALIDATOR_IMAGE"


@contextmanager
def _signals(cancel: threading.Event) -> Iterator[None]:
    """First Ctrl-C/SIGTERM: stop launching, clean up, report. Second: exit at once."""

    def handler(signum: int, frame: FrameType | None) -> None:
        if cancel.is_set():
            os._exit(EXIT_INTERRUPTED)
        cancel.set()
        render.console.print(
            "[yellow]interrupted: stopping checks and cleaning up (again to exit at once)[/]"
        )

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def request_from_options(opts: dict[str, Any]) -> ValidateRequest:
    """Turn parsed click options into a checked request (exit 2 on any conflict)."""
    if opts["no_cluster"]:
        in_cluster = [
            f"--{flag} {opts[flag]}"
            for flag in ("recipe", "snapshot", "config", "output")
            if (opts[flag] or "").startswith("cm://")
        ]
        if in_cluster:
            raise FlagConflictError(
                [
                    Problem(f"{ref}: a ConfigMap needs the cluster; not with --no-cluster")
                    for ref in in_cluster
                ]
            )
    timeout = None
    if opts["timeout"]:
        try:
            timeout = durations.parse(opts["timeout"])
        except ValueError as exc:
            raise FlagConflictError(Problem(f"--timeout: {exc}")) from None
    orch_tolerations = (
        tuple(
            flags.parse_toleration(t, "--orchestrator-toleration")
            for t in opts["orchestrator_toleration"]
        )
        if opts["orchestrator_toleration"]
        else None
    )
    orch_selector = (
        flags.parse_node_selector(
            opts["orchestrator_node_selector"], "--orchestrator-node-selector"
        )
        if opts["orchestrator_node_selector"]
        else None
    )
    from aicr.writers import check_writable, check_writable_dir

    # Outputs are written at the end of a long run: refuse an unwritable target now.
    unwritable = [
        p
        for p in (
            check_writable(opts["output"], "--output"),
            check_writable(opts["junit"], "--junit"),
            check_writable(opts["snapshot_out"], "--snapshot-out"),
            check_writable_dir(opts["evidence_dir"], "--evidence-dir"),
        )
        if p is not None
    ]
    unwritable += _attestation_problems(opts)
    if unwritable:
        raise FlagConflictError(unwritable)
    return ValidateRequest(
        recipe=opts["recipe"],
        snapshot=opts["snapshot"],
        config=opts["config"],
        phases=tuple(opts["phase"]) or ("all",),
        skip_checks=tuple(opts["skip_check"]),
        no_cluster=opts["no_cluster"],
        fail_on_error=opts["fail_on_error"],
        kube=KubeTarget(opts["kubeconfig"], opts["context"]),
        namespace=opts["namespace"],
        image=opts["image"],
        image_pull_secrets=tuple(opts["image_pull_secret"]),
        node_selector=flags.parse_node_selector(opts["node_selector"], "--node-selector"),
        tolerations=tuple(flags.parse_toleration(t, "--toleration") for t in opts["toleration"]),
        orchestrator_node_selector=orch_selector,
        orchestrator_tolerations=orch_tolerations,
        no_cleanup=opts["no_cleanup"],
        parallel=opts["parallel"],
        executor=opts["executor"],
        timeout=timeout,
        timeout_text=opts["timeout"] or "",
        dry_run=opts["dry_run"],
        cncf_submission=opts["cncf_submission"],
        evidence_dir=opts["evidence_dir"],
        cncf_version=opts["cncf_version"],
        force=opts["force"],
        data_dir=opts["data"],
        name_prefix=opts["job_name"],
        require_gpu=opts["require_gpu"],
        emit_attestation=opts["emit_attestation"],
        aks_gpu_pools=opts["aks_gpu_pools"],
        snapshot_out=opts["snapshot_out"],
    )


def _attestation_problems(opts: dict[str, Any]) -> list[Problem]:
    """--emit-attestation needs a key and a report file to sit beside; checked before the run."""
    key, output = opts["attestation_key"], opts["output"] or "-"
    if not opts["emit_attestation"]:
        if key:
            return [Problem("--attestation-key needs --emit-attestation")]
        return []
    problems = []
    if not key:
        problems.append(
            Problem(
                "--emit-attestation needs --attestation-key KEY",
                hint="create one with `aicr attestation keygen -o DIR`; keyless Sigstore "
                "signing is not offered (docs/formats.md says why)",
            )
        )
    if output == "-" or output.startswith("cm://"):
        problems.append(
            Problem(
                f"--emit-attestation: the report goes to {output}; the attestation is written "
                "beside a report file",
                hint="give -o FILE",
            )
        )
        return problems
    from aicr.attestation.statement import path_for
    from aicr.writers import check_writable

    target = check_writable(str(path_for(output)), "--emit-attestation")
    if key:
        from aicr.attestation.keys import load_private

        load_private(key)  # a key that cannot sign stops the run now, not after it
    return problems + ([target] if target else [])


def _render(outcome: Outcome, opts: dict[str, Any]) -> None:
    from aicr.serialize import Format
    from aicr.writers import write_report

    render.warnings(outcome.warnings)
    if outcome.manifests is not None:
        from aicr.runner.manifests import to_yaml

        click.echo(to_yaml(outcome.manifests), nl=False)
        render.console.print(
            f"dry run: {len(outcome.manifests)} objects would be applied; nothing was created"
        )
        return
    if outcome.gate is not None:
        render.gate(outcome.gate)
    render.summary(outcome.report)
    cncf = (outcome.report.extra or {}).get("aicr", {}).get("cncf")
    if outcome.aggregation is not None and cncf:
        render.requirements(outcome.aggregation, cncf["version"])
    kube = KubeTarget(opts["kubeconfig"], opts["context"])
    where = write_report(outcome.report, opts["output"], kube, Format(opts["output_format"]))
    if where != "stdout":
        render.console.print(f"report: {where}")
    if opts["junit"]:
        from pathlib import Path

        from aicr.cncf.export import cases, junit
        from aicr.writers import write_file

        write_file(Path(opts["junit"]), junit(cases(outcome.report, None)), what="JUnit XML")
        render.console.print(f"junit: {opts['junit']}")
    if opts["snapshot_out"] and outcome.snapshot is not None:
        from aicr.writers import write_snapshot

        written = write_snapshot(outcome.snapshot, opts["snapshot_out"], kube, Format.YAML)
        render.console.print(f"snapshot: {written}")
    if outcome.record is not None:
        _attest(outcome, opts)
    if outcome.leftovers:
        render.console.print("[red]cleanup left objects behind:[/]")
        for line in outcome.leftovers:
            render.console.print(f"  {line}")
    if outcome.submission_path is not None:
        render.console.print(f"CNCF submission written to {outcome.submission_path}")
    elif outcome.no_submission is not None:
        from rich.markup import escape

        render.console.print(f"[red]no CNCF submission written:[/] {escape(outcome.no_submission)}")


def _attest(outcome: Outcome, opts: dict[str, Any]) -> None:
    from pathlib import Path

    from aicr.attestation.signing import emit, subject_files
    from aicr.attestation.statement import path_for

    assert outcome.record is not None
    written = [Path(opts["output"])] + [
        Path(opts[key])
        for key in ("junit", "snapshot_out")
        if opts[key] and not opts[key].startswith("cm://")
    ]
    subjects = subject_files(written, outcome.submission_path)
    where = emit(outcome.record, subjects, path_for(opts["output"]), opts["attestation_key"])
    render.console.print(f"attestation: {where} ({len(subjects)} files signed)")


@click.command(cls=options.StrictCommand)
@options.recipe("Recipe: path, http(s) URL or cm://namespace/name.", required=True)
@click.option(
    "-s",
    "--snapshot",
    envvar="AICR_SNAPSHOT",
    show_envvar=True,
    help="Snapshot: path, URL or cm://ns/name (default: captured live).",
)
@click.option(
    "--snapshot-out",
    metavar="FILE|cm://NS/NAME",
    help="Also write the snapshot the gate evaluated (captured or given) as YAML here.",
)
@options.aks_gpu_pools
@options.config("Validate config (ValidateConfig YAML): vendor data, N/A, per-check settings.")
@click.option(
    "--phase",
    cls=options.ListOption,
    multiple=True,
    type=click.Choice(PHASE_CHOICES),
    help="Phase to run; repeatable. Default: all.",
)
@click.option(
    "--skip-check", multiple=True, metavar="NAME", help="Report this check as skipped; repeatable."
)
@click.option(
    "--fail-on-error/--no-fail-on-error",
    default=True,
    show_default=True,
    help="Exit 8 when the gate or a check fails.",
)
@click.option(
    "--no-cluster",
    is_flag=True,
    help="Gate and plan only; every check is reported skipped; no cluster access.",
)
@options.kubeconfig
@options.context
@options.namespace
@options.image(
    CHECK_IMAGE_ENV,
    "Image the check pods run (default: the catalog image at this version; "
    f"${defaults.IMAGE_REGISTRY_ENV} swaps the registry).",
)
@options.image_pull_secret("Image pull secret for the check pods; repeatable.")
@options.node_selector("Place the workloads checks create (GPU test pods); repeatable.")
@options.toleration("Toleration for the workloads checks create; repeatable.")
@options.node_selector(
    "Pin the check pods themselves; repeatable.", flag="--orchestrator-node-selector"
)
@options.toleration(
    "Tolerations for the check pods (replaces the default tolerate-all).",
    flag="--orchestrator-toleration",
)
@options.no_cleanup("Keep everything the run created.")
@options.job_name("Start every object name of the run with PREFIX (names stay run-unique).")
@options.require_gpu("Exit 8 before any check runs when the snapshot reports no GPU.")
@options.refused("--service-account-name", message=compat.SERVICE_ACCOUNT)
@options.refused("-f", "--feature", message=compat.FEATURE)
@click.option(
    "--parallel",
    type=int,
    default=defaults.PARALLEL,
    show_default=True,
    envvar="AICR_PARALLEL",
    show_envvar=True,
    help="Checks run at once (GPU checks also wait until their GPUs are free).",
)
@click.option(
    "--executor",
    type=click.Choice(["job", "local"]),
    default=defaults.EXECUTOR,
    show_default=True,
    envvar="AICR_EXECUTOR",
    show_envvar=True,
    help="job: each check is a Kubernetes Job; local: a subprocess here.",
)
@options.timeout(
    "Bound the whole run (e.g. 45m); unfinished checks end as other.", envvar="AICR_TIMEOUT"
)
@click.option("--dry-run", is_flag=True, help="Print every manifest the run would apply.")
@click.option(
    "--cncf-submission",
    is_flag=True,
    help="Also write a CNCF AI Conformance submission (needs --evidence-dir).",
)
@click.option("--evidence-dir", type=click.Path(file_okay=False), help="Submission directory.")
@click.option(
    "--cncf-version",
    metavar="X.Y",
    help="CNCF conformance version (default: from the snapshot's Kubernetes version).",
)
@click.option("--force", is_flag=True, help="Replace a non-empty --evidence-dir.")
@click.option(
    "--data",
    type=click.Path(file_okay=False, exists=True),
    help="Folder with the values files the recipe references.",
)
@options.output("Where the CTRF report goes (default: stdout).")
@options.output_format("json", "Report format: CTRF JSON, the same as YAML, or a summary table.")
@click.option("--junit", type=click.Path(dir_okay=False), help="Also write JUnit XML here.")
@click.option(
    "--emit-attestation",
    is_flag=True,
    help="Also write a signed in-toto attestation of the run beside the -o report.",
)
@click.option(
    "--attestation-key",
    envvar="AICR_ATTESTATION_KEY",
    show_envvar=True,
    metavar="KEY",
    help="Private key that signs the attestation (aicr attestation keygen).",
)
@options.log_json
@options.debug
def validate(**opts: Any) -> int:
    """Validate a cluster against a recipe and write a CTRF report.

    Exit codes: 0 every planned check passed or was skipped for an allowed reason,
    2 invalid input (nothing is created in the cluster), 8 validation failed,
    130 interrupted.
    """
    request = request_from_options(opts)
    if os.environ.get(AICR_AGENT_IMAGE_ENV):
        render.note(
            f"{AICR_AGENT_IMAGE_ENV} is not read: it names AICR's snapshot agent; "
            f"set {CHECK_IMAGE_ENV} or --image for the check image",
            json_lines=opts["log_json"],
        )
    cancel = threading.Event()
    from aicr.run_plan import resolve_run

    # The run is resolved once up front so the plan can be shown before anything runs.
    resolved = resolve_run(request)
    render.plan(resolved.plan)
    mode = "json" if opts["log_json"] else "auto"
    with _signals(cancel), render.Progress(resolved.plan, mode) as progress:
        outcome = run(request, events=progress, cancel=cancel, resolved=resolved)
    _render(outcome, opts)
    return outcome.exit_code
