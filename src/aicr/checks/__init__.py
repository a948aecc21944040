"""The checks: one module per check, grouped by phase, each ``run(ctx) -> CheckResult``.

This package's face: what every check imports (``CheckContext`` from
``aicr.checks.context``, ``CheckParams`` from ``aicr.catalog.params``).

A check talks to the cluster through ``CheckContext`` (``ctx.kube``: the REST
client with its own ServiceAccount's credentials; ``ctx.probes``: the session
for the workloads it creates), records what it asked and what came back as
evidence (``ctx.record``, ``with ctx.step(...)``), and returns passed, failed,
or skipped with a reason. Skips are for "does not apply here", never for
"could not find out". Adding a check means one package
``aicr/checks/<phase>/<name_with_underscores>/`` (its ``run``, and ``params.py``
when it has params or a preflight), one catalog entry, its tests and its docs
section; modules directly under ``aicr/checks/`` are shared helpers, never
checks. See docs/checks.md, "How to write a check".
"""

from aicr.catalog.params import CheckParams
from aicr.checks.context import CheckContext, InputsError, RunInputs, load_inputs

__all__ = ["CheckContext", "CheckParams", "InputsError", "RunInputs", "load_inputs"]
