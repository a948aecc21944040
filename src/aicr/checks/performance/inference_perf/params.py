"""inference-perf: its params and preflight, read by the orchestrator before any Job.

Loaded by ``aicr.catalog.registry.declaration`` without the check's package, so it
imports shared modules only, never its own package. What the preflight refuses is
here too: the recipe's inference gates, ``inference-throughput`` (tok/s) and
``inference-ttft-p99`` (ms), each a performance-phase constraint with its own
operator and number (``>= 50000``, ``<= 2000``), compared exactly (AICR's hidden
10% tolerance is not applied), with ``inference-model`` (a bare model id) naming what
the check deploys, as in AICR's recipes; and AICR's inference-perf knobs read from
the environment where ``aicr validate`` runs (``knobs`` resolves them against the
params in the pod).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from pydantic import Field, field_validator

from aicr import durations
from aicr.catalog.params import CheckParams
from aicr.constraints import NumberGate, parse_gate
from aicr.errors import InputError, Problem
from aicr.phases import Phase
from aicr.recipe.model import Recipe

READY_ENV = "AICR_INFERENCE_PERF_WORKLOAD_READY_TIMEOUT"
HEALTH_ENV = "AICR_INFERENCE_PERF_HEALTH_TIMEOUT"
STORAGE_CLASS_ENV = "AICR_INFERENCE_PERF_MODEL_CACHE_STORAGE_CLASS"
DURATIONS = {READY_ENV: "workloadReadyTimeout", HEALTH_ENV: "healthTimeout"}


def from_environment(environ: dict[str, str] | None = None) -> dict[str, Any]:
    """The knobs set in the environment, by param name; InputError on a malformed duration."""
    env = os.environ if environ is None else environ
    found: dict[str, Any] = {}
    problems = []
    for var, param in DURATIONS.items():
        raw = env.get(var, "").strip()
        if not raw:
            continue
        try:
            value = durations.parse(raw)
        except ValueError as exc:
            problems.append(Problem(str(exc), source=f"${var}"))
            continue
        found[param] = value.total_seconds()
    storage_class = env.get(STORAGE_CLASS_ENV, "").strip()
    if storage_class:
        found["modelCacheStorageClass"] = storage_class
    if problems:
        raise InputError(problems)
    return found


THROUGHPUT = "inference-throughput"
TTFT_P99 = "inference-ttft-p99"
MODEL = "inference-model"


@dataclass(frozen=True)
class Gate:
    """One gate: which constraint, its threshold, and the figure it judges."""

    constraint: str
    gate: NumberGate
    figure: str  # what is measured, for messages
    unit: str

    def judge(self, measured: float) -> tuple[bool, str]:
        """``(holds, why)`` for the measured figure."""
        holds = self.gate.holds(measured)
        verb = "meets" if holds else "misses"
        return (
            holds,
            f"{self.figure} {measured:.2f} {self.unit} {verb} {self.constraint} {self.gate}",
        )


FIGURES = {THROUGHPUT: ("output token throughput", "tok/s"), TTFT_P99: ("TTFT p99", "ms")}


def _constraints(recipe: Recipe) -> list[tuple[int, str, str]]:
    section = recipe.validation.phase(Phase.PERFORMANCE) if recipe.validation else None
    return [
        (i, c.name, str(c.value))
        for i, c in enumerate((section.constraints if section else None) or [])
    ]


def gates(recipe: Recipe, source: str) -> list[Gate]:
    """The recipe's inference gates, in file order; InputError naming a malformed one."""
    found, problems = [], []
    for i, name, value in _constraints(recipe):
        if name not in FIGURES:
            continue
        try:
            gate = parse_gate(value)
        except ValueError as exc:
            where = f"validation.performance.constraints[{i}].value"
            hint = "a comparison with a number, e.g. '>= 50000'"
            problems.append(Problem(str(exc), source=source, field_path=where, hint=hint))
            continue
        figure, unit = FIGURES[name]
        found.append(Gate(name, gate, figure, unit))
    if problems:
        raise InputError(problems)
    return found


