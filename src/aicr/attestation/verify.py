"""Check an attestation: signature, every subject's digest, then the recorded verdict.

A bad signature, a changed or missing subject, or a payload that is not what was
signed is *rejected* (exit 8); a genuine attestation of a run that failed is
*valid with failures* (exit 1); a file that is not an attestation at all, or an
unreadable one, is bad input (exit 2).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from aicr import json_io, sources, yaml_io
from aicr.attestation import dsse, keys
from aicr.attestation.statement import PREDICATE_TYPE, STATEMENT_TYPE, failures, sha256_file
from aicr.errors import BoundExceededError, FileFormatError, Problem
from aicr.limits import Kind


@dataclass
class Verdict:
    """What verification found."""

    rejected: list[str] = field(default_factory=list)  # signature or digest problems
    failures: list[str] = field(default_factory=list)  # what the genuine run got wrong
    checked: list[str] = field(default_factory=list)  # subjects whose digest matched


def _document(path: Path) -> Any:
    try:
        text = sources.read(str(path), kind=Kind.ATTESTATION)
    except FileFormatError as exc:
        raise FileFormatError(
            [replace(p, problem=f"--attestation: {p.problem}") for p in exc.problems]
        ) from None
    try:
        return json_io.parse(text, str(path))
    except FileFormatError as exc:
        raise FileFormatError(
            [replace(p, problem=f"not JSON: {p.problem}") for p in exc.problems]
        ) from None


def _bad(path: Path, problem: str) -> FileFormatError:
    hint = "expected a DSSE envelope written by aicr validate --emit-attestation"
    return FileFormatError(Problem(problem, source=str(path), hint=hint))


def verify(path: Path, key_path: str) -> Verdict:
    """Verify the attestation at ``path`` against the public key at ``key_path``."""
    key = keys.load_public(key_path)
    document = _document(path)
    try:
        opened = dsse.open_envelope(document, key)
    except dsse.MalformedEnvelope as exc:
        raise _bad(path, str(exc)) from None
    verdict = Verdict()
    if not opened.signed:
        verdict.rejected.append(
            f"signature: does not check against {key_path} (key id {keys.key_id(key)})"
        )
        return verdict  # nothing unsigned is worth reading further
    if opened.payload_type != dsse.IN_TOTO_PAYLOAD_TYPE:
        raise _bad(path, f"payloadType {opened.payload_type!r}: not an in-toto Statement")
    try:
        body = json_io.parse(opened.payload.decode("utf-8"), f"{path} payload")
    except (UnicodeDecodeError, FileFormatError):
        raise _bad(path, "payload: not JSON") from None
    if not isinstance(body, dict) or body.get("_type") != STATEMENT_TYPE:
        raise _bad(path, f"payload: not an in-toto Statement ({STATEMENT_TYPE})")
    if body.get("predicateType") != PREDICATE_TYPE:
        raise _bad(path, f"predicateType {body.get('predicateType')!r}: expected {PREDICATE_TYPE}")
    folder = path.resolve().parent
    subjects = body.get("subject")
    if not isinstance(subjects, list) or not subjects:
        verdict.rejected.append("subject: the Statement names no file")
    for subject in subjects or []:
        _check_subject(subject, folder, verdict)
    predicate = body.get("predicate")
    predicate = predicate if isinstance(predicate, dict) else {}
    for name in verdict.checked:
        verdict.rejected += _report_mismatches(folder / name, name, predicate)
    verdict.failures = failures(predicate)
    return verdict


def _report_mismatches(path: Path, name: str, predicate: dict[str, Any]) -> list[str]:
    """Where a signed CTRF report and the predicate disagree: digests, provenance, checks.

    Digests: the validator image, the catalog, and every image the run's pods ran.

    Both are signed, so a disagreement means they describe different runs.
    """
    if path.suffix not in (".json", ".yaml", ".yml"):
        return []
    try:
        report = yaml_io.parse(sources.read(str(path), kind=Kind.REPORT), str(path)).data
    except BoundExceededError:
        raise  # refused as input (exit 2)
    except FileFormatError:
        return []
    if not isinstance(report, dict) or not isinstance(report.get("results"), dict):
        return []  # not a CTRF report
    aicr = (report.get("extra") or {}).get("aicr") or {}
    recorded = aicr.get("provenance") if isinstance(aicr, dict) else None
    attested = predicate.get("provenance")
    problems = []
    if recorded is not None or attested is not None:
        image = (predicate.get("validatorImage") or {}).get("ref")
        if (recorded or {}).get("validatorImage") != image:
            problems.append(
                f"subject {name}: its validator image differs from the attested {image}"
            )
        catalog = ((predicate.get("catalog") or {}).get("digest") or {}).get("sha256")
        if ((recorded or {}).get("catalog") or {}).get("sha256") != catalog:
            problems.append(f"subject {name}: its catalog digest differs from the attested one")
        if (recorded or {}).get("images") != (attested or {}).get("images"):
            problems.append(
                f"subject {name}: the images and digests it records differ from the attested ones"
            )
        if recorded != attested:
            problems.append(f"subject {name}: its provenance differs from the attested one")
    tests = report["results"].get("tests") or []
    shown = [(t.get("name"), t.get("status")) for t in tests if isinstance(t, dict)]
    signed = [(c.get("name"), c.get("status")) for c in predicate.get("checks") or []]
    if shown != signed:
        problems.append(f"subject {name}: its checks and verdicts differ from the attested ones")
    return problems


def _check_subject(subject: Any, folder: Path, verdict: Verdict) -> None:
    name = subject.get("name") if isinstance(subject, dict) else None
    want = (subject.get("digest") or {}).get("sha256") if isinstance(subject, dict) else None
    if not isinstance(name, str) or not isinstance(want, str):
        verdict.rejected.append(f"subject {subject!r}: needs a name and a sha256 digest")
        return
    target = folder / name
    if not target.is_file():
        verdict.rejected.append(f"subject {name}: missing (looked for {target})")
        return
    got = sha256_file(target)
    if got != want:
        verdict.rejected.append(f"subject {name}: sha256 {got} differs from the signed {want}")
        return
    verdict.checked.append(name)
