"""The submission verifier: the upstream validator's rules, plus the v1.37 artifact rules.

Upstream reads only PRODUCT.yaml at ``vX.Y/<dir>/PRODUCT.yaml`` and takes the version
from that path. The rules here are those of ``UPSTREAM_REVISION``; URL reachability and
CNCF membership are checked only when asked (``--online``, ``--members``), since they
need the network. docs/cncf-submission.md lists every rule where this verifier differs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from aicr import json_io, sources, yaml_io
from aicr.cncf import hybrid, leaks
from aicr.cncf.requirements import (
    PRODUCT_STATUSES,
    UPSTREAM_REVISION,
    Level,
    RequirementSet,
    load_requirements,
    major_minor,
)
from aicr.cncf.vendor import K8S_CONFORMANCE_URL, is_placeholder
from aicr.errors import (
    BoundExceededError,
    FileFormatError,
    FlagConflictError,
    InputError,
    Problem,
)
from aicr.limits import Kind
from aicr.trust import SIMULATED_MARK

PRODUCT_FILE = "PRODUCT.yaml"
REQUIRED_METADATA = (
    "kubernetesVersion",
    "platformName",
    "platformVersion",
    "vendorName",
    "websiteUrl",
    "documentationUrl",
    "productLogoUrl",
    "description",
    "contactEmailAddress",
    "k8sConformanceUrl",
)
OPTIONAL_METADATA = ("repoUrl",)
HTTP_TIMEOUT_SECONDS = 20.0  # a documentation site slower than this would fail upstream too
_PATH_VERSION = re.compile(r"^v(\d+\.\d+)$")

Fetcher = Callable[[str], str | None]  # URL -> problem, or None when reachable


def revision(reqs: RequirementSet) -> str:
    """The verifier revision a version is checked against (for README.md)."""
    return UPSTREAM_REVISION + (f"; {hybrid.HYBRID_REVISION}" if reqs.hybrid else "")


@dataclass(frozen=True)
class VerifyResult:
    """Every problem found, sorted, and the warnings."""

    version: str
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)  # the leak scan's findings (aicr's own)

    @property
    def ok(self) -> bool:
        """True when the submission has no error of the upstream rules (leaks are apart)."""
        return not self.errors


def _snake(key: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower()


def version_from_path(path: Path) -> str | None:
    """The ``vX.Y`` component nearest the end of ``path``, as upstream reads it."""
    for part in reversed(path.resolve().parts):
        match = _PATH_VERSION.match(part)
        if match:
            return match[1]
    return None


def verify(
    directory: Path,
    *,
    version: str | None,
    online: bool = False,
    members: set[str] | None = None,
    fetch: Fetcher | None = None,
    allow_simulated: bool = False,
    known: list[str] | None = None,
) -> VerifyResult:
    """Verify a submission directory; the version comes from a ``vX.Y`` path part or the flag."""
    reqs = requirements_for(directory, version)
    if online and fetch is None:
        fetch = http_fetcher()
    result = check_directory(
        directory,
        reqs,
        fetch=fetch if online else None,
        members=members,
        allow_simulated=allow_simulated,
    )
    result.leaks.extend(str(leak) for leak in leaks.scan(directory, known))
    return result


def requirements_for(directory: Path, version: str | None) -> RequirementSet:
    """The requirement set ``directory`` is checked against; InputError when it cannot be told."""
    if not directory.is_dir():
        raise InputError(Problem("not a directory", source=str(directory)))
    from_path = version_from_path(directory)
    flag = major_minor(version) if version else None
    if version and flag is None:
        raise FlagConflictError(Problem(f"--cncf-version: '{version}' is not X.Y"))
    if from_path and flag and from_path != flag:
        raise FlagConflictError(
            Problem(
                f"--cncf-version {flag} contradicts the directory's path (v{from_path})",
                source=str(directory),
            )
        )
    chosen = from_path or flag
    if chosen is None:
        raise InputError(
            Problem(
                "cannot tell the conformance version",
                source=str(directory),
                hint="place the directory under vX.Y/ as upstream expects, or pass "
                "--cncf-version X.Y",
            )
        )
    return load_requirements(chosen)


def check_directory(
    directory: Path,
    reqs: RequirementSet,
    *,
    fetch: Fetcher | None = None,
    members: set[str] | None = None,
    allow_simulated: bool = False,
) -> VerifyResult:
    """Apply every rule for ``reqs.version`` to the submission in ``directory``.

    A simulated submission (its PRODUCT.yaml carries ``SIMULATED_MARK``) is an error unless
    ``allow_simulated``: it was rendered for a demo and must never be submitted.
    """
    product = directory / PRODUCT_FILE
    errors: list[str] = []
    warnings: list[str] = []

    def err(where: str, problem: str) -> None:
        errors.append(
            f"{PRODUCT_FILE}: {where}: {problem}" if where else f"{PRODUCT_FILE}: {problem}"
        )

    if not product.is_file():
        err("", "not found; the validator reads only vX.Y/<dir>/PRODUCT.yaml")
        return VerifyResult(reqs.version, errors)
    try:
        text = sources.read(str(product), kind=Kind.PRODUCT)
        data = yaml_io.parse(text, PRODUCT_FILE, loader=_UniqueKeyLoader).data
    except BoundExceededError:
        raise  # refused as input (exit 2), not judged as a submission
    except FileFormatError as exc:
        err("", "; ".join(p.problem for p in exc.problems))
        return VerifyResult(reqs.version, errors)
    decoded = _decode(data)
    if isinstance(decoded, str):
        # a type mismatch in the spec breaks decoding of the whole file upstream
        err("", f"cannot be decoded: {decoded}")
        return VerifyResult(reqs.version, errors)
    metadata, spec = decoded
    if SIMULATED_MARK in text and not allow_simulated:
        err(
            "",
            "the submission was rendered from a simulated cluster (KWOK nodes) for a demo; "
            "it is no evidence of a real platform (pass --allow-simulated to check it anyway)",
        )
    _check_metadata(metadata, err, fetch, members)
    cache = hybrid.ArtifactCache(directory)
    for req in reqs.requirements:
        items = spec.get(req.category)
        if items is None:
            err(f"spec.{req.category}", "category is missing")
            continue
        item = items.get(req.id)
        if item is None:
            err(f"spec.{req.category}", f"requirement '{req.id}' is missing")
            continue
        where = f"spec.{req.category}.{req.id}"
        status, notes, evidence = item["status"], item["notes"], item["evidence"]
        if req.level == Level.SHOULD and status == "" and not evidence:
            continue  # upstream skips an untouched SHOULD entirely
        if status not in PRODUCT_STATUSES:
            err(f"{where}.status", f"'{status}' is not one of " + ", ".join(PRODUCT_STATUSES))
        elif req.level == Level.MUST and status != "Implemented":
            if status == "N/A" and notes.strip() and req.conditional:
                warnings.append(
                    f"{PRODUCT_FILE}: {where}: N/A on a conditional MUST is accepted with "
                    f"notes (FAQ), but {UPSTREAM_REVISION} rejects it"
                )
            else:
                err(f"{where}.status", f"a MUST requirement must be Implemented, got '{status}'")
        if status == "N/A" and not notes.strip():
            err(f"{where}.notes", "N/A needs notes saying why the requirement does not apply")
        for i, entry in enumerate(evidence):
            for problem in _check_evidence(entry, directory, reqs, cache, fetch):
                err(f"{where}.evidence[{i}]", problem)
    if reqs.hybrid:
        errors.extend(f"{PRODUCT_FILE}: {p}" for p in hybrid.check_agreement(cache))
    return VerifyResult(reqs.version, sorted(set(errors)), warnings)


Item = dict[str, Any]


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that refuses a key twice in one mapping, naming it and its line.

    The upstream validator cannot load such a file; a lenient loader would keep the last.
    """

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"duplicate key '{key}' (line {key_node.start_mark.line + 1}); upstream "
                    "cannot load a file with one",
                    None,
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _decode(data: Any) -> tuple[dict[str, Any], dict[str, dict[str, Item]]] | str:
    """Decode like a typed unmarshal: metadata stays generic, the spec must fit its types."""
    if not isinstance(data, dict):
        return "the top level is not a mapping"
    metadata = data.get("metadata")
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        return "metadata: expected a mapping"
    spec = data.get("spec") or {}
    if not isinstance(spec, dict):
        return "spec: expected a mapping of categories"
    out: dict[str, dict[str, Item]] = {}
    for category, items in spec.items():
        if items is None:
            items = []
        if not isinstance(items, list):
            return f"spec.{category}: expected a list, got {_kind(items)}"
        decoded: dict[str, Item] = {}
        for i, item in enumerate(items):
            where = f"spec.{category}[{i}]"
            if not isinstance(item, dict):
                return f"{where}: expected a mapping, got {_kind(item)}"
            fields: Item = {}
            for key in ("id", "description", "level", "status", "notes"):
                value = item.get(key)
                if isinstance(value, (dict, list)):
                    return f"{where}.{key}: expected a string, got {_kind(value)}"
                fields[key] = "" if value is None else _scalar(value)
            evidence = item.get("evidence")
            if evidence is None:
                evidence = []
            if not isinstance(evidence, list):
                return f"{where}.evidence: expected a list of strings, got {_kind(evidence)}"
            for j, entry in enumerate(evidence):
                if isinstance(entry, (dict, list)):
                    return f"{where}.evidence[{j}]: expected a string, got {_kind(entry)}"
            fields["evidence"] = ["" if e is None else _scalar(e) for e in evidence]
            decoded[fields["id"]] = fields  # a duplicate id: the last one wins, as upstream
        out[str(category)] = decoded
    return metadata, out


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _kind(value: Any) -> str:
    if isinstance(value, str):
        return f"a string ('{value}')"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _check_metadata(
    metadata: dict[str, Any],
    err: Callable[[str, str], None],
    fetch: Fetcher | None,
    members: set[str] | None,
) -> None:
    values: dict[str, str] = {}
    for key in REQUIRED_METADATA + OPTIONAL_METADATA:
        present = key if key in metadata else _snake(key) if _snake(key) in metadata else None
        where = f"metadata.{present or key}"
        if present is None:
            if key in REQUIRED_METADATA:
                err(where, "required field is missing")
            continue
        value = metadata[present]
        if not isinstance(value, str):
            err(where, f"must be a string, got {_kind(value)}; quote the value")
        elif not value.strip():
            err(where, "must not be empty")
        elif is_placeholder(value):
            err(where, f"'{value}' is a template placeholder")
        else:
            values[key] = value
    url = values.get("k8sConformanceUrl")
    if url is not None and not K8S_CONFORMANCE_URL.match(url):
        err(
            "metadata.k8sConformanceUrl",
            f"'{url}' does not match https://github.com/cncf/k8s-conformance/tree/"
            "(master|main)/vX.Y/<dir>",
        )
    if members is not None and "vendorName" in values and values["vendorName"] not in members:
        err("metadata.vendorName", f"'{values['vendorName']}' is not a CNCF member name")
    if fetch is not None:
        for key, value in values.items():
            if value.startswith("http"):
                problem = fetch(value)
                if problem:
                    err(f"metadata.{key}", f"'{value}' {problem}")