def model(recipe: Recipe) -> str | None:
    """The model the recipe's ``inference-model`` constraint names, if any."""
    return next((v.strip() for _, n, v in _constraints(recipe) if n == MODEL and v.strip()), None)


HUB = "hub"  # the model source forms (source.py): the hub, a mirror, nothing downloaded
MIRROR = "mirror:"
OFFLINE = "offline"
HUB_URL = "https://huggingface.co"  # huggingface_hub's default HF_ENDPOINT
SOURCE_FORMS = f"{HUB}, {MIRROR}URL (http or https) or {OFFLINE}"


def model_source(value: str | None) -> tuple[str, str | None]:
    """``modelSource`` as (form, hub or mirror URL); ValueError naming the accepted forms."""
    raw = (value or HUB).strip()
    if raw == HUB:
        return HUB, HUB_URL
    if raw == OFFLINE:
        return OFFLINE, None
    if raw.startswith(MIRROR):
        url = raw[len(MIRROR) :].rstrip("/")
        parts = urlsplit(url)
        if parts.scheme in ("http", "https") and parts.netloc:
            return MIRROR, url
    raise ValueError(f"modelSource {value!r} is not one of {SOURCE_FORMS}")


class Params(CheckParams):
    """``spec.validate.checks.inference-perf.params``."""

    workload_ready_timeout: timedelta | None = Field(
        default=None,
        description="How long the serving stack may take to become ready (15m; "
        "$AICR_INFERENCE_PERF_WORKLOAD_READY_TIMEOUT wins).",
    )
    health_timeout: timedelta | None = Field(
        default=None,
        description="How long the ready endpoint may take to serve a first "
        "completion (5m; $AICR_INFERENCE_PERF_HEALTH_TIMEOUT wins).",
    )
    model_cache_storage_class: str | None = Field(
        default=None,
        min_length=1,
        description="StorageClass of the model cache volume (else an "
        "emptyDir; $AICR_INFERENCE_PERF_MODEL_CACHE_STORAGE_CLASS wins).",
    )
    model_cache_size: str = Field(default="100Gi", description="Size of the model cache claim.")
    model: str | None = Field(
        default=None,
        min_length=1,
        description="The model a deployed "
        "stack serves (the recipe's inference-model wins; Qwen/Qwen3-8B).",
    )
    model_source: str = Field(
        default=HUB,
        description="Where a deployed stack gets its model: hub (the Hugging Face hub, "
        "downloaded at run time), mirror:URL (a hub mirror the cluster reaches, as "
        "HF_ENDPOINT), or offline (HF_HUB_OFFLINE=1: the model is in the serving image or "
        "the model cache). hub and mirror are asked for the model before deploying.",
    )
    tokenizer: str | None = Field(
        default=None,
        min_length=1,
        description="The tokenizer in the load generator image's cache (default: the model).",
    )
    concurrency: int = Field(default=256, ge=1, description="Requests in flight.")
    requests: int | None = Field(
        default=None, ge=1, description="Measured requests (default max(1000, 8 x concurrency))."
    )
    warmup_requests: int | None = Field(
        default=None, ge=0, description="Unmeasured requests first (default: concurrency)."
    )
    input_tokens: int = Field(default=128, ge=1, description="Prompt length in tokens.")
    output_tokens: int = Field(default=128, ge=1, description="Output length in tokens.")

    @field_validator("workload_ready_timeout", "health_timeout", mode="before")
    @classmethod
    def _duration(cls, value: object) -> object:
        return durations.field(value)

    @field_validator("model_source")
    @classmethod
    def _source(cls, value: str) -> str:
        model_source(value)
        return value


def preflight(recipe: Recipe, data_dir: str | None, source: str) -> dict[str, Any]:
    """Refuse malformed gates and knobs before any Job; pass the environment's knobs on."""
    del data_dir
    gates(recipe, source)
    return {"env": from_environment()}
