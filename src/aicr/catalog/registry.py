"""Finds a check's code by its catalog name: ``aicr.checks.<phase>.<name_with_underscores>``.

Only phase folders are searched, so the shared helpers directly under
``aicr/checks/`` (``probes``, ``smi_probes``, ``components``...) are never taken
for a check, and every module in a phase folder is a check (a unit test holds
that). The modules are imported by name, so the catalog never imports the
checks package itself (docs/development.md, "Layers").
"""

from __future__ import annotations

import importlib
from typing import Any

from aicr.catalog.model import CheckSpec


def module_name(spec: CheckSpec) -> str:
    """The module that implements ``spec``."""
    return f"aicr.checks.{spec.phase.value}.{spec.name.replace('-', '_')}"


def check_module(spec: CheckSpec) -> Any:
    """The module that implements ``spec``, or None when it does not exist (yet)."""
    name = module_name(spec)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name == name:  # the module itself is absent; a broken import must surface
            return None
        raise