def _check_evidence(
    entry: str,
    directory: Path,
    reqs: RequirementSet,
    cache: hybrid.ArtifactCache,
    fetch: Fetcher | None,
) -> list[str]:
    if entry.startswith(("http://", "https://")):
        problem = fetch(entry) if fetch else None
        return [f"'{entry}' {problem}"] if problem else []
    if reqs.hybrid and entry.startswith(hybrid.FILE_SCHEME):
        return hybrid.check_reference(entry, cache)
    if not entry:
        return []  # upstream skips an empty entry
    if entry.startswith("/"):
        return [f"'{entry}' is not a relative path or an http(s) URL"]
    path = (directory / entry).resolve()
    if not path.is_relative_to(directory.resolve()):
        return [f"'{entry}' points outside the submission directory"]
    if not path.exists():
        return [
            f"'{entry}' does not exist (local evidence is a path relative to "
            "the PRODUCT.yaml folder)"
        ]
    return []


def http_fetcher() -> Fetcher:
    """HEAD (then GET) each URL once, remembering every answer for the next submissions."""
    import httpx

    client = httpx.Client(timeout=HTTP_TIMEOUT_SECONDS, follow_redirects=True)
    seen: dict[str, str | None] = {}

    def fetch(url: str) -> str | None:
        if url not in seen:
            seen[url] = _reach(client, url)
        return seen[url]

    return fetch


def _reach(client: Any, url: str) -> str | None:
    import httpx

    try:
        response = client.head(url)
        if response.status_code < 400:
            return None
        response = client.get(url)
    except httpx.HTTPError as exc:
        return f"is unreachable ({type(exc).__name__})"
    return None if response.status_code < 400 else f"is unreachable (HTTP {response.status_code})"


def read_members(ref: str) -> set[str]:
    """CNCF member names from a file or URL: one per line, or a JSON list of strings."""
    text = sources.read(ref, kind=Kind.MEMBERS)
    stripped = text.strip()
    if stripped.startswith("["):
        names = json_io.parse(stripped, ref)
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise InputError(Problem("expected a JSON list of member names", source=ref))
        return {n.strip() for n in names if n.strip()}
    return {line.strip() for line in text.splitlines() if line.strip()}
