"""Write a run's attestation: Statement -> DSSE envelope -> the safe file writer."""

from __future__ import annotations

import json
from pathlib import Path

from aicr.attestation import dsse, keys
from aicr.attestation.statement import RunRecord, statement
from aicr.writers import write_file


def subject_files(paths: list[Path], submission: Path | None) -> list[Path]:
    """The written files to vouch for: ``paths`` plus every file of a submission folder."""
    found = [p for p in paths if p.is_file()]
    if submission is not None and submission.is_dir():
        found += sorted(p for p in submission.rglob("*") if p.is_file())
    return found


def emit(record: RunRecord, subjects: list[Path], target: Path, key_path: str) -> Path:
    """Sign the Statement over ``subjects`` with the key at ``key_path``; write it to ``target``."""
    key = keys.load_private(key_path)
    body = statement(record, subjects, target.resolve().parent)
    payload = json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8")
    envelope = dsse.envelope(payload, key)
    write_file(target, json.dumps(envelope, indent=2) + "\n", what="attestation")
    return target
