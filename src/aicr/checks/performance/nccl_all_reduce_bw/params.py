"""nccl-all-reduce-bw: its params and preflight, read by the orchestrator before any Job.

Loaded by ``aicr.catalog.registry.declaration`` without the check's package, so it
imports shared modules only, never its own package.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, field_validator

from aicr.catalog.params import CheckParams
from aicr.constraints import parse_gate
from aicr.errors import InputError, Problem
from aicr.phases import Phase
from aicr.recipe.model import Recipe

CONSTRAINT = "nccl-all-reduce-bw"
# Open MPI in the pinned image (its Dockerfile: ``OPAL_PREFIX=/opt/amazon/openmpi``). Called
# by path, mpirun takes its own prefix for the remote daemons (as ``--prefix``), which a
# non-login ssh shell on a worker would not otherwise find.
MPIRUN = "/opt/amazon/openmpi/bin/mpirun"

IMAGE_PATH = (
    "/opt/amazon/openmpi/bin:/opt/nccl-tests/build:/opt/amazon/efa/bin:"
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
)

SIZE = r"^[0-9]+[KMG]?$"

# What Pod Security baseline lets a container add (the workload namespace's default level).
BASELINE_CAPABILITIES = (
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
)

# What an RDMA fabric may add beyond baseline: IPC_LOCK pins the memory that InfiniBand
# verbs and EFA register. Pod Security has no level between baseline and privileged, so
# asking for it labels the run's workload namespace privileged; the pods stay unprivileged.
FABRIC_CAPABILITIES = ("IPC_LOCK",)


class Params(CheckParams):
    """``spec.validate.checks.nccl-all-reduce-bw.params``."""

    path: str = Field(
        default=IMAGE_PATH,
        min_length=1,
        description="PATH in the image: where mpirun, sshd and all_reduce_perf are.",
    )
    mpirun: str = Field(
        default=MPIRUN,
        pattern=r"^/",
        description="mpirun's absolute path in the image (Open MPI then finds its remote "
        "daemons under the same prefix).",
    )
    min_bytes: str = Field(default="8", pattern=SIZE, description="Smallest message (-b).")
    max_bytes: str = Field(
        default="16G",
        pattern=SIZE,
        description="Largest message (-e); the gate is read at this size.",
    )
    max_nodes: int | None = Field(
        default=None, ge=2, description="Use at most this many GPU nodes."
    )
    env: dict[str, str] = Field(
        default_factory=dict,
        description="Fabric environment (NCCL_*, FI_*, UCX_*), forwarded by mpirun.",
    )
    capabilities: list[str] = Field(
        default_factory=list,
        description="Capabilities added to the workers: those Pod Security baseline allows, "
        "and IPC_LOCK (RDMA memory registration), which makes the workload namespace privileged.",
    )
    resources: dict[str, str] = Field(
        default_factory=dict,
        description="Extra per-worker resources (e.g. vpc.amazonaws.com/efa: '32').",
    )
    worker_start_seconds: float = Field(
        default=600, gt=0, description="How long the workers may take to start."
    )
    run_seconds: float = Field(
        default=1200, gt=0, description="How long the launcher may take to finish the test."
    )

    @field_validator("capabilities")
    @classmethod
    def _allowed(cls, caps: list[str]) -> list[str]:
        allowed = (*BASELINE_CAPABILITIES, *FABRIC_CAPABILITIES)
        names = [c.upper().removeprefix("CAP_") for c in caps]
        refused = [c for c, n in zip(caps, names, strict=True) if n not in allowed]
        if refused:
            raise ValueError(
                f"{', '.join(refused)}: not a capability an NCCL fabric needs (aicr never "
                f"grants privileged containers); allowed: {', '.join(allowed)}"
            )
        return list(dict.fromkeys(names))

    def workload_pod_security(self) -> str | None:
        """``privileged`` when a capability is outside baseline (IPC_LOCK), else the default."""
        return "privileged" if set(self.capabilities) - set(BASELINE_CAPABILITIES) else None

    @field_validator("env")
    @classmethod
    def _names(cls, env: dict[str, str]) -> dict[str, str]:
        bad = [k for k in env if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k)]
        if bad:
            raise ValueError(f"not an environment variable name: {', '.join(bad)}")
        return env


def constraint_value(recipe: Recipe) -> Any:
    """The recipe's ``nccl-all-reduce-bw`` constraint value, or None when it has none."""
    section = recipe.validation.phase(Phase.PERFORMANCE) if recipe.validation else None
    found = next(
        (c for c in (section.constraints if section else None) or [] if c.name == CONSTRAINT), None
    )
    return None if found is None else found.value


def preflight(recipe: Recipe, data_dir: str | None, source: str) -> None:
    """Refuse a constraint that is not ``OP NUMBER`` before any Job (exit 2)."""
    value = constraint_value(recipe)
    if value is not None:
        try:
            parse_gate(str(value))
        except ValueError as exc:
            raise InputError(
                Problem(
                    str(exc),
                    source=source,
                    field_path=f"validation.performance.constraints.{CONSTRAINT}",
                    hint="OP NUMBER in GB/s, e.g. '>= 150'",
                )
            ) from None
