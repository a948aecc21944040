"""The session's conformance checks end to end, through to the evidence pages a reviewer reads.

One `aicr validate --phase conformance` run on the healthy simulated cluster
with the real components (KubeRay, Traefik on the Gateway API CRDs, Kueue,
Prometheus with its adapter, dcgm-exporter) and a recipe listing robust-controller,
inference-gateway, gang-scheduling, pod-autoscaling and accelerator-metrics: each check passes, the
requirement summary shows the requirement each backs Implemented, and the
evidence page the submission writer renders for each (redacted as it would be
on disk) says what was created, what was sent and counted, and what came back,
with no pod or Service address left in it. (A whole submission needs every
MUST's check; those not landed yet keep this run from writing one, so the pages
are rendered by the writer's own functions from the run's report.)
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from deployhelp import SNAPSHOT, recipe_text
from harness import SimCluster
from runhelp import remaining

from aicr.cncf import aggregate, load_requirements, pages
from aicr.cncf.submission import redactor_for
from aicr.config import parse_config
from aicr.ctrf import Report

pytestmark = pytest.mark.components(
    "kuberay", "gateway", "kueue", "prometheus", "prometheus-adapter", "dcgm-exporter"
)

VERSION = "1.35"
BACKED = {"robust-controller": "robust_controller", "inference-gateway": "ai_inference",
          "gang-scheduling": "gang_scheduling", "pod-autoscaling": "pod_autoscaling",
          "accelerator-metrics": "accelerator_metrics"}  # fmt: skip
COMPONENTS = (
    "- name: gpu-operator\n  namespace: gpu-operator\n"
    "- name: kuberay-operator\n  namespace: ray-system\n"
    "- name: traefik\n  namespace: traefik\n"
    "- name: kueue\n  namespace: kueue-system\n"
)
PARAMS: dict[str, dict[str, Any]] = {
    "inference-gateway": {"routeSeconds": 30},
    "gang-scheduling": {"observeSeconds": 5, "startSeconds": 60, "admissionSeconds": 20},
    "accelerator-metrics": {"loadSeconds": 20, "collectSeconds": 30},
}
# what a reviewer must be able to follow on each page (after redaction)
KEY_CONTENT = {
    "robust_controller": ['admission webhook "vraycluster.kb.io" denied the request',
                          "#### valid RayCluster reconciled", "children garbage-collected"],
    "ai_inference": ["#### weighted split", "500 request(s) with the valid key", "#### header rule",
                     "refused (401x1)", "created HTTPRoute", "to http://ipv4-"],
    "gang_scheduling": ["#### gang that fits", "#### gang that cannot fit", "QuotaReserved=False",
                        "observation window opens"],
    "pod_autoscaling": ["1 -> 2 -> 1", "#### scale up", "#### HPA timeline", "metric 40 desired 2"],
    "accelerator_metrics": ["#### collected by Prometheus", "#### utilization under load on ",
                            "DCGM_FI_DEV_GPU_UTIL"],
}  # fmt: skip
EXPORTER = "app=nvidia-dcgm-exporter"
IPV4 = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}\b")


def _config(cluster: SimCluster, tmp_path: Path) -> Path:
    config = cluster.validate_config()
    checks = config["spec"]["validate"].setdefault("checks", {})
    for check, params in PARAMS.items():
        checks.setdefault(check, {}).setdefault("params", {}).update(params)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _exporters_ready(cluster: SimCluster) -> None:
    def ready() -> bool:
        pods = cluster.core().list_namespaced_pod("gpu-operator", label_selector=EXPORTER).items
        return {p.spec.node_name for p in pods if any(
            c.type == "Ready" and c.status == "True" for c in p.status.conditions or [])
        } >= set(SimCluster.gpu_nodes)  # fmt: skip

    cluster.wait_for(ready, timeout=60, message="every GPU node's exporter to be Ready")


def test_each_check_passes_and_its_evidence_page_can_be_followed(
    cluster: SimCluster, tmp_path: Path
) -> None:
    _exporters_ready(cluster)
    config, recipe, out = _config(cluster, tmp_path), tmp_path / "recipe.yaml", tmp_path / "r.json"
    recipe.write_text(recipe_text(COMPONENTS, list(BACKED), phase="conformance"))
    proc = subprocess.run(
        [sys.executable, "-m", "aicr.cli.main", "validate", "--recipe", str(recipe),
         "--snapshot", SNAPSHOT, "--config", str(config), "--phase", "conformance",
         "--cncf-version", VERSION, "--kubeconfig", str(cluster.kubeconfig),
         "--image", cluster.validator_image, "-o", str(out)],
        capture_output=True, text=True, timeout=420,
    )  # fmt: skip
    raw = json.loads(out.read_text()) if out.exists() else {}
    tests = {t["name"]: t for t in raw.get("results", {}).get("tests", [])}
    for t in tests.values():
        print(t["name"], t["status"], t["duration"], t["message"])
    assert {n: tests[n]["status"] for n in BACKED} == dict.fromkeys(BACKED, "passed"), proc.stderr
    assert proc.returncode == 0, proc.stderr
    rows = {r["id"]: r["status"] for r in raw["extra"]["aicr"]["cncf"]["requirements"]}
    assert {r: rows[r] for r in BACKED.values()} == dict.fromkeys(BACKED.values(), "Implemented")
    assert remaining(cluster, raw["extra"]["aicr"]["runId"]) == []

    report = Report.model_validate(raw)
    settings = parse_config(config.read_text(), str(config))
    agg = aggregate(load_requirements(VERSION), report, list(BACKED), settings)
    redactor = redactor_for(settings, None, report)
    for requirement, needles in KEY_CONTENT.items():
        res = agg.result(requirement)
        assert res is not None
        page = redactor.redact(pages.evidence_page(res, VERSION))
        print(page)
        assert page.startswith(f"# {requirement} (MUST): Implemented"), page[:200]
        assert "#### What was asked of the cluster and what came back" in page
        assert [n for n in needles if n not in page] == [], page
        # pod and Service addresses (10.244.x) are replaced, not published. (Node names are
        # replaced only as the snapshot or report names them under node keys; this run's
        # snapshot is a fixture from another cluster, so that is not asserted here.)
        assert IPV4.findall(page) == [], page
