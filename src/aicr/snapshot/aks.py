"""AKS GPU pools: the driver mode of every GPU node pool, projected from a pool dump.

AKS decides who installs the NVIDIA driver per node pool (``gpuProfile.driver``),
and that is not visible from inside the cluster. The user hands us what
``az aks nodepool list -o json`` wrote on their machine (the file never enters the
cluster), and one reading records it: ``K8s.aks-gpu-pools.gpu-driver``.

| GPU pools (``vmSize`` an N-series GPU size)                | ``gpu-driver`` |
|------------------------------------------------------------|----------------|
| any has ``gpuProfile.nvidia.managementMode: Managed``      | ``Managed``    |
| every one ``gpuProfile.driver: Install``, or none set      | ``Install``    |
| every one ``gpuProfile.driver: None``                      | ``None``       |
| some Install (or unset), some None                         | ``Mixed``      |
| no GPU pool in the dump                                    | not recorded   |

``Mixed`` and ``Managed`` fail any constraint on the reading, whatever its
expression (``qualify``): neither state lets one recipe describe the GPU nodes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from aicr import json_io, sources
from aicr.constraints import ConstraintResult, Verdict
from aicr.errors import FileFormatError, Problem
from aicr.limits import Kind
from aicr.snapshot.model import Measurement, MeasurementType, Snapshot, Subtype

SUBTYPE = "aks-gpu-pools"
READING = f"K8s.{SUBTYPE}.gpu-driver"
DRIVER_KEY = "gpu-driver"
# Azure's N-series: NC (compute), ND (deep learning), NG and NV (visualization) sizes.
GPU_SIZE = re.compile(r"^standard_n[cdgv]", re.IGNORECASE)
DRIVER_MODES = ("Install", "None")
UNQUALIFIED = {
    "Mixed": "the GPU pools disagree on who installs the driver",
    "Managed": "AKS manages the GPU stack of a pool (gpuProfile.nvidia.managementMode: "
    "Managed), so the recipe's GPU components are not what runs there",
}
MISSING = "reading unavailable — recapture the snapshot with the pool dump"


@dataclass(frozen=True)
class Pool:
    """One node pool as the dump describes it."""

    name: str
    vm_size: str
    driver: str | None  # gpuProfile.driver; None when not set
    managed: bool  # gpuProfile.nvidia.managementMode == Managed

    @property
    def is_gpu(self) -> bool:
        """Whether the pool's VM size is an N-series GPU size."""
        return bool(GPU_SIZE.match(self.vm_size))


def _field(value: Any, path: str, source: str, expected: str) -> Problem:
    return Problem(f"got {value!r}", source=source, field_path=path, hint=f"expected {expected}")


def parse_pools(text: str, source: str) -> list[Pool]:
    """Parse ``az aks nodepool list -o json`` output; every problem is bad input (exit 2)."""
    data = json_io.parse(text, source, hint="expected `az aks nodepool list -o json`")
    if not isinstance(data, list):
        raise FileFormatError(_field(type(data).__name__, "(top level)", source, "a JSON list"))
    pools, problems = [], []
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            problems.append(_field(item, f"[{i}]", source, "a node pool object"))
            continue
        name, size = item.get("name"), item.get("vmSize")
        for key, value in (("name", name), ("vmSize", size)):
            if not isinstance(value, str) or not value:
                problems.append(_field(value, f"[{i}].{key}", source, "a non-empty string"))
        profile = item.get("gpuProfile")
        if profile is None:
            profile = {}
        if not isinstance(profile, dict):
            problems.append(_field(profile, f"[{i}].gpuProfile", source, "an object or null"))
            continue
        driver = profile.get("driver")
        if driver is not None and driver not in DRIVER_MODES:
            problems.append(
                _field(driver, f"[{i}].gpuProfile.driver", source, "Install, None or absent")
            )
        nvidia = profile.get("nvidia") or {}
        if not isinstance(nvidia, dict):
            problems.append(_field(nvidia, f"[{i}].gpuProfile.nvidia", source, "an object"))
            continue
        mode = nvidia.get("managementMode")
        if mode is not None and not isinstance(mode, str):
            problems.append(
                _field(mode, f"[{i}].gpuProfile.nvidia.managementMode", source, "a string")
            )
        if isinstance(name, str) and isinstance(size, str):
            pools.append(Pool(name, size, driver, mode == "Managed"))
    if problems:
        raise FileFormatError(problems)
    return pools


