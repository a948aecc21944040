"""Recipes read from, and reports written to, ConfigMaps (cm://namespace/name[/key])."""

from __future__ import annotations

import json
from pathlib import Path

from harness import SimCluster
from kubernetes import client

from aicr.cli.main import run

SNAPSHOT = Path(__file__).resolve().parents[2] / "tests/data/snapshots/ok.yaml"
RECIPE = "kind: RecipeResult\nvalidation: {deployment: {checks: [operator-health]}}\n"


def test_recipe_from_and_report_to_configmaps(cluster: SimCluster, namespace: str) -> None:
    core = client.CoreV1Api(cluster.api())
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "recipes"},
                                                  "data": {"recipe.yaml": RECIPE}})
    code = run(["validate", "-r", f"cm://{namespace}/recipes/recipe.yaml", "-s", str(SNAPSHOT),
                "--kubeconfig", str(cluster.kubeconfig), "--dry-run"])
    assert code == 0
    code = run(["validate", "-r", f"cm://{namespace}/recipes", "-s", str(SNAPSHOT),
                "--kubeconfig", str(cluster.kubeconfig), "--no-cluster",
                "-o", f"cm://{namespace}/report"])
    # --no-cluster refuses a cm:// report: the user asked for no cluster access
    assert code == 2
    code = run(["validate", "-r", f"cm://{namespace}/recipes", "-s", str(SNAPSHOT),
                "--kubeconfig", str(cluster.kubeconfig), "--image", cluster.validator_image,
                "--skip-check", "operator-health", "-o", f"cm://{namespace}/report"])
    assert code == 0
    report = json.loads(core.read_namespaced_config_map("report", namespace).data["report.json"])
    assert [(t["name"], t["status"]) for t in report["results"]["tests"]] == [
        ("operator-health", "skipped")
    ]


def test_missing_configmap_is_an_input_error(cluster: SimCluster, namespace: str,
                                             capsys: object) -> None:
    code = run(["validate", "-r", f"cm://{namespace}/nope", "--kubeconfig",
                str(cluster.kubeconfig)])
    assert code == 2


def test_snapshot_to_a_configmap_is_read_back_by_validate(cluster: SimCluster,
                                                          namespace: str) -> None:
    from aicr.snapshot.load import parse_snapshot

    code = run(["snapshot", "--kubeconfig", str(cluster.kubeconfig),
                "-o", f"cm://{namespace}/snap"])
    assert code == 0
    data = client.CoreV1Api(cluster.api()).read_namespaced_config_map("snap", namespace).data
    assert list(data) == ["snapshot.yaml"]  # AICR's key, so AICR reads it too
    assert (parse_snapshot(data["snapshot.yaml"]).server_version or "").startswith("v1.")
    code = run(["validate", "-r", str(SNAPSHOT.parents[1] / "recipes/small.yaml"),
                "-s", f"cm://{namespace}/snap", "--kubeconfig", str(cluster.kubeconfig),
                "--dry-run"])
    assert code == 0
