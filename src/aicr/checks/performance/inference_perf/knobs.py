"""AICR's inference-perf knobs, honoured as environment variables or as the check's params.

``AICR_INFERENCE_PERF_WORKLOAD_READY_TIMEOUT`` (how long the serving stack may
take to become ready: a cold model load from a slow volume can exceed 10
minutes), ``AICR_INFERENCE_PERF_HEALTH_TIMEOUT`` (how long the ready endpoint
may take to serve its first completion) and
``AICR_INFERENCE_PERF_MODEL_CACHE_STORAGE_CLASS`` (the StorageClass of the
model cache volume). They are read where ``aicr validate`` runs, before any
Job (a malformed one exits 2 naming it), and win over the config's params.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from aicr import durations
from aicr.checks.performance.inference_perf.params import HEALTH_ENV, READY_ENV, STORAGE_CLASS_ENV

READY_DEFAULT = timedelta(minutes=15)
HEALTH_DEFAULT = timedelta(minutes=5)


@dataclass(frozen=True)
class Knobs:
    """The resolved waits (seconds) and cache class, with where each came from."""

    ready_seconds: float
    health_seconds: float
    storage_class: str | None
    sources: dict[str, str]

    @classmethod
    def resolve(cls, env: dict[str, Any], params: Any) -> Knobs:
        """Environment (as the preflight read it) over params over defaults."""
        sources: dict[str, str] = {}

        def pick(param: str, var: str, configured: Any, default: Any) -> Any:
            if param in env:
                sources[param] = f"${var}"
                return env[param]
            if configured is not None:
                sources[param] = f"params.{param}"
                return configured
            sources[param] = "default"
            return default

        ready = pick(
            "workloadReadyTimeout",
            READY_ENV,
            _seconds(params.workload_ready_timeout),
            READY_DEFAULT.total_seconds(),
        )
        health = pick(
            "healthTimeout",
            HEALTH_ENV,
            _seconds(params.health_timeout),
            HEALTH_DEFAULT.total_seconds(),
        )
        storage = pick(
            "modelCacheStorageClass", STORAGE_CLASS_ENV, params.model_cache_storage_class, None
        )
        return cls(float(ready), float(health), storage, sources)

    def __str__(self) -> str:
        return (
            f"workload ready timeout {durations.format(timedelta(seconds=self.ready_seconds))}"
            f" ({self.sources['workloadReadyTimeout']}), health timeout "
            f"{durations.format(timedelta(seconds=self.health_seconds))} "
            f"({self.sources['healthTimeout']}), model cache "
            + (
                f"StorageClass {self.storage_class} ({self.sources['modelCacheStorageClass']})"
                if self.storage_class
                else "emptyDir (no StorageClass set)"
            )
        )


def _seconds(value: timedelta | None) -> float | None:
    return value.total_seconds() if value is not None else None
