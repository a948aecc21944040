from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from cncf_builders import (
    CONFORMANCE,
    backed_should,
    make_config,
    make_recipe,
    make_report,
    make_snapshot,
    make_test,
    render_submission,
    unbacked_should,
)

from aicr.cncf import verify
from aicr.cncf.requirements import load_requirements
from aicr.ctrf import Status
from aicr.errors import InputError, SubmissionFailed

CANARY_OUTPUT = [
    "node gpu-worker-canary-7 (10.42.7.13) in cluster prod-canary-cluster",
    "GPU-1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d  Serial Number : 1654321098765",
    "ip-10-1-2-3.us-west-2.compute.internal fd00:ab12:3::7",
    "Authorization: Bearer s3cr3tT0kenValue123 owner ops-canary@corp.example.org",
    "arn:aws:iam::123456789012:role/x",
]
SECRETS = ["gpu-worker-canary-7", "10.42.7.13", "prod-canary-cluster", "1654321098765",
           "GPU-1a2b3c4d", "ip-10-1-2-3", "fd00:ab12:3::7", "s3cr3tT0kenValue123",
           "ops-canary@corp.example.org", "123456789012"]


def _tests(**status: Status) -> list:  # type: ignore[type-arg]
    out = []
    for name in CONFORMANCE:
        out.append(make_test(
            name, status.get(name.replace("-", "_"), Status.PASSED), stdout=CANARY_OUTPUT,
            evidence=[{"title": "Pods", "asked": "list pods on gpu-worker-canary-7",
                       "answer": "2 pods\nRunning", "verdict": "ok"}]))
    out.append(make_test("operator-health", phase="deployment"))
    return out


# v1.35 as the tests judge it, with a SHOULD that no check backs (the version's own, or
# one made so) to show how an unbacked requirement is written.
R35, UNBACKED = unbacked_should(load_requirements("1.35"))


def _write(out: Path, tests=None, version="1.35", config=None, force=False):  # type: ignore[no-untyped-def]
    return render_submission(
        out, report=make_report(tests or _tests()), recipe=make_recipe(),
        snapshot=make_snapshot(), config=config or make_config(), version=version, force=force,
        recipe_source="recipes/eks.yaml", reqs=R35 if version == "1.35" else None)


def test_complete_run_writes_a_verified_submission(tmp_path: Path) -> None:
    out = tmp_path / "v1.35" / "example"
    result = _write(out)
    assert result.path == out
    names = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    reqs = R35
    assert names == sorted(["PRODUCT.yaml", "README.md", "junit.xml", "e2e.log",
                            *(f"evidence/{i}.md" for i in reqs.ids)])
    assert verify(out, version=None).ok
    product = yaml.safe_load((out / "PRODUCT.yaml").read_text())
    assert all(isinstance(v, str) for v in product["metadata"].values())
    assert product["metadata"]["kubernetesVersion"] == "v1.35.2"  # the cluster's, with patch
    statuses = {i["id"]: i["status"] for items in product["spec"].values() for i in items}
    assert statuses["gang_scheduling"] == "Implemented"
    assert statuses[backed_should(reqs)] == "Implemented"  # its check ran and passed
    assert statuses[UNBACKED] == "Not Implemented"  # no check backs it
    assert list(statuses) == reqs.ids  # template order
    assert not list(tmp_path.glob("v1.35/.*"))  # no staging left behind


def test_no_canary_survives_in_any_written_file(tmp_path: Path) -> None:
    out = tmp_path / "v1.35" / "example"
    result = _write(out)
    for path in out.rglob("*"):
        if path.is_file():
            text = path.read_text()
            for secret in SECRETS:
                assert secret not in text, (path.name, secret)
    readme = (out / "README.md").read_text()
    assert "| node-name |" in readme and "| ipv4 |" in readme
    # the run's data is redacted once, before any file is written: one GPU UUID per check's
    # output, however many files then show that output
    assert result.redaction_counts["gpu-uuid"] == len(CONFORMANCE)
    # the configured contact stays
    assert "conformance@example.com" in (out / "PRODUCT.yaml").read_text()


def test_evidence_page_shows_checks_and_what_came_back(tmp_path: Path) -> None:
    out = tmp_path / "v1.35" / "example"
    _write(out)
    page = (out / "evidence" / "gang_scheduling.md").read_text()
    assert page.startswith("# gang_scheduling (MUST): Implemented")
    for needle in ("### Check `gang-scheduling`", "- Verdict: **passed**", "- Duration: 1.50 s",
                   "- **asked**: list pods on node-1", "#### Captured output"):
        assert needle in page
    assert "No aicr check backs" in (out / "evidence" / f"{UNBACKED}.md").read_text()


def test_a_failed_should_check_is_a_failure_in_junit_and_e2e_never_a_skip(tmp_path: Path) -> None:
    out = tmp_path / "v1.35" / "example"
    _write(out, tests=_tests(driver_runtime_management=Status.FAILED))
    junit = (out / "junit.xml").read_text()
    log = (out / "e2e.log").read_text()
    assert re.search(r'<testcase name="driver-runtime-management"[^>]*>\s*<failure', junit)
    assert "<skipped" not in junit
    assert "--- FAIL: driver-runtime-management" in log
    assert log.count("--- PASS: ") == len(CONFORMANCE)  # the others plus operator-health
    product = yaml.safe_load((out / "PRODUCT.yaml").read_text())
    drm = product["spec"]["accelerators"][1]
    assert drm["status"] == "Not Implemented" and "driver-runtime-management failed" in drm["notes"]


