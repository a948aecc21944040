from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cncf_builders import write_submission

from aicr.cncf import verify
from aicr.errors import FlagConflictError, InputError


@pytest.mark.parametrize("version", ["1.33", "1.34", "1.35", "1.36", "1.37"])
def test_a_complete_submission_is_valid(tmp_path: Path, version: str) -> None:
    result = verify(write_submission(tmp_path, version), version=None)
    assert (result.ok, result.errors, result.version) == (True, [], version)


def test_members_and_online_checks_only_when_asked(tmp_path: Path) -> None:
    d = write_submission(tmp_path)
    assert verify(d, version=None).ok
    bad = verify(d, version=None, members={"Google"})
    assert bad.errors == [
        "PRODUCT.yaml: metadata.vendorName: 'Example Corp' is not a CNCF member name"]
    assert verify(d, version=None, members={"Example Corp"}).ok
    calls: list[str] = []

    def fetch(url: str) -> str | None:
        calls.append(url)
        return "is unreachable (HTTP 404)" if "robust_controller" in url else None

    online = verify(d, version=None, online=True, fetch=fetch)
    assert len(online.errors) == 1 and "robust_controller" in online.errors[0]
    assert calls  # URLs were checked only because online=True


def test_version_from_flag_when_path_has_none(tmp_path: Path) -> None:
    d = tmp_path / "aks"
    shutil.copytree(write_submission(tmp_path / "made"), d)
    with pytest.raises(InputError, match="cannot tell the conformance version"):
        verify(d, version=None)
    assert verify(d, version="1.36").ok
    # judged against 1.35 it lacks dra_support
    assert any("dra_support" in e for e in verify(d, version="1.35").errors)


def test_flag_contradicting_the_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FlagConflictError):
        verify(write_submission(tmp_path), version="1.35")


def test_missing_directory_is_a_bad_invocation(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        verify(tmp_path / "v1.36" / "nope", version=None)


def _hybrid_dir(tmp_path: Path, evidence: list[str], junit_fail: bool = False,
                log_lines: str | None = None) -> Path:
    """A v1.37 submission whose gang_scheduling evidence is ``evidence``."""
    d = write_submission(tmp_path, "1.37", "x", evidence={"gang_scheduling": evidence})
    failure = '<failure message="x"/>' if junit_fail else ""
    (d / "junit.xml").write_text(
        '<?xml version="1.0"?><testsuites><testsuite name="aicr">'
        f'<testcase name="gang-scheduling">{failure}</testcase></testsuite></testsuites>')
    outcome = "FAIL" if junit_fail else "PASS"
    (d / "e2e.log").write_text(log_lines or f"=== RUN   gang-scheduling\n"
                               f"--- {outcome}: gang-scheduling (1.00s)\n")
    return d


@pytest.mark.parametrize(
    ("evidence", "junit_fail", "fragment"),
    [(["file://junit.xml#gang-scheduling", "file://e2e.log#gang-scheduling"], False, None),
     (["file://junit.xml#nope"], False, "has no test case named 'nope'"),
     (["file://junit.xml"], False, "has no #<test case> fragment"),
     (["file://junit.xml#gang-scheduling"], True, "has failing test cases (gang-scheduling)"),
     (["file://e2e.log#gang-scheduling"], True, "has failing test cases"),
     (["file://missing.xml#a"], False, "missing.xml does not exist")],
    ids=["valid", "unknown-fragment", "no-fragment", "failing-junit", "failing-log", "missing"],
)
def test_v1_37_artifact_rules(tmp_path: Path, evidence: list[str], junit_fail: bool,
                              fragment: str | None) -> None:
    result = verify(_hybrid_dir(tmp_path, evidence, junit_fail), version=None)
    if fragment is None:
        assert result.ok, result.errors
    else:
        assert any(fragment in e for e in result.errors), result.errors


def test_v1_37_junit_and_log_must_agree(tmp_path: Path) -> None:
    d = _hybrid_dir(tmp_path, ["file://junit.xml#gang-scheduling", "file://e2e.log#gang-scheduling"],
                    log_lines="--- SKIP: gang-scheduling (0.00s)\n")
    assert any("disagree on gang-scheduling" in e for e in verify(d, version=None).errors)


def test_file_scheme_is_a_missing_path_before_1_37(tmp_path: Path) -> None:
    d = _hybrid_dir(tmp_path, ["file://junit.xml#gang-scheduling"])
    v136 = tmp_path / "v1.36" / "x"
    v136.parent.mkdir()
    d.rename(v136)
    text = (v136 / "PRODUCT.yaml").read_text().replace("v1.37", "v1.36")
    (v136 / "PRODUCT.yaml").write_text(text)
    errors = verify(v136, version=None).errors
    assert any("'file://junit.xml#gang-scheduling' does not exist" in e for e in errors)


def _generated(tmp_path: Path) -> Path:
    from cncf_builders import (
        CONFORMANCE,
        make_config,
        make_recipe,
        make_report,
        make_snapshot,
        render_submission,
    )
    from cncf_builders import make_test as test

    out = tmp_path / "v1.35" / "x"
    render_submission(out, report=make_report([test(n) for n in CONFORMANCE]),
                     recipe=make_recipe(), snapshot=make_snapshot(), config=make_config(),
                     version="1.35", force=False, recipe_source="r.yaml")
    return out


def _set_status(product: Path, req_id: str, status: str) -> None:
    import yaml

    doc = yaml.safe_load(product.read_text())
    for items in doc["spec"].values():
        for item in items:
            if item["id"] == req_id:
                item["status"] = status
    product.write_text(yaml.safe_dump(doc, sort_keys=False))


def test_na_on_an_unconditional_must_is_an_error_on_a_conditional_one_a_warning(
        tmp_path: Path) -> None:
    out = _generated(tmp_path)
    _set_status(out / "PRODUCT.yaml", "gang_scheduling", "N/A")
    _set_status(out / "PRODUCT.yaml", "pod_autoscaling", "N/A")
    result = verify(out, version=None)
    assert result.errors == ["PRODUCT.yaml: spec.schedulingOrchestration.gang_scheduling.status: "
                             "a MUST requirement must be Implemented, got 'N/A'"]
    assert result.warnings == [
        "PRODUCT.yaml: spec.schedulingOrchestration.pod_autoscaling: N/A on a conditional MUST "
        "is accepted with notes (FAQ), but cncf/k8s-ai-conformance scripts/validate.go at "
        "b2c8969 (2026-08-19) rejects it"]


def test_an_empty_evidence_entry_is_skipped_as_upstream_does(tmp_path: Path) -> None:
    out = _generated(tmp_path)
    product = out / "PRODUCT.yaml"
    product.write_text(product.read_text().replace(
        '        - "evidence/gang_scheduling.md"\n',
        '        - "evidence/gang_scheduling.md"\n        - ""\n'))
    assert verify(out, version=None).ok
