"""The submission writer: render, redact in one pass, verify, then rename into place.

Nothing reaches ``out_dir`` unless the whole directory rendered, was redacted and passed
the verifier; a blocked run (an incomplete MUST, an unexcused failed check) writes nothing.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from aicr.cncf import export, leaks, pages
from aicr.cncf.aggregation import Aggregation, ReqStatus, aggregate
from aicr.cncf.requirements import Conformance, Level, RequirementSet
from aicr.cncf.vendor import product_metadata
from aicr.cncf.verifier import check_directory, revision
from aicr.config import NA_PATH, ValidateConfig
from aicr.ctrf import Report
from aicr.errors import InputError, InvalidRequestError, Problem, SubmissionFailed
from aicr.phases import PHASE_ORDER
from aicr.recipe import Recipe
from aicr.redaction import ENGINE, Redactor, known_names, known_serials
from aicr.snapshot import Snapshot
from aicr.snapshot.redaction import redact_snapshot
from aicr.trust import LIVE_SNAPSHOT, TrustClass, of_report


@dataclass(frozen=True)
class SubmissionInputs:
    """What a submission is rendered from: one run's report and the inputs it ran with.

    ``validate --cncf-submission`` fills it from its resolved run, ``evidence render``
    from the saved files; the ``*_source`` fields are how the README names each input.
    ``checked`` holds the warnings of ``check_vendor`` and ``check_not_applicable``,
    which the caller ran as early as each could be (validate before the recipe is read
    and before the cluster, evidence render before the report is read); the writer does
    not ask again.
    """

    report: Report
    recipe: Recipe
    snapshot: Snapshot | None
    config: ValidateConfig
    conformance: Conformance
    recipe_source: str
    snapshot_source: str | None = None
    config_source: str = "config"
    checked: tuple[str, ...] = field(kw_only=True)


@dataclass(frozen=True)
class SubmissionResult:
    """What was written and what the user should know about it."""

    path: Path
    aggregation: Aggregation
    redaction_counts: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def planned_checks(recipe: Recipe, report: Report | None = None) -> list[str]:
    """Every check the recipe plans, in phase order, for the phases the run recorded."""
    aicr = ((report.extra or {}) if report else {}).get("aicr") or {}
    ran = aicr.get("phases") if isinstance(aicr, dict) else None
    names: list[str] = []
    for phase in PHASE_ORDER:
        if not isinstance(ran, list) or phase.value in ran:
            names += recipe.checks(phase) or []
    return names


def render(
    *,
    reqs: RequirementSet,
    agg: Aggregation,
    report: Report,
    recipe: Recipe,
    snapshot: Snapshot | None,
    config: ValidateConfig,
    inputs: pages.Inputs,
    warnings: list[str],
    redactor: Redactor,
    put: Callable[[str, str], None],
    directory: Path,
) -> None:
    """Write every file of the submission from data already redacted, one file at a time.

    Captured output reaches the evidence pages and junit.xml only from the redacted report;
    the small files made of words (PRODUCT.yaml, e2e.log, README.md) get one more scan,
    for what the writers add (input names, warnings). README.md comes last, with the counts.
    """
    run = pages.run_id(report)
    trust = of_report(report.extra)
    metadata = product_metadata(
        config, reqs.version, snapshot.server_version if snapshot is not None else None
    )
    exported = export.cases(report, agg)
    cite = reqs.hybrid and not any(c.outcome == export.Outcome.FAIL for c in exported)
    product = pages.product_yaml(reqs, agg, metadata, run, trust, cite)
    put(pages.PRODUCT_FILE, redactor.redact(product))
    with (directory / pages.JUNIT_FILE).open("w", encoding="utf-8") as out:
        export.write_junit(exported, out)
    put(pages.E2E_FILE, redactor.redact(export.e2e_log(exported)))
    for res in agg.results:
        put(pages.evidence_path(res.id), pages.evidence_page(res, reqs.version, trust))
    readme = pages.readme(
        reqs=reqs,
        agg=agg,
        report=report,
        recipe=recipe,
        snapshot=snapshot,
        metadata=metadata,
        inputs=inputs,
        planned=planned_checks(recipe, report),
        exported=exported,
        verifier_revision=revision(reqs),
        warnings=[redactor.redact(w) for w in warnings],
        trust=trust,
    )
    readme = redactor.redact(readme)
    summary = pages.redaction_summary(dict(redactor.counts), redactor.classes, ENGINE)
    put(pages.README_FILE, readme.replace(pages.REDACTION_MARK, summary))


def unobserved_musts(agg: Aggregation) -> list[str]:
    """Each Implemented MUST whose passed checks recorded no observations, with those checks.

    A real run always records what it asked of the cluster and what came back; a report
    with only verdicts ("ok") cannot show a reviewer the claim.
    """
    out = []
    for res in agg.results:
        if res.requirement.level != Level.MUST or res.status != ReqStatus.IMPLEMENTED:
            continue
        blind = [
            c.name for c in res.checks if c.test is not None and not pages.observations(c.test)
        ]
        if blind:
            out.append(f"{res.id} (MUST): {', '.join(blind)} recorded no observations")
    return out


def redactor_for(config: ValidateConfig, snapshot: Snapshot | None, report: Report) -> Redactor:
    """A redactor that knows the run's node and cluster names and the config's rules.

    Names come from the snapshot and from the report's structured data (each test's
    ``extra.nodes`` lists the nodes its check read), so a snapshot of another cluster, or
    none, still leaves no node of this run unredacted in the checks' free text.
    """
    sources: list[object] = [report.extra or {}, report.results.environment or {}]
    sources += [
        {"labels": t.labels or {}, "extra": t.extra or {}, "more": t.model_extra or {}}
        for t in report.tests
    ]
    if snapshot is not None:
        sources.append(snapshot.metadata)
        for m in snapshot.measurements:
            for sub in m.subtypes:
                sources += [sub.data, sub.context or {}]
    nodes, clusters = known_names(*sources)
    outputs = [{"stdout": t.stdout or [], "message": t.message or ""} for t in report.tests]
    serials = known_serials(*sources, *outputs)
    redaction = config.validate_section.redaction
    allow = list(redaction.allow)
    contact = config.cncf.vendor.contact_email_address
    if contact:
        allow.append(contact.strip())
    return Redactor(
        node_names=nodes,
        cluster_names=clusters,
        serials=serials,
        allow=allow,
        extra_patterns=redaction.patterns,
    )


def redact_report(report: Report, redactor: Redactor) -> Report:
    """The report with every value a writer shows redacted: messages, output, evidence.

    Check names, statuses and timings stay as they are: the aggregation reads them.
    """
    tests = []
    for test in report.tests:
        update = {
            "message": redactor.redact_value(test.message),
            "trace": redactor.redact_value(test.trace),
            # held as one text: every writer joins the lines anyway, and one string costs
            # half the memory of a hundred thousand
            "stdout": _one_text(test.stdout, redactor),
            "labels": redactor.redact_value(test.labels),
            "extra": redactor.redact_value(test.extra),
        }
        changed = {k: v for k, v in update.items() if v is not getattr(test, k)}
        tests.append(test.model_copy(update=changed) if changed else test)
    results = report.results.model_copy(
        update={
            "tests": tests,
            "environment": redactor.redact_value(report.results.environment),
        }
    )
    return report.model_copy(
        update={"results": results, "extra": redactor.redact_value(report.extra)}
    )


def _one_text(lines: list[str] | None, redactor: Redactor) -> list[str] | None:
    if not lines:
        return lines
    text = "\n".join(lines)
    out = redactor.redact(text)
    return lines if out is text else [out]


def check_output_dir(out_dir: Path, force: bool, flag: str = "--evidence-dir") -> None:
    """Refuse an unwritable output directory, or a non-empty one without --force.

    validate asks before any cluster work; the writer asks again before writing.
    """
    from aicr.writers import check_writable_dir

    unwritable = check_writable_dir(str(out_dir), flag)
    if unwritable is not None:
        raise InputError(unwritable)
    if out_dir.is_dir() and any(out_dir.iterdir()) and not force:
        raise InputError(
            Problem(
                "directory is not empty",
                source=str(out_dir),
                hint="pass --force to replace it whole, or choose another directory",
            )
        )


def write_submission(
    out_dir: Path,
    run: SubmissionInputs,
    *,
    force: bool,
    out_flag: str = "--evidence-dir",
    aggregation: Aggregation | None = None,
) -> SubmissionResult:
    """Render, redact and verify a submission, then move it to ``out_dir`` in one rename.

    ``aggregation`` is the run's requirement map when the caller decided it already
    (validate's summary of this report); otherwise it is decided here, once.
    """
    report, recipe, snapshot, config = run.report, run.recipe, run.snapshot, run.config
    config_source = run.config_source
    reqs = run.conformance.requirements
    warnings = list(run.checked)
    check_output_dir(out_dir, force, out_flag)
    agg = (
        aggregate(reqs, report, planned_checks(recipe, report), config)
        if aggregation is None
        else aggregation
    )
    if agg.contradictions:
        raise InvalidRequestError(
            [
                Problem(
                    f"{req_id} is declared N/A, but its check {', '.join(checks)} ran and "
                    "passed in the report",
                    config_source,
                    None,
                    f"{NA_PATH}.{req_id}",
                    "remove the N/A declaration: the run shows the platform provides it",
                )
                for req_id, checks in agg.contradictions
            ]
        )
    if agg.blocking:
        raise SubmissionFailed("no submission written, because:\n  " + "\n  ".join(agg.blocking))
    blind = unobserved_musts(agg)
    if blind:
        raise SubmissionFailed(
            "no submission written: a MUST is Implemented only on what its checks saw, and "
            "these recorded no observations:\n  " + "\n  ".join(blind)
        )
    trust = of_report(report.extra)
    if trust.cls == TrustClass.OFFLINE:
        raise SubmissionFailed(
            f"no submission written: the run's trust class is offline ({trust.why}); "
            "nothing was observed on a cluster"
        )
    redactor = redactor_for(config, snapshot, report)
    # A symlinked directory stays a symlink: the submission replaces what it points at.
    out_dir = Path(os.path.realpath(out_dir))
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        _render_redacted(run, agg, redactor, warnings, staging, out_dir.name)
        # the redacted copy of the report is gone by now, so the verifier's read of
        # junit.xml does not come on top of it (peak memory: about the captured size once)
        verdict = check_directory(staging, reqs, allow_simulated=True)
        if not verdict.ok:
            raise SubmissionFailed(
                "the rendered submission does not pass the verifier; nothing written:\n  "
                + "\n  ".join(verdict.errors)
            )
        warnings += verdict.warnings
        _swap_in(staging, out_dir)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return SubmissionResult(out_dir, agg, dict(redactor.counts), warnings)


def _render_redacted(
    run: SubmissionInputs,
    agg: Aggregation,
    redactor: Redactor,
    warnings: list[str],
    staging: Path,
    name: str,
) -> None:
    """``render`` into ``staging`` from the report redacted here, freed when this returns."""
    shown = redact_report(run.report, redactor)

    def put(rel: str, text: str) -> None:
        target = staging / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")

    render(
        reqs=run.conformance.requirements,
        agg=agg.over(shown),
        report=shown,
        recipe=run.recipe,
        snapshot=redact_snapshot(run.snapshot, redactor) if run.snapshot is not None else None,
        config=run.config,
        inputs=pages.Inputs(
            run.recipe_source,
            None if run.snapshot_source in (None, LIVE_SNAPSHOT) else run.snapshot_source,
            run.config_source,
            name,
        ),
        warnings=warnings,
        redactor=redactor,
        put=put,
        directory=staging,
    )


def submit(
    out_dir: Path,
    run: SubmissionInputs,
    *,
    force: bool,
    out_flag: str = "--evidence-dir",
    aggregation: Aggregation | None = None,
) -> SubmissionResult:
    """What ``validate --cncf-submission`` and ``evidence render`` leave on disk.

    The submission (``write_submission``), then the leak scan of what was written, so a
    value redaction missed never stays on disk as a finished submission (exit 8).
    """
    result = write_submission(out_dir, run, force=force, out_flag=out_flag, aggregation=aggregation)
    refuse_leaks(result.path)
    return result


def refuse_leaks(path: Path) -> None:
    """The leak scan (``aicr.cncf.leaks``) on a submission just written; any hit removes it."""
    found = leaks.scan(path)
    if found:
        shutil.rmtree(path, ignore_errors=True)
        shown = [str(leak) for leak in found[:20]] + (["..."] if len(found) > 20 else [])
        raise SubmissionFailed(
            f"the leak scan found {len(found)} value(s) that redaction should have hidden; "
            f"{path} was removed:\n  " + "\n  ".join(shown)
        )


def _swap_in(staging: Path, out_dir: Path) -> None:
    """Replace ``out_dir`` whole with ``staging``: no stale file of an earlier run survives."""
    old: Path | None = None
    if out_dir.exists():
        old = out_dir.with_name(f".{out_dir.name}.old-{staging.name.rsplit('.', 1)[-1]}")
        out_dir.rename(old)
    try:
        staging.rename(out_dir)
    except OSError:
        if old is not None:
            old.rename(out_dir)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
