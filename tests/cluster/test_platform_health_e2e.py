"""platform-health end to end: `aicr validate --phase conformance` on the simulated cluster."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from harness import SimCluster
from runhelp import remaining

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: operator}
spec:
  replicas: 1
  selector: {matchLabels: {app: operator}}
  template:
    metadata: {labels: {app: operator}}
    spec:
      containers: [{name: operator, image: registry.example/operator:v1}]
"""


def recipe(components: list[tuple[str, str]], expected: str = "") -> str:
    refs = "".join(f"  - name: {n}\n    namespace: {ns}\n{expected}" for n, ns in components)
    return (
        "kind: RecipeResult\napiVersion: aicr.nvidia.com/v1alpha1\n"
        f"componentRefs:\n{refs}"
        "validation:\n  conformance:\n    checks: [platform-health]\n"
    )


def validate(
    cluster: SimCluster, tmp_path: Path, recipe_text: str, *extra: str
) -> tuple[int, dict, str]:
    path = tmp_path / "recipe.yaml"
    path.write_text(recipe_text)
    out = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "aicr.cli.main", "validate", "--recipe", str(path),
         "--phase", "conformance", "--kubeconfig", str(cluster.kubeconfig),
         "--image", cluster.validator_image, "-o", str(out), *extra],
        capture_output=True, text=True, timeout=180, env={**os.environ},
    )  # fmt: skip
    report = json.loads(out.read_text()) if out.exists() else {}
    return proc.returncode, report, proc.stderr


@pytest.fixture
def healthy(cluster: SimCluster) -> str:
    ns = cluster.fresh_namespace("operator")
    cluster.apply(DEPLOYMENT, namespace=ns)
    apps = __import__("kubernetes").client.AppsV1Api(cluster.api())
    cluster.wait_for(
        lambda: (apps.read_namespaced_deployment(name="operator", namespace=ns).status
                 .available_replicas or 0) >= 1,
        timeout=60, message="operator deployment available",
    )  # fmt: skip
    return ns


def test_healthy_platform_passes(cluster: SimCluster, healthy: str, tmp_path: Path) -> None:
    code, report, err = validate(cluster, tmp_path, recipe([("operator", healthy)]))
    test = report["results"]["tests"][0]
    assert (code, test["status"]) == (0, "passed"), err + json.dumps(test)
    assert test["message"] == "1 components healthy: operator"
    assert test["extra"]["node"] in cluster.nodes
    run_id = report["extra"]["aicr"]["runId"]
    assert remaining(cluster, run_id) == []


def test_aicr_job_name_prefixes_every_object_of_a_passing_run(
    cluster: SimCluster, healthy: str, tmp_path: Path
) -> None:
    """AICR's --job-name: the check runs under names starting with it, and all is removed."""
    code, report, err = validate(cluster, tmp_path, recipe([("operator", healthy)]),
                                 "--job-name", "nightly")  # fmt: skip
    assert (code, report["results"]["tests"][0]["status"]) == (0, "passed"), err
    run_id = report["extra"]["aicr"]["runId"]
    assert run_id.startswith("nightly-r")
    assert remaining(cluster, run_id) == []


def test_broken_platform_fails_with_a_precise_message(
    cluster: SimCluster, healthy: str, tmp_path: Path
) -> None:
    text = recipe([("operator", healthy), ("cert-manager", "cert-manager-missing")])
    code, report, err = validate(cluster, tmp_path, text)
    test = report["results"]["tests"][0]
    assert (code, test["status"]) == (8, "failed"), err
    assert test["message"] == (
        "1/2 components unhealthy: cert-manager: namespace cert-manager-missing does not exist"
    )
    assert remaining(cluster, report["extra"]["aicr"]["runId"]) == []


def test_no_cleanup_keeps_everything_until_aicr_cleanup(
    cluster: SimCluster, healthy: str, tmp_path: Path
) -> None:
    code, report, err = validate(cluster, tmp_path, recipe([("operator", healthy)]), "--no-cleanup")
    assert code == 0, err
    run_id = report["extra"]["aicr"]["runId"]
    kept = remaining(cluster, run_id)
    kinds = {k.split(" ")[0] for k in kept}
    assert {"Job", "Pod", "ConfigMap", "ServiceAccount", "Role", "RoleBinding", "ClusterRole",
            "ClusterRoleBinding"} <= kinds, kept  # fmt: skip
    # the live capture's node agents are kept under the same run id, so one cleanup finds them
    assert [k for k in kept if k.startswith("Namespace ") and "node-agent" in k], kept
    assert f"aicr cleanup --run-id {run_id}" in err
    proc = subprocess.run(
        [sys.executable, "-m", "aicr.cli.main", "cleanup", "--run-id", run_id,
         "--kubeconfig", str(cluster.kubeconfig)],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert remaining(cluster, run_id) == []
