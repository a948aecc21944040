"""Helpers for the executor's cluster tests: a RunContext on the sim, runs, leftovers."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

from harness import SimCluster

from aicr.catalog import load_catalog
from aicr.catalog.model import CheckSpec
from aicr.config import EMPTY_CONFIG
from aicr.kube import names
from aicr.kube.placement import TOLERATE_ALL, Placement
from aicr.kube.rest import KubeApi, credentials
from aicr.kube.target import KubeTarget
from aicr.plan import PlannedCheck
from aicr.recipe.load import parse_recipe
from aicr.result import CheckResult
from aicr.runner import cleanup
from aicr.runner.context import RunContext
from aicr.runner.events import Event

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = ROOT / "tests/data/snapshots/ok.yaml"
RECIPE = """
componentRefs:
  - name: kube-prometheus-stack
    namespace: monitoring
"""


def new_run_id() -> str:
    return "r" + secrets.token_hex(4)


def make_ctx(
    cluster: SimCluster,
    recipe: str = RECIPE,
    namespace: str | None = None,
    events: list[Event] | None = None,
    **overrides: Any,
) -> RunContext:
    run_id = overrides.pop("run_id", None) or new_run_id()
    sink = events.append if events is not None else (lambda e: None)
    fields: dict[str, Any] = {
        "run_id": run_id,
        "namespace": namespace or f"aicr-{run_id}-ns",
        "recipe": parse_recipe(recipe),
        "recipe_source": "test",
        "snapshot": None,
        "config": EMPTY_CONFIG,
        "kube": KubeTarget(str(cluster.kubeconfig)),
        "image": cluster.validator_image,
        "orchestrator": Placement(tolerations=TOLERATE_ALL),
        "events": sink,
        "cancel": threading.Event(),
    }
    fields.update(overrides)
    return RunContext(**fields)


def planned(name: str, timeout: timedelta | None = None, **spec_changes: Any) -> PlannedCheck:
    spec = load_catalog().get(name)
    assert spec is not None
    if spec_changes:
        spec = CheckSpec.model_validate({**spec.model_dump(), **spec_changes})
    return PlannedCheck(spec, timeout or spec.timeout)


def run_one(executor: Any, ctx: RunContext, check: PlannedCheck) -> tuple[CheckResult, list[str]]:
    """start, run one check, finish; the result and what finish says is left."""
    executor.start(ctx)
    try:
        result = executor.run(check, ctx)
    finally:
        left = executor.finish(ctx)
    return result, left


def remaining(cluster: SimCluster, run_id: str) -> list[str]:
    """Every object still carrying the run's label (namespaced kinds, cluster kinds, pods)."""
    with KubeApi(credentials(KubeTarget(str(cluster.kubeconfig)))) as api:
        return cleanup.remaining(api, names.run_selector(run_id))


def start_validate(
    cluster: SimCluster, tmp_path: Path, recipe: str, config: str, *extra: str
) -> subprocess.Popen[str]:
    """`aicr validate` as a user runs it, progress on stderr, the report in report.json."""
    (tmp_path / "recipe.yaml").write_text(recipe)
    (tmp_path / "config.yaml").write_text(config)
    cmd = [sys.executable, "-m", "aicr.cli.main", "validate", "-r", str(tmp_path / "recipe.yaml"),
           "-s", str(SNAPSHOT), "--config", str(tmp_path / "config.yaml"),
           "--kubeconfig", str(cluster.kubeconfig), "--image", cluster.validator_image,
           "-o", str(tmp_path / "report.json"), *extra]  # fmt: skip
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    return subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, env=env)


def interrupted(proc: subprocess.Popen[str], tmp_path: Path, sig: int = signal.SIGINT) -> Any:
    """Signal the run; once it ends, its report: exit 130, interrupted, one check `other`."""
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["extra"]["aicr"]["interrupted"] is True
    (test,) = report["results"]["tests"]
    assert (test["status"], test["extra"]["statusDetail"]) == ("other", "interrupted"), test
    return report
