"""A whole CNCF submission from one real run: every MUST's check passes, the files show it.

One `aicr validate --phase conformance --cncf-submission --evidence-dir DIR` on the
healthy simulated cluster (device-plugin GPUs, so Karpenter can add a GPU node) with the
real components every MUST's check exercises: KubeRay, Traefik on the Gateway API CRDs,
Kueue, Prometheus with its adapter, dcgm-exporter and Karpenter; the DRA driver and the
GPU RuntimeClass are stand-ins (`conformance_cluster`). The recipe plans exactly the
checks behind the version's MUSTs. The run must exit 0 and write the directory; then
the files are read as a reviewer and the upstream validator would read them: PRODUCT.yaml
against the upstream template, an evidence page per requirement that shows its claim,
junit.xml and e2e.log agreeing with the report, every image the run's pods ran recorded
by the digest the kubelet reported, nothing of the cluster left unredacted
(pod and Service addresses, node names, GPU UUIDs, the gateway's API key, the kubeconfig's
credentials), every page marked as coming from a simulated cluster, and `aicr evidence
verify` accepting the directory only with `--allow-simulated`.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from conformance_cluster import (
    COMPONENTS,
    QUICK_PARAMS,
    exporters_ready,
    healthy,
    recipe,
    run_config,
    teardown,
)
from deployhelp import SNAPSHOT
from harness import SimCluster
from runhelp import remaining
from simcluster.components import gateway
from simcluster.nodes import provisioned
from simcluster.runtime import pod_status

from aicr.cncf import load_requirements
from aicr.cncf.requirements import Level
from aicr.kube.image_ids import resolve
from aicr.trust import SIMULATED_BANNER

pytestmark = pytest.mark.components(*COMPONENTS)

VERSION = "1.35"
REQS = load_requirements(VERSION)
MUSTS = [r for r in REQS.requirements if r.level == Level.MUST]
CHECKS = [c for r in MUSTS for c in r.checks]
DATA = Path(__file__).parents[1] / "data" / "cncf"
TEMPLATE = DATA / "templates" / f"AIConformance-{VERSION}.yaml"
SUBMISSION = f"v{VERSION}/example"
# the example vendor of the unit tests' submissions (its k8sConformanceUrl names this dir)
VENDOR: dict[str, str] = yaml.safe_load((DATA / "vendor.yaml").read_text())
# what a reviewer must be able to follow on each MUST's page (after redaction)
KEY_CONTENT = {
    "dra_support": ["#### claim lifecycle", "#### DRA driver",
                    "GPU allocation through DRA not tested"],
    "robust_controller": ['admission webhook "vraycluster.kb.io" denied the request',
                          "#### valid RayCluster reconciled", "children garbage-collected"],
    "ai_inference": ["#### weighted split", "500 request(s) with the valid key", "#### header rule",
                     "refused (401x1)", "created HTTPRoute", "to http://ipv4-"],
    "gang_scheduling": ["#### gang that fits", "#### gang that cannot fit", "QuotaReserved=False",
                        "observation window opens"],
    "cluster_autoscaling": ["#### scale-up", "#### scale-down", "NodeClaim gpu-",
                            "added node node-"],
    "pod_autoscaling": ["1 -> 2 -> 1", "#### scale up", "#### HPA timeline",
                        "metric 100 desired 2"],
    "accelerator_metrics": ["#### collected by Prometheus", "#### utilization under load on node-",
                            "DCGM_FI_DEV_GPU_UTIL"],
    "ai_service_metrics": ["counted exactly 10 of 10 requests", "through annotations"],
    "secure_accelerator_access": ["#### multi-container", "#### cross-pod",
                                  "saw only what was allocated to it"],
}  # fmt: skip
IPV4 = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}\b")
GPU_UUID = re.compile(r"\bGPU-[0-9a-fA-F]{8}-")
E2E_LINE = re.compile(r"^--- (PASS|FAIL|SKIP): (\S+) \((\d+\.\d\d)s\)$", re.M)


@pytest.fixture
def healthy_cluster(cluster: SimCluster) -> Iterator[SimCluster]:
    """The DRA driver and the GPU RuntimeClass beside the components, device-plugin GPUs."""
    healthy(cluster, "device-plugin", operands=False)
    try:
        cluster.wait_gpus_idle()  # the checks' probe counts need every GPU free
        exporters_ready(cluster)
        yield cluster
    finally:
        teardown(cluster, operands=False)
        cluster.wait_for(lambda: not provisioned.provisioned_nodes(cluster.api()), timeout=60,
                         message="the provisioned nodes gone")  # fmt: skip


def _config(cluster: SimCluster, tmp_path: Path) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(run_config(cluster, QUICK_PARAMS, VENDOR)))
    return path


def _secrets(cluster: SimCluster) -> list[str]:
    """Values no file may hold: the gateway's API key and the kubeconfig's credentials."""
    secret = cluster.core().read_namespaced_secret(gateway.KEY_SECRET, gateway.NAMESPACE)
    values = [base64.b64decode(v).decode() for v in (secret.data or {}).values()]
    kubeconfig = yaml.safe_load(cluster.kubeconfig.read_text())
    for user in kubeconfig.get("users", []):
        values += [v for k, v in user.get("user", {}).items() if k != "username"]
    return [v for v in values if len(v) >= 8]


def test_one_run_writes_a_verified_submission_with_every_must_implemented(
    healthy_cluster: SimCluster, tmp_path: Path
) -> None:
    cluster = healthy_cluster
    config, recipe_file = _config(cluster, tmp_path), tmp_path / "recipe.yaml"
    report = tmp_path / "report.json"
    recipe_file.write_text(recipe(CHECKS, "device-plugin"))
    out = tmp_path / SUBMISSION
    proc = subprocess.run(
        [sys.executable, "-m", "aicr.cli.main", "validate", "--recipe", str(recipe_file),
         "--snapshot", SNAPSHOT, "--config", str(config), "--phase", "conformance",
         "--kubeconfig", str(cluster.kubeconfig), "--image", cluster.validator_image,
         "--cncf-submission", "--evidence-dir", str(out), "-o", str(report)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    raw = json.loads(report.read_text()) if report.exists() else {}
    tests = {t["name"]: t for t in raw.get("results", {}).get("tests", [])}
    for t in tests.values():
        print(t["name"], t["status"], t["duration"], t["message"])
    assert {n: t["status"] for n, t in tests.items()} == dict.fromkeys(CHECKS, "passed"), (
        proc.stdout[-3000:] + proc.stderr[-3000:])  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "CNCF submission written to" in proc.stderr, proc.stderr
    assert remaining(cluster, raw["extra"]["aicr"]["runId"]) == []

    pages = {r.id: f"evidence/{r.id}.md" for r in REQS.requirements}
    files = {str(p.relative_to(out)): p.read_text() for p in out.rglob("*") if p.is_file()}
    assert sorted(files) == sorted(["PRODUCT.yaml", "README.md", "junit.xml", "e2e.log",
                                    *pages.values()])  # fmt: skip

    # PRODUCT.yaml: the upstream template's spec, in order, every MUST Implemented
    product = yaml.safe_load(files["PRODUCT.yaml"])
    # every value a non-empty string, as the validator requires
    # kubernetesVersion: the cluster's own, with its patch level
    assert product["metadata"]["kubernetesVersion"].startswith(f"v{VERSION}.")
    assert product["metadata"] == {"kubernetesVersion": product["metadata"]["kubernetesVersion"],
                                   **VENDOR}
    # the sim's nodes are KWOK's: a simulated submission, marked on every page and note
    assert raw["extra"]["aicr"]["trust"]["class"] == "simulated"
    assert all(SIMULATED_BANNER in text for name, text in files.items() if name.endswith(".md"))
    assert all(SIMULATED_BANNER in i["notes"] for items in product["spec"].values()
               for i in items)  # fmt: skip
    template = yaml.safe_load(TEMPLATE.read_text())["spec"]
    assert [(c, [i["id"] for i in items]) for c, items in product["spec"].items()] == [
        (c, [i["id"] for i in items]) for c, items in template.items()]  # fmt: skip
    rows = {i["id"]: i for items in product["spec"].values() for i in items}
    for req in REQS.requirements:
        row = rows[req.id]
        if req.level == Level.MUST:
            assert (row["status"], row["evidence"]) == ("Implemented", [pages[req.id]]), row
        else:  # no check of the run backs a SHOULD: said so, never a pass
            assert row["status"] == "Not Implemented" and row["notes"], row
    summary = {r["id"]: r["status"] for r in raw["extra"]["aicr"]["cncf"]["requirements"]}
    assert {r.id: summary[r.id] for r in MUSTS} == {r.id: "Implemented" for r in MUSTS}

    # every image the run's pods ran, by the digest the kubelet reported: the sim's is a
    # containerd's repo digest (pod_status.image_id); a container never created has none
    ran = raw["extra"]["aicr"]["provenance"]["images"]
    validator = [i for i in ran if i["role"] == "validator"]
    want = resolve(pod_status.image_id(cluster.validator_image)).digest
    assert [(i["image"], i.get("digest"), sorted(i["checks"])) for i in validator] == [
        (cluster.validator_image, want, sorted(CHECKS))], validator  # fmt: skip
    workloads = [i for i in ran if i["role"] == "workload"]
    assert [i for i in workloads if i.get("digest")], ran
    never_created = "no imageID reported"
    assert [i for i in workloads
            if i.get("digest") != resolve(pod_status.image_id(i["image"])).digest
            and not i.get("noDigest", "").startswith(never_created)] == [], workloads  # fmt: skip
    assert all(any(i["role"] == "validator" and i.get("digest") for i in t["extra"]["images"])
               for t in tests.values()), tests  # fmt: skip
    assert f"| validator | `{cluster.validator_image}` | `{want}` |" in files["README.md"]

    # each MUST's page shows its claim: the checks' verdicts and what came back
    for req in MUSTS:
        page = files[pages[req.id]]
        assert page.startswith(f"# {req.id} (MUST): Implemented"), page[:300]
        assert "#### What was asked of the cluster and what came back" in page, page
        assert f": `{cluster.validator_image}` ran `{want}`" in page, page  # its own pod's image
        assert [n for n in KEY_CONTENT[req.id] if n not in page] == [], page

    # junit.xml and e2e.log: one passing case per check of the report, the same seconds
    suite = ET.fromstring(files["junit.xml"].encode())
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert sorted(cases) == sorted(CHECKS)
    assert [n for n, c in cases.items() if len(c.findall("failure") + c.findall("error")
                                               + c.findall("skipped"))] == []  # fmt: skip
    logged = {m[1]: (m[0], m[2]) for m in E2E_LINE.findall(files["e2e.log"])}
    assert logged == {n: ("PASS", f"{t['duration'] / 1000:.2f}") for n, t in tests.items()}
    assert {n: f"{float(c.get('time') or 0):.2f}" for n, c in cases.items()} == {
        n: s for n, (_, s) in logged.items()}  # fmt: skip
    assert files["e2e.log"].rstrip().splitlines()[-2] == "PASS"

    # nothing of the cluster left unredacted
    nodes = [n.metadata.name for n in cluster.core().list_node().items]
    added = re.search(r"added node (\S+)", tests["cluster-autoscaling"]["message"])
    assert added, tests["cluster-autoscaling"]["message"]
    nodes.append(added[1])
    node = re.compile(rf"\b(?:{'|'.join(map(re.escape, nodes))})\b")
    text = "\n".join(files.values())
    patterns = {"ipv4": IPV4, "gpu-uuid": GPU_UUID, "node": node}
    leaks = {name: sorted(set(pattern.findall(text))) for name, pattern in patterns.items()}
    leaks["secret"] = [f"{v[:4]}..." for v in _secrets(cluster) if v in text]
    assert leaks == {"ipv4": [], "gpu-uuid": [], "node": [], "secret": []}
    # and the README counts what was replaced: the gateway's pod address, nodes, GPUs
    for cls in ("ipv4", "node-name", "gpu-uuid"):
        assert re.search(rf"^\| {cls} \| .* \| [1-9]\d* \|$", files["README.md"], re.M), cls

    # the verifier the project ships (the upstream validator's rules) accepts it only as a demo
    members = tmp_path / "members.txt"
    members.write_text(VENDOR["vendorName"] + "\n")
    refused = subprocess.run(
        [sys.executable, "-m", "aicr.cli.main", "evidence", "verify", str(out),
         "--members", str(members)], capture_output=True, text=True, timeout=60)  # fmt: skip
    assert refused.returncode == 1 and "--allow-simulated" in refused.stdout, refused.stdout
    verified = subprocess.run(
        [sys.executable, "-m", "aicr.cli.main", "evidence", "verify", str(out),
         "--members", str(members), "--allow-simulated"],
        capture_output=True, text=True, timeout=60)  # fmt: skip
    said = verified.stdout.strip().splitlines()  # no error, no warning, no leak: one VALID line
    assert (verified.returncode, said) == (0, [f"VALID: {out} passes the v{VERSION} checks"]), (
        verified.stdout + verified.stderr)  # fmt: skip
