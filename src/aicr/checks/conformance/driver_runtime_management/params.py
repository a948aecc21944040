"""driver-runtime-management: its params and preflight, read by the orchestrator before any Job.

Loaded by ``aicr.catalog.registry.declaration`` without the check's package, so it
imports shared modules only, never its own package.
"""

from __future__ import annotations

from aicr.checks.allocation import preflight_mode

preflight = preflight_mode  # the whole-GPU mode, resolved like gpu-allocation-policy does