def load_pools(path: str, flag: str = "--aks-gpu-pools") -> list[Pool]:
    """Read and parse the pool dump at ``path``."""
    return parse_pools(read_pools(path, flag), path)


def read_pools(path: str, flag: str = "--aks-gpu-pools") -> str:
    """The text of the pool dump at ``path``, within its size cap; errors name ``flag``."""
    try:
        return sources.read(path, kind=Kind.AKS_POOLS)
    except FileFormatError as exc:
        raise FileFormatError(
            [replace(p, problem=f"{flag}: {p.problem}") for p in exc.problems]
        ) from None


def gpu_driver(pools: list[Pool]) -> str | None:
    """The projected driver mode of the GPU pools (the module's table); None without any."""
    gpu = [p for p in pools if p.is_gpu]
    if not gpu:
        return None
    if any(p.managed for p in gpu):
        return "Managed"
    modes = {p.driver or "Install" for p in gpu}  # unset is AKS's default: Install
    return modes.pop() if len(modes) == 1 else "Mixed"


def subtype(pools: list[Pool]) -> Subtype:
    """The ``K8s.aks-gpu-pools`` readings: the mode and each GPU pool's own setting."""
    gpu = [p for p in pools if p.is_gpu]
    data: dict[str, str | int | float | bool | None] = {"gpu-pools": len(gpu)}
    driver = gpu_driver(pools)
    if driver is not None:
        data[DRIVER_KEY] = driver
    for p in gpu:
        data[f"pool.{p.name}"] = "Managed" if p.managed else (p.driver or "Install")
    return Subtype(subtype=SUBTYPE, data=data)


def project(snapshot: Snapshot, pools: list[Pool]) -> Snapshot:
    """``snapshot`` with its ``K8s.aks-gpu-pools`` subtype set from ``pools`` (replaced if any)."""
    fresh = subtype(pools)
    measurements, placed = [], False
    for m in snapshot.measurements:
        if m.type == MeasurementType.K8S and not placed:
            kept = [s for s in m.subtypes if s.subtype != SUBTYPE]
            measurements.append(m.model_copy(update={"subtypes": [*kept, fresh]}))
            placed = True
        else:
            measurements.append(m)
    if not placed:
        measurements.append(Measurement(type=MeasurementType.K8S, subtypes=[fresh]))
    return snapshot.model_copy(update={"measurements": measurements})


def qualify(result: ConstraintResult, snapshot: Snapshot) -> ConstraintResult:
    """Apply the AKS rules to a constraint on ``READING``; other constraints pass through.

    A missing reading says how to get it; ``Mixed`` and ``Managed`` fail whatever the
    expression, naming what each GPU pool is set to.
    """
    if result.name != READING:
        return result
    if result.verdict == Verdict.MISSING:
        pools = snapshot.reading(f"K8s.{SUBTYPE}.gpu-pools")
        why = (
            "the pool dump lists no GPU pool (no N-series vmSize)"
            if pools == 0
            else f"{MISSING} (aicr snapshot --aks-gpu-pools pools.json, the file "
            "`az aks nodepool list -o json` writes)"
        )
        return replace(result, message=why)
    if result.actual in UNQUALIFIED:
        return replace(
            result,
            verdict=Verdict.FAILED,
            message=f"AKS GPU pools are {result.actual} ({_pool_states(snapshot)}): "
            f"{UNQUALIFIED[result.actual]}; recipe qualification fails closed",
        )
    return result


def _pool_states(snapshot: Snapshot) -> str:
    for m in snapshot.measurements:
        for sub in m.subtypes:
            if m.type == MeasurementType.K8S and sub.subtype == SUBTYPE:
                states = [
                    f"{k.removeprefix('pool.')}: {v}"
                    for k, v in sub.data.items()
                    if k.startswith("pool.")
                ]
                return ", ".join(states) or "no pool detail recorded"
    return "no pool detail recorded"
