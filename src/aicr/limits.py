"""The bounds every input is read under: size per kind, fetch deadline, YAML/JSON structure.

Inputs may come from someone else (a nightly pipeline reads a URL another team
writes), so each loader refuses what would hang or exhaust the runner before
parsing it. Each bound has a default here, an environment variable
(``AICR_LIMIT_<NAME>``) and the root flag ``aicr --limit NAME=VALUE``; the flag
wins over the environment, which wins over the default.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from enum import StrEnum

from aicr import durations
from aicr.errors import FlagConflictError, Problem

MIB = 1 << 20


class Kind(StrEnum):
    """What an input is; each kind has its own size cap."""

    RECIPE = "recipe"
    CONFIG = "config"
    SNAPSHOT = "snapshot"
    REPORT = "report"
    AKS_POOLS = "aks-pools"
    VALUES = "values"
    ATTESTATION = "attestation"
    KEY = "key"
    PRODUCT = "product"
    ARTIFACT = "artifact"
    MEMBERS = "members"
    KNOWN = "known"
    RUN_INPUT = "run-input"


@dataclass(frozen=True)
class Bound:
    """One bound: its name (``--limit NAME=``), default, unit and what it covers."""

    name: str
    default: float
    unit: str  # "bytes", "seconds" or "count"
    covers: str

    @property
    def env(self) -> str:
        """The environment variable that changes it."""
        return "AICR_LIMIT_" + self.name.upper().replace("-", "_")

    def show(self, value: float) -> str:
        """``16 MiB``, ``30s`` or ``100``."""
        if self.unit == "bytes":
            return show_size(int(value))
        if self.unit == "seconds":
            return f"{value:g}s"
        return str(int(value))


_SIZES = {
    # Every AICR recipe, config and values file is a few KiB; 16 MiB leaves room for generated ones.
    Kind.RECIPE: (16 * MIB, "a recipe (-r)"),
    Kind.CONFIG: (16 * MIB, "a validate config (--config)"),
    Kind.VALUES: (16 * MIB, "a Helm values file under --data"),
    # A snapshot lists every node; 64 MiB holds thousands of them.
    Kind.SNAPSHOT: (64 * MIB, "a snapshot (--snapshot)"),
    # A report holds every check's evidence and stdout lines.
    Kind.REPORT: (64 * MIB, "a CTRF report read back (evidence render --report)"),
    Kind.AKS_POOLS: (16 * MIB, "the AKS node-pool dump (--aks-gpu-pools)"),
    Kind.ATTESTATION: (16 * MIB, "an attestation envelope (--attestation)"),
    Kind.KEY: (1 * MIB, "a PEM key file (--key, --attestation-key)"),
    Kind.PRODUCT: (16 * MIB, "a submission's PRODUCT.yaml (evidence verify)"),
    # conformance e2e logs run to hundreds of MiB on big clusters
    Kind.ARTIFACT: (256 * MIB, "a file of a submission: e2e log, JUnit, page (evidence verify)"),
    Kind.MEMBERS: (16 * MIB, "the CNCF member list (--members)"),
    Kind.KNOWN: (16 * MIB, "the list of known secret values (evidence verify --known)"),
    # A check pod's run ConfigMap is under 1 MiB (the API server's object limit).
    Kind.RUN_INPUT: (16 * MIB, "a check pod's run input (/etc/aicr/run)"),
}

BOUNDS: dict[str, Bound] = {
    **{k.value: Bound(k.value, size, "bytes", covers) for k, (size, covers) in _SIZES.items()},
    # connect, redirects and the whole body: a per-read timeout alone lets a trickle run forever
    "fetch-deadline": Bound(
        "fetch-deadline", 30.0, "seconds", "a whole URL or ConfigMap read (connect and body)"
    ),
    # AICR's recipes nest about 10 deep; Helm values rarely pass 20.
    "depth": Bound("depth", 100, "count", "nesting of YAML and JSON collections"),
    # AICR's recipes use no aliases; values files use a few small anchors.
    "alias-nodes": Bound(
        "alias-nodes", 100_000, "count", "YAML nodes that aliases add when expanded"
    ),
}

_overrides: dict[str, float] = {}

_SIZE = re.compile(r"(\d+)\s*(B|KiB|MiB|GiB|KB|MB|GB)?", re.IGNORECASE)
_UNITS = {"b": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30}
_UNITS |= {"kb": 1000, "mb": 1000**2, "gb": 1000**3}


def show_size(size: int) -> str:
    """``16777216`` -> ``16 MiB``; exact sizes below 1 KiB in bytes."""
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    if size >= 1 << 20:
        return f"{size / (1 << 20):.1f} MiB"
    return f"{size} bytes"


def _parse(bound: Bound, text: str) -> float:
    """The value of ``text`` for ``bound``; ValueError saying what was expected."""
    if bound.unit == "bytes":
        match = _SIZE.fullmatch(text.strip())
        if not match:
            raise ValueError(f"invalid size '{text}' (expected e.g. 16MiB, 500KiB, 1048576)")
        value: float = int(match.group(1)) * _UNITS[(match.group(2) or "b").lower()]
    elif bound.unit == "seconds":
        value = durations.parse(text).total_seconds()
    else:
        if not text.strip().isdigit():
            raise ValueError(f"invalid count '{text}' (expected a whole number)")
        value = int(text)
    if value <= 0:
        raise ValueError(f"'{text}' must be above zero")
    return value


def override(pairs: tuple[str, ...] | list[str]) -> None:
    """Apply ``--limit NAME=VALUE`` pairs for the rest of the process (exit 2 when malformed)."""
    parsed: dict[str, float] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        bound = BOUNDS.get(name.strip())
        if not sep or bound is None:
            raise FlagConflictError(
                Problem(
                    f"--limit {pair}: expected NAME=VALUE",
                    hint="NAME is one of " + ", ".join(BOUNDS),
                )
            )
        try:
            parsed[bound.name] = _parse(bound, text)
        except ValueError as exc:
            raise FlagConflictError(Problem(f"--limit {pair}: {exc}")) from None
    _overrides.clear()
    _overrides.update(parsed)


def value(name: str) -> float:
    """The bound in force: ``--limit``, then ``$AICR_LIMIT_<NAME>``, then the default."""
    bound = BOUNDS[name]
    if name in _overrides:
        return _overrides[name]
    text = os.environ.get(bound.env)
    if text is None or not text.strip():
        return bound.default
    try:
        return _parse(bound, text)
    except ValueError as exc:
        raise FlagConflictError(Problem(f"${bound.env}: {exc}")) from None


def size_cap(kind: Kind) -> int:
    """The size cap in bytes of inputs of ``kind``."""
    return int(value(kind.value))


def count(name: str) -> int:
    """A count bound (``depth``, ``alias-nodes``)."""
    return int(value(name))


def how_to_change(name: str) -> str:
    """The hint every refusal carries."""
    return f"change it with --limit {name}=VALUE or ${BOUNDS[name].env}"
