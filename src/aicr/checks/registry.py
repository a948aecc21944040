"""Finds a check's code by its catalog name: ``aicr.checks.<phase>.<name_with_underscores>``.

Only phase folders are searched, so the shared helpers directly under
``aicr/checks/`` (``probes``, ``gpu``, ``components``...) are never taken for a
check, and every module in a phase folder is a check (a unit test holds that).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aicr.catalog import CheckSpec

if TYPE_CHECKING:
    from aicr.checks import CheckContext, CheckParams
    from aicr.recipe.model import Recipe
    from aicr.result import CheckResult

CheckFn = Callable[["CheckContext"], "CheckResult"]
PreflightFn = Callable[["Recipe", "str | None", str], Any]


def module_name(spec: CheckSpec) -> str:
    """The module that implements ``spec``."""
    return f"aicr.checks.{spec.phase.value}.{spec.name.replace('-', '_')}"


def _module(spec: CheckSpec) -> Any:
    name = module_name(spec)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name == name:  # the module itself is absent; a broken import must surface
            return None
        raise


def find_preflight(spec: CheckSpec) -> PreflightFn | None:
    """The check's optional orchestrator-side ``preflight`` function."""
    fn: PreflightFn | None = getattr(_module(spec), "preflight", None)
    return fn


def find_params(spec: CheckSpec) -> type[CheckParams] | None:
    """The check's ``Params`` model, when it declares one."""
    model: type[CheckParams] | None = getattr(_module(spec), "Params", None)
    return model


def find(spec: CheckSpec) -> CheckFn | None:
    """The check's ``run`` function, or None when the check is not implemented yet."""
    fn: CheckFn | None = getattr(_module(spec), "run", None)
    return fn
