"""The verifier against real, merged CNCF submissions: the corpus is not ours to ship.

Set AICR_CNCF_SUBMISSIONS to a folder of ``vX.Y/<dir>/`` submissions (``.ci/run``
uses ``../shared/fixtures/cncf-submissions``). Unset, this module is skipped with
one line; set to a folder that is not such a corpus, it fails.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from aicr.cli.main import run
from aicr.cncf import verify

ENV = "AICR_CNCF_SUBMISSIONS"
if not os.environ.get(ENV):
    pytest.skip(f"real CNCF submissions: set {ENV} to a folder of vX.Y/<dir>/ submissions "
                "(.ci/run uses ../shared/fixtures/cncf-submissions)", allow_module_level=True)
SUBMISSIONS = Path(os.environ[ENV])
if not (SUBMISSIONS / "v1.36").is_dir():
    pytest.fail(f"{ENV}={SUBMISSIONS}: not a folder of vX.Y/<dir>/ submissions (no v1.36/)",
                pytrace=False)

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


# (dir, exit code, the upstream verdict): merged evidence in the wild holds GPU UUIDs, private
# addresses and GUIDs (CNCF.md), which the leak scan reports apart from the verdict (exit 8).
@pytest.mark.parametrize(
    ("rel", "code", "valid"),
    [("v1.36/aks", 0, True), ("v1.36/Softbank", 0, True), ("v1.35/daocloud", 8, True),
     ("v1.35/kops", 8, True), ("v1.34/Taichu", 0, True), ("v1.34/ovh", 8, False),
     ("v1.33/talos", 8, False), ("v1.35/cks", 1, False)],
    ids=lambda v: str(v),
)
def test_verify_exit_codes_on_real_submissions(rel: str, code: int, valid: bool,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    got = run(["evidence", "verify", str(SUBMISSIONS / rel)])
    stdout = capsys.readouterr().out
    assert got == code
    lines = stdout.strip().splitlines()
    verdict = next(i for i, line in enumerate(lines) if line.startswith(("VALID", "INVALID")))
    assert lines[verdict].startswith("VALID" if valid else "INVALID")
    assert lines[:verdict] == sorted(lines[:verdict])
    leaks = lines[verdict + 1:]
    assert bool(leaks) is (code == 8)
    assert all(line.startswith(("LEAK: ", "LEAKS: ")) for line in leaks)
