"""``aicr evidence``: render a CNCF submission from a saved run, and verify one."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from aicr.errors import EXIT_OK, EXIT_VALIDATION_FAILED, Problem

if TYPE_CHECKING:
    from aicr.cncf.verifier import VerifyResult


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def evidence() -> None:
    """Render and verify CNCF Kubernetes AI Conformance submissions."""


@evidence.command()
@click.option(
    "--report",
    "report_path",
    required=True,
    type=click.Path(dir_okay=False),
    help="CTRF report of the run (aicr validate -o).",
)
@click.option("--recipe", required=True, help="Recipe of the run: path, URL or cm://ns/name.")
@click.option("--snapshot", required=True, help="Snapshot of the cluster: path, URL or cm://.")
@click.option(
    "--config",
    "config_path",
    required=True,
    type=click.Path(dir_okay=False),
    help="Validate config with spec.validate.evidence.cncf (vendor, notApplicable).",
)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False),
    help="Submission directory to write (vX.Y/<dir> as upstream expects).",
)
@click.option(
    "--cncf-version",
    default=None,
    help="Conformance version X.Y (default: config, then the snapshot's Kubernetes version).",
)
@click.option("--force", is_flag=True, help="Replace a non-empty --out whole.")
def render(
    report_path: str,
    recipe: str,
    snapshot: str,
    config_path: str,
    out_dir: str,
    cncf_version: str | None,
    force: bool,
) -> int:
    """Render a submission directory from a saved report.

    Exit codes: 0 written, 2 bad input, 8 blocked (an incomplete MUST or an
    unexcused failed check; nothing is written) or a leak the scan of the written
    directory found (it is removed).
    """
    from aicr import cncf, ctrf
    from aicr.cli import render as show
    from aicr.config import load_config
    from aicr.recipe.load import load_recipe
    from aicr.snapshot.load import load_snapshot

    # Vendor metadata first: a submission without it is pointless whatever the run says.
    config = load_config(config_path)
    warnings = cncf.check_vendor(config, config_path)
    report = ctrf.read(Path(report_path))
    the_recipe = load_recipe(recipe)
    the_snapshot = load_snapshot(snapshot)
    conformance = cncf.resolve_conformance(the_snapshot, cncf_version, config, match_cluster=True)
    warnings += cncf.check_not_applicable(conformance.requirements, config, config_path)
    run = cncf.SubmissionInputs(
        report,
        the_recipe,
        the_snapshot,
        config,
        conformance,
        recipe,
        snapshot,
        config_path,
        checked=tuple(warnings),
    )
    result = cncf.submit(Path(out_dir), run, force=force, out_flag="--out")
    version = conformance.version
    show.requirements(result.aggregation, version)
    show.warnings(sorted(set(warnings + result.warnings)))
    redacted = sum(result.redaction_counts.values())
    click.echo(
        f"wrote {result.path} (v{version}; {redacted} values redacted; verifier passed)", err=True
    )
    return EXIT_OK


@evidence.command()
@click.argument("directories", metavar="[DIRECTORY]...", nargs=-1, type=click.Path(file_okay=False))
@click.option("--online", is_flag=True, help="Also fetch every http(s) URL (HEAD, then GET).")
@click.option(
    "--members", default=None, help="CNCF member names (file or URL; one per line or a JSON list)."
)
@click.option(
    "--cncf-version", default=None, help="Version X.Y when DIRECTORY has no vX.Y path component."
)
@click.option(
    "--attestation",
    "attestation_path",
    type=click.Path(dir_okay=False),
    help="Verify this run attestation (aicr validate --emit-attestation) instead.",
)
@click.option("--key", metavar="PUB", help="Public key the attestation must be signed with.")
@click.option(
    "--known",
    "known_path",
    type=click.Path(dir_okay=False),
    help="Values known to be secret, one per line: any found in a file is a leak.",
)
@click.option(
    "--allow-simulated",
    is_flag=True,
    help="Accept a submission rendered from a simulated (KWOK) cluster, for demos.",
)
def verify(
    directories: tuple[str, ...],
    online: bool,
    members: str | None,
    cncf_version: str | None,
    attestation_path: str | None,
    key: str | None,
    known_path: str | None,
    allow_simulated: bool,
) -> int:
    """Check submission directories the way the CNCF validator does, or a run attestation.

    DIRECTORY: prints every error, sorted, then a verdict line; then every leak (a
    value of a redaction class, or of --known, in any file, raw or JSON-, XML- or
    YAML-escaped) with its file, line and class. Exit codes: 0 valid, 1 invalid,
    8 any leak, 2 bad invocation.

    DIRECTORY...: the same for each, in order, in one process. Exit codes: 0 all valid,
    8 any invalid or leaking, 2 bad invocation (a path that is no directory, a version
    that cannot be told), reported for every directory before any is checked.

    --attestation FILE --key PUB: exit 0 when the signature, every subject's digest
    and every recorded check pass; 1 when genuine but the run recorded failures;
    8 when the signature or a digest does not check (tampered, wrong key, missing
    file) or a signed CTRF report disagrees with the predicate (validator image,
    catalog digest, the images run and their digests, provenance, checks); 2 for bad
    invocation or an unreadable file.
    """
    if attestation_path is not None:
        return _verify_attestation(directories, attestation_path, key, online, members)
    if not directories:
        raise click.UsageError("give DIRECTORY (a submission) or --attestation FILE")
    if key is not None:
        raise click.UsageError("--key is for --attestation")
    from aicr.cncf import verifier
    from aicr.cncf.leaks import read_known
    from aicr.errors import InputError

    names = verifier.read_members(members) if members else None
    known = read_known(known_path) if known_path else None
    problems: list[Problem] = []
    for directory in directories:
        try:
            verifier.requirements_for(Path(directory), cncf_version)
        except InputError as exc:
            problems += [p for p in exc.problems if p not in problems]
    if problems:
        raise InputError(problems)
    fetch = verifier.http_fetcher() if online else None  # one URL cache for every submission
    codes = []
    for directory in directories:
        result = verifier.verify(
            Path(directory),
            version=cncf_version,
            online=online,
            members=names,
            fetch=fetch,
            allow_simulated=allow_simulated,
            known=known,
        )
        codes.append(_show_verdict(directory, result))
    if len(codes) == 1:
        return codes[0]
    return EXIT_OK if set(codes) == {EXIT_OK} else EXIT_VALIDATION_FAILED


def _show_verdict(directory: str, result: VerifyResult) -> int:
    """Print one submission's errors, verdict line and leaks; its exit code as if alone."""
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    for error in result.errors:
        click.echo(error)
    if result.ok:
        click.echo(f"VALID: {directory} passes the v{result.version} checks")
    else:
        click.echo(f"INVALID: {directory}: {len(result.errors)} error(s) against v{result.version}")
    for leak in result.leaks:
        click.echo(f"LEAK: {leak}")
    if result.leaks:
        click.echo(f"LEAKS: {directory}: {len(result.leaks)} value(s) that redaction should hide")
        return EXIT_VALIDATION_FAILED
    return EXIT_OK if result.ok else 1


def _verify_attestation(
    directories: tuple[str, ...], path: str, key: str | None, online: bool, members: str | None
) -> int:
    if directories or online or members:
        raise click.UsageError("--attestation takes no DIRECTORY, --online or --members")
    if key is None:
        raise click.UsageError(
            "--attestation needs --key PUB (keyless Sigstore attestations are not supported)"
        )
    from aicr.attestation.verify import verify as check

    verdict = check(Path(path), key)
    for name in verdict.checked:
        click.echo(f"ok: {name}")
    for problem in verdict.rejected:
        click.echo(f"REJECTED: {problem}")
    if verdict.rejected:
        click.echo(f"REJECTED: {path}: {len(verdict.rejected)} problem(s)")
        return EXIT_VALIDATION_FAILED
    for failure in verdict.failures:
        click.echo(f"failed: {failure}")
    if verdict.failures:
        click.echo(f"VALID, RUN FAILED: {path}: signed by {key}; the recorded run has failures")
        return 1
    click.echo(f"VALID: {path}: signed by {key}; every subject and recorded check passed")
    return EXIT_OK
