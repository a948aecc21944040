"""Finds a check's code by its catalog name: ``aicr.checks.<phase>.<name_with_underscores>``."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from aicr.catalog import CheckSpec

if TYPE_CHECKING:
    from aicr.checks import CheckContext
    from aicr.result import CheckResult

CheckFn = Callable[["CheckContext"], "CheckResult"]


def module_name(spec: CheckSpec) -> str:
    """The module that implements ``spec``."""
    return f"aicr.checks.{spec.phase.value}.{spec.name.replace('-', '_')}"


def find(spec: CheckSpec) -> CheckFn | None:
    """The check's ``run`` function, or None when the check is not implemented yet."""
    name = module_name(spec)
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name == name:  # the module itself is absent; a broken import must surface
            return None
        raise
    fn: CheckFn | None = getattr(module, "run", None)
    return fn