def test_from_1_37_a_failed_should_check_keeps_every_requirement_off_the_artifacts(
        tmp_path: Path) -> None:
    out = tmp_path / "v1.37" / "example"
    _write(out, version="1.37", tests=_tests(driver_runtime_management=Status.FAILED))
    product = yaml.safe_load((out / "PRODUCT.yaml").read_text())
    refs = [e for items in product["spec"].values() for i in items for e in i["evidence"]]
    assert refs and not [e for e in refs if e.startswith("file://")]
    assert verify(out, version=None).ok


def test_v1_37_references_junit_and_e2e_with_fragments(tmp_path: Path) -> None:
    out = tmp_path / "v1.37" / "example"
    _write(out, version="1.37")
    product = yaml.safe_load((out / "PRODUCT.yaml").read_text())
    gang = product["spec"]["schedulingOrchestration"][0]
    checks = load_requirements("1.37").get("gang_scheduling").checks  # type: ignore[union-attr]
    files = ("junit.xml", "e2e.log")
    assert gang["evidence"] == ["evidence/gang_scheduling.md",
                                *(f"file://{f}#{c}" for c in checks for f in files)]
    assert verify(out, version=None).ok


@pytest.mark.parametrize(
    ("tests", "reason"),
    [(lambda: _tests(gang_scheduling=Status.SKIPPED), "MUST gang_scheduling is incomplete"),
     (lambda: [t for t in _tests() if t.name != "robust-controller"],
      "robust-controller is missing from the report (planned by the recipe)"),
     (lambda: [*_tests(), make_test("expected-resources", Status.OTHER, phase="deployment")],
      "check expected-resources other")],
    ids=["skipped-must", "missing-must", "failed-unbacked"],
)
def test_blocked_run_writes_nothing_and_exits_8(tmp_path: Path, tests, reason: str) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "v1.35" / "example"
    with pytest.raises(SubmissionFailed) as exc:
        _write(out, tests=tests())
    assert exc.value.exit_code == 8
    assert reason in str(exc.value)
    assert not out.exists()
    assert not any(tmp_path.rglob("*.md"))


def test_non_empty_dir_is_refused_without_force_and_replaced_whole_with_it(tmp_path: Path) -> None:
    out = tmp_path / "v1.35" / "example"
    out.mkdir(parents=True)
    (out / "stale.md").write_text("from an earlier run")
    with pytest.raises(InputError) as exc:
        _write(out)
    assert exc.value.exit_code == 2 and "--force" in str(exc.value)
    assert (out / "stale.md").exists()
    _write(out, force=True)
    assert not (out / "stale.md").exists()
    assert (out / "PRODUCT.yaml").exists()
    assert sorted(p.name for p in out.parent.iterdir()) == ["example"]


def test_vendor_is_checked_before_anything_is_written(tmp_path: Path) -> None:
    out = tmp_path / "v1.35" / "example"
    with pytest.raises(InputError, match="vendorName"):
        _write(out, config=make_config(vendor={"platformName": "x"}))
    assert not out.exists()


# Node names the run's report carries as data, with a snapshot of another cluster: the
# checks' free text names this run's nodes, which the snapshot does not know.
RUN_NODES = ["gpu-h100-0", "gpu-h100-1"]
KEPT = "; also gpu-h100-0x agpu-h100-1 v1.35.2 at 2026-06-01T10:00:01.250Z"
FREE_TEXT = "free GPUs: gpu-h100-0 8, gpu-h100-1 8; snapshot of gpu-worker-canary-7" + KEPT
FREE_GPUS = re.compile(r"free GPUs: (node-\d+) 8, (node-\d+) 8; snapshot of (node-\d+);")


def _tests_naming_run_nodes() -> list:  # type: ignore[type-arg]
    """Every check's step names the run's nodes; gang-scheduling's result lists them."""
    from datetime import timedelta

    from aicr.catalog import load_catalog
    from aicr.plan import PlannedCheck
    from aicr.result import CheckResult, EvidenceSection, to_test

    step = EvidenceSection(title="exporter on gpu-h100-1", asked="nodes", answer=FREE_TEXT,
                           verdict="ok")
    out = []
    for name in CONFORMANCE:
        spec = load_catalog().get(name)
        assert spec is not None
        result = CheckResult(name=name, status=Status.PASSED, message="ok", evidence=[step],
                             nodes=RUN_NODES if name == "gang-scheduling" else [])
        out.append(to_test(PlannedCheck(spec, timedelta(seconds=60)), result))
    return out


def test_node_names_the_report_records_are_redacted_in_free_text(tmp_path: Path) -> None:
    out = tmp_path / "v1.35" / "example"
    render_submission(out, report=make_report(_tests_naming_run_nodes()), recipe=make_recipe(),
                     snapshot=make_snapshot(), config=make_config(), version="1.35", force=False,
                     recipe_source="recipes/eks.yaml")
    texts = {p.name: p.read_text() for p in out.rglob("*") if p.is_file()}
    page = texts["gang_scheduling.md"]
    first, second, snapshot_node = FREE_GPUS.findall(page)[0]
    assert {first, second, snapshot_node} == {"node-1", "node-2", "node-3"}
    assert f"exporter on {second}" in page
    # the same stable placeholders in every file, one numbering with the snapshot's names
    assert FREE_GPUS.findall(texts["accelerator_metrics.md"])[0] == (first, second, snapshot_node)
    for name, text in texts.items():
        for node in RUN_NODES:
            assert re.search(rf"(?<![\w-]){node}(?![\w-])", text) is None, (name, node)
        # a token that merely contains a node name is another token; versions, times stay
        if name.endswith(".md") and "free GPUs" in text:
            assert KEPT in text, name
