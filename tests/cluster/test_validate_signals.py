"""`aicr validate` as a user runs it: Ctrl-C, SIGTERM and --timeout end cleanly.

First signal: stop launching, clean up, write the partial report marked
interrupted, exit 130. --timeout: unfinished checks end `other`, exit 8. In
every case nothing carrying the run's label is left in the cluster.
"""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest
from harness import SimCluster
from runhelp import interrupted, remaining, start_validate

RECIPE = """
kind: RecipeResult
componentRefs:
  - {name: apiserver, namespace: kube-system}
validation:
  conformance:
    checks: [platform-health]
"""
CONFIG = """
kind: ValidateConfig
apiVersion: aicr.nvidia.com/v1alpha1
spec: {validate: {checks: {platform-health: {params: {aicrDelaySeconds: 120}}}}}
"""


def start(cluster: SimCluster, tmp_path: Path, *extra: str) -> subprocess.Popen[str]:
    return start_validate(cluster, tmp_path, RECIPE, CONFIG, *extra)


def wait_until_running(proc: subprocess.Popen[str]) -> list[str]:
    """Read progress lines until the check's pod runs (plain mode: one line per event)."""
    lines: list[str] = []
    assert proc.stderr is not None
    for line in proc.stderr:
        lines.append(line)
        if "platform-health" in line and "running" in line:
            return lines
    raise AssertionError("the check never started:\n" + "".join(lines))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_first_signal_cleans_up_and_writes_the_partial_report(
    cluster: SimCluster, tmp_path: Path, sig: signal.Signals
) -> None:
    proc = start(cluster, tmp_path)
    wait_until_running(proc)
    report = interrupted(proc, tmp_path, sig)
    assert report["results"]["tests"][0]["name"] == "platform-health"
    assert remaining(cluster, report["runId"]) == []


def test_run_timeout_ends_unfinished_checks_other(cluster: SimCluster, tmp_path: Path) -> None:
    proc = start(cluster, tmp_path, "--timeout", "8s")
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 8, err
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["extra"]["aicr"]["timedOut"] is True
    (test,) = report["results"]["tests"]
    assert test["status"] == "other"
    assert test["extra"]["statusDetail"] == "timeout"
    assert test["message"].startswith("the run's --timeout 8s expired")
    assert remaining(cluster, report["runId"]) == []
