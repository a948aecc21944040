"""Finds a check's code by its catalog name: ``aicr.checks.<phase>.<name_with_underscores>``.

Only phase folders are searched, so the shared helpers directly under
``aicr/checks/`` (``probes``, ``smi_probes``, ``components``...) are never taken
for a check, and every module in a phase folder is a check (a unit test holds
that). The modules are imported by name, so the catalog never imports the
checks package itself (docs/development.md, "Layers").

A check has two sides. What runs in its pod (``run``) is the check module.
What the orchestrator reads before any Job, its ``Params`` model and optional
``preflight``, is ``params.py`` in the check's package (``declaration``): a run
plans every check of a recipe, and importing every check package for its params
cost a tenth of a second of each start-up (issue 34).
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

from aicr.catalog.model import CheckSpec

_LOADING = threading.RLock()


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


@functools.cache
def _checks_folder() -> Path:
    found = importlib.util.find_spec("aicr.checks")  # finds the folder; imports nothing of it
    assert found is not None and found.origin is not None
    return Path(found.origin).parent


def declaration(spec: CheckSpec) -> ModuleType | None:
    """The check's ``params.py`` (``Params``, ``preflight``), or None when it has none.

    It is loaded from its file without importing the check's package, and kept in
    ``sys.modules`` under its own dotted name, so the package, imported later (in the
    check's pod, or by a test), finds this same module and its one ``Params`` class.
    A declaration imports only shared modules, never its own package: the import-set
    test (tests/unit/cli/test_startup.py) fails on a plan that imports a check package.
    """
    name = f"{module_name(spec)}.params"
    with _LOADING:
        if name in sys.modules:
            return sys.modules[name]
        path = _checks_folder() / spec.phase.value / spec.name.replace("-", "_") / "params.py"
        found = importlib.util.spec_from_file_location(name, path)
        if not path.is_file() or found is None or found.loader is None:
            return None
        module = importlib.util.module_from_spec(found)
        sys.modules[name] = module
        try:
            found.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
        return module
