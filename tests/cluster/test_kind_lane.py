"""The kind workflow's expectations, proved on the simulated cluster before GitHub runs them.

Stand-ins for what a fresh kind cluster plus hack/kind/deploy.sh holds (CoreDNS,
the local-path provisioner, cert-manager: Deployments, Services, a CRD) are
applied under the same names; then `aicr validate` runs hack/kind/recipe.yaml as
the workflow does, and hack/kind/check_report.py must find every check as
hack/kind/expected.yaml says.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import SimCluster
from kubernetes import client
from manifests import crd
from runhelp import remaining

from kindlane import EXPECTED, KIND, check_report

CRD = crd("cert-manager.io", "certificates", "Certificate")


def _workload(name: str, namespace: str) -> list[dict[str, Any]]:
    labels = {"app": name}
    deployment: dict[str, Any] = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels},
            "spec": {"containers": [{"name": name, "image": f"registry.example/{name}:v1"}]}}},
    }  # fmt: skip
    return [deployment]


def _service(name: str, namespace: str, app: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": {"app": app}, "ports": [{"port": 443, "targetPort": 443}]}}


@pytest.fixture
def kind_stand_ins(cluster: SimCluster) -> Iterator[None]:
    """The recipe's components under their kind names; removed again afterwards."""
    core, apps = cluster.core(), client.AppsV1Api(cluster.api())
    for ns in ("local-path-storage", "cert-manager"):
        cluster.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    docs = [*_workload("coredns", "kube-system"), _service("kube-dns", "kube-system", "coredns"),
            *_workload("local-path-provisioner", "local-path-storage"),
            *_workload("cert-manager", "cert-manager"),
            *_workload("cert-manager-cainjector", "cert-manager"),
            *_workload("cert-manager-webhook", "cert-manager"),
            _service("cert-manager-webhook", "cert-manager", "cert-manager-webhook"), CRD]
    cluster.apply(docs)
    for d in docs:
        if d["kind"] == "Deployment":
            name, ns = d["metadata"]["name"], d["metadata"]["namespace"]
            cluster.wait_for(
                lambda n=name, s=ns: (apps.read_namespaced_deployment(n, s).status
                                      .available_replicas or 0) >= 1,
                timeout=60, message=f"{ns}/{name} available")  # fmt: skip
    yield
    apps.delete_namespaced_deployment("coredns", "kube-system")
    core.delete_namespaced_service("kube-dns", "kube-system")
    client.ApiextensionsV1Api(cluster.api()).delete_custom_resource_definition(
        "certificates.cert-manager.io")
    for ns in ("local-path-storage", "cert-manager"):
        cluster.delete_namespace(ns, wait=False)


def test_every_check_reports_what_the_kind_workflow_expects(
    cluster: SimCluster, kind_stand_ins: None, tmp_path: Path
) -> None:
    out, junit = tmp_path / "report.json", tmp_path / "junit.xml"
    proc = subprocess.run(
        [sys.executable, "-m", "aicr.cli.main", "validate", "-r", str(KIND / "recipe.yaml"),
         "--phase", "deployment", "--phase", "conformance",
         "--kubeconfig", str(cluster.kubeconfig), "--image", cluster.validator_image,
         "-o", str(out), "--junit", str(junit)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    report = json.loads(out.read_text())
    assert check_report.compare(report, EXPECTED) == [], proc.stderr
    assert proc.returncode == 0, proc.stderr
    assert junit.read_text().count("<testcase") == len(EXPECTED)
    assert remaining(cluster, report["extra"]["aicr"]["runId"]) == []
