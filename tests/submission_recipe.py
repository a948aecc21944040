"""The submission recipe the tests run, its conformance checks derived from the catalog.

tests/data/recipes/submission.yaml holds what is fixed: constraints, components, the
deployment phase and the conformance checks planned beside the ones MUSTs need
(platform-health, backing nothing; driver-runtime-management, a SHOULD's). The checks
each MUST of the version needs, less the MUSTs tests/data/configs/vendor.yaml declares
N/A, are added here from the requirement set, which reads them from the catalog. So a
check that comes to back a MUST is planned by every submission test, and no test data
is edited for it.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from aicr.cncf.requirements import Level, load_requirements

DATA = Path(__file__).parent / "data"
BASE = DATA / "recipes" / "submission.yaml"
VENDOR = DATA / "configs" / "vendor.yaml"
VERSION = "1.35"  # the Kubernetes minor of tests/data/snapshots/ok.yaml


def _not_applicable() -> list[str]:
    config: dict[str, Any] = yaml.safe_load(VENDOR.read_text())
    return list(config["spec"]["validate"]["evidence"]["cncf"].get("notApplicable") or {})


def conformance_checks(version: str = VERSION, extra: Iterable[str] = ()) -> list[str]:
    """The base recipe's conformance checks, ``extra``, and every check a MUST needs.

    Ordered by the first requirement each backs, in template order (checks backing
    none first), as a recipe author would list them.
    """
    reqs = load_requirements(version)
    na = set(_not_applicable())
    base: dict[str, Any] = yaml.safe_load(BASE.read_text())
    needed = [
        c
        for r in reqs.requirements
        if r.level == Level.MUST and r.id not in na
        for c in r.checks
    ]
    names = dict.fromkeys([*base["validation"]["conformance"]["checks"], *extra, *needed])
    first = {}
    for i, req in enumerate(reqs.requirements):
        for check in req.checks:
            first.setdefault(check, i)
    return sorted(names, key=lambda n: first.get(n, -1))


def recipe_text(version: str = VERSION, extra: Iterable[str] = ()) -> str:
    """The submission recipe: the base file with the derived conformance checks."""
    recipe: dict[str, Any] = yaml.safe_load(BASE.read_text())
    recipe["validation"]["conformance"]["checks"] = conformance_checks(version, extra)
    return yaml.safe_dump(recipe, sort_keys=False)


def write(folder: Path, version: str = VERSION, extra: Iterable[str] = ()) -> Path:
    """Write the submission recipe to ``folder/submission.yaml``."""
    path = folder / "submission.yaml"
    path.write_text(recipe_text(version, extra))
    return path


@functools.cache
def path() -> str:
    """The submission recipe as a file of this test process, removed when it exits."""
    folder = Path(tempfile.mkdtemp(prefix="aicr-submission-recipe-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return str(write(folder))
