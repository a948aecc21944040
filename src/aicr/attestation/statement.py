"""The in-toto Statement of one ``aicr validate`` run, and the files it vouches for.

Subjects are the files the run wrote (report, JUnit XML, submission files), named
by their path relative to the attestation's folder so a verifier finds them beside
it. The predicate (``PREDICATE_TYPE``, documented in docs/formats.md) records what
went in and what came out. The cluster is named only by the SHA-256 of its API
server URL: whoever knows the server can confirm it, nobody else learns it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from aicr import __version__
from aicr.ctrf import Report, Status

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://aicr.dev/attestation/validate-run/v1"
SUFFIX = ".intoto.json"
FAILING = (Status.FAILED, Status.OTHER)


def sha256_text(text: str) -> str:
    """Hex SHA-256 of ``text`` as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def catalog_digest() -> str:
    """SHA-256 of the check catalog this build ships."""
    data = resources.files("aicr.catalog").joinpath("catalog.yaml").read_bytes()
    return hashlib.sha256(data).hexdigest()


def path_for(report: str) -> Path:
    """The attestation beside ``report``: ``out/report.json`` -> ``out/report.intoto.json``."""
    path = Path(report)
    return path.with_name((path.stem if path.suffix else path.name) + SUFFIX)


@dataclass(frozen=True)
class Input:
    """One input document: where it came from and the SHA-256 of its text."""

    source: str
    sha256: str


@dataclass(frozen=True)
class RunRecord:
    """What the predicate records about a run; built by ``aicr.validate``."""

    report: Report
    exit_code: int
    recipe: Input
    snapshot: Input | None
    config: Input | None
    image: str
    aks_gpu_pools: Input | None = None
    server_url: str | None = None  # hashed, never recorded as is
    kubernetes_version: str | None = None


def _input(value: Input | None) -> dict[str, Any] | None:
    return None if value is None else {"source": value.source, "digest": {"sha256": value.sha256}}


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="seconds")


def _image(ref: str) -> dict[str, Any]:
    _, at, digest = ref.partition("@")
    return {"ref": ref, "digest": digest if at and digest.startswith("sha256:") else None}


def predicate(record: RunRecord) -> dict[str, Any]:
    """The predicate: tool, inputs, image, cluster (hashed), times, phases, checks, verdict."""
    report = record.report
    aicr = (report.extra or {}).get("aicr", {})
    gate = aicr.get("gate", {})
    server = record.server_url
    return {
        "tool": {"name": "aicr", "version": __version__},
        "catalog": {"digest": {"sha256": catalog_digest()}},
        "recipe": _input(record.recipe),
        "snapshot": _input(record.snapshot),
        "config": _input(record.config),
        "aksGpuPools": _input(record.aks_gpu_pools),
        "validatorImage": _image(record.image),
        "cluster": {
            "server": None if server is None else {"sha256": sha256_text(server)},
            "kubernetesVersion": record.kubernetes_version,
        },
        "run": {
            "id": report.run_id,
            "startedOn": _iso(report.results.summary.start),
            "finishedOn": _iso(report.results.summary.stop),
            "phases": list(aicr.get("phases", [])),
            "noCluster": bool(aicr.get("noCluster", False)),
            "gate": {"evaluated": bool(gate.get("evaluated")), "passed": bool(gate.get("passed"))},
            "exitCode": record.exit_code,
        },
        "checks": [
            {"name": t.name, "phase": t.phase, "status": t.status.value} for t in report.tests
        ],
        "provenance": aicr.get("provenance"),
    }


def statement(record: RunRecord, subjects: list[Path], folder: Path) -> dict[str, Any]:
    """The in-toto Statement over ``subjects`` (named relative to ``folder``)."""
    return {
        "_type": STATEMENT_TYPE,
        "subject": [
            {"name": os.path.relpath(path, folder), "digest": {"sha256": sha256_file(path)}}
            for path in subjects
        ],
        "predicateType": PREDICATE_TYPE,
        "predicate": predicate(record),
    }


def failures(predicate_doc: dict[str, Any]) -> list[str]:
    """What the recorded run got wrong: a failed gate, failed or ``other`` checks, exit code."""
    run = predicate_doc.get("run") or {}
    found = []
    gate = run.get("gate") or {}
    if gate.get("evaluated") and not gate.get("passed"):
        found.append("the readiness gate failed")
    for check in predicate_doc.get("checks") or []:
        if check.get("status") in FAILING:
            found.append(f"check {check.get('name')}: {check.get('status')}")
    if run.get("exitCode") not in (0, None) and not found:
        found.append(f"the run exited {run.get('exitCode')}")
    return found
