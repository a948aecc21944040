from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cncf_builders import SUBMISSIONS

from aicr.cncf import verify
from aicr.errors import FlagConflictError, InputError

# CNCF.md: verdicts of the 2026-08 validator with network checks stubbed.
VERDICTS = [
    ("v1.36/aks", True, []),
    ("v1.36/Softbank", True, []),
    ("v1.35/daocloud", True, []),
    ("v1.35/kops", True, []),
    ("v1.34/Taichu", True, []),
    ("v1.34/ovh", False, ["metadata.platformVersion: must be a string, got a number (1.0)",
                          "metadata.k8sConformanceUrl: required field is missing",
                          "'./schedulingOrchestration.md#gang_scheduling' does not exist",
                          "'./dra.yaml' does not exist"]),
    ("v1.33/talos", False, ["cannot be decoded: spec.schedulingOrchestration[1].evidence: "
                            "expected a list of strings, got a string ('N/A')"]),
    ("v1.35/cks", False, ["metadata.k8sConformanceUrl: required field is missing",
                          "requirement 'driver_runtime_management' is missing",
                          "requirement 'gpu_sharing' is missing",
                          "requirement 'virtualized_accelerator' is missing"]),
]


@pytest.mark.parametrize(("rel", "ok", "expected"), VERDICTS, ids=[v[0] for v in VERDICTS])
def test_real_submissions_get_the_documented_verdicts(
        rel: str, ok: bool, expected: list[str]) -> None:
    result = verify(SUBMISSIONS / rel, version=None)
    assert result.ok is ok, result.errors
    assert result.version == rel[1:5]
    for fragment in expected:
        assert any(fragment in e for e in result.errors), (fragment, result.errors)
    assert result.errors == sorted(result.errors)


def test_cks_has_exactly_four_errors() -> None:
    assert len(verify(SUBMISSIONS / "v1.35/cks", version=None).errors) == 4


def test_members_and_online_checks_only_when_asked(tmp_path: Path) -> None:
    d = tmp_path / "v1.36" / "aks"
    shutil.copytree(SUBMISSIONS / "v1.36/aks", d)
    assert verify(d, version=None).ok
    bad = verify(d, version=None, members={"Google"})
    assert bad.errors == [
        "PRODUCT.yaml: metadata.vendorName: 'Microsoft' is not a CNCF member name"]
    assert verify(d, version=None, members={"Microsoft"}).ok
    calls: list[str] = []

    def fetch(url: str) -> str | None:
        calls.append(url)
        return "is unreachable (HTTP 404)" if "ray-overview" in url else None

    online = verify(d, version=None, online=True, fetch=fetch)
    assert len(online.errors) == 1 and "ray-overview" in online.errors[0]
    assert calls  # URLs were checked only because online=True


def test_version_from_flag_when_path_has_none(tmp_path: Path) -> None:
    d = tmp_path / "aks"
    shutil.copytree(SUBMISSIONS / "v1.36/aks", d)
    with pytest.raises(InputError, match="cannot tell the conformance version"):
        verify(d, version=None)
    assert verify(d, version="1.36").ok
    # judged against 1.35 it lacks dra_support
    assert any("dra_support" in e for e in verify(d, version="1.35").errors)


def test_flag_contradicting_the_path_is_refused() -> None:
    with pytest.raises(FlagConflictError):
        verify(SUBMISSIONS / "v1.36/aks", version="1.35")


def test_missing_directory_is_a_bad_invocation(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        verify(tmp_path / "v1.36" / "nope", version=None)


def _hybrid_dir(tmp_path: Path, evidence: list[str], junit_fail: bool = False,
                log_lines: str | None = None) -> Path:
    """A v1.37 submission copied from aks with one evidence list swapped in."""
    d = tmp_path / "v1.37" / "x"
    d.mkdir(parents=True)
    text = (SUBMISSIONS / "v1.36/aks/PRODUCT.yaml").read_text().replace("v1.36", "v1.37")
    text = text.replace(
        '        - "https://learn.microsoft.com/azure/aks/kueue-overview"\n'
        '        - "https://learn.microsoft.com/azure/aks/deploy-batch-jobs-with-kueue"\n',
        "".join(f'        - "{e}"\n' for e in evidence))
    text = text.replace("  security:\n", '  security:\n    - id: workload_sandboxing\n'
                        '      level: SHOULD\n      status: ""\n      evidence: []\n')
    (d / "PRODUCT.yaml").write_text(text)
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
