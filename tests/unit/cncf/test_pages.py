"""What a reviewer reads: pages that show the claim, no placeholders, no private paths."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from cncf_builders import (
    CONFORMANCE,
    VENDOR,
    make_config,
    make_recipe,
    make_report,
    make_snapshot,
    make_test,
    render_submission,
)

from aicr import ctrf
from aicr.cncf import verify
from aicr.cncf.requirements import Level, load_requirements
from aicr.cncf.submission import LIVE_SNAPSHOT
from aicr.ctrf import Report, Test

OBSERVED = [{"title": "PodGroup", "asked": "create a PodGroup of 2", "answer": "2/2 Running",
             "verdict": "all-or-nothing held"}]


def _tests(without_observations: tuple[str, ...] = ()) -> list[Test]:
    return [make_test(n, evidence=[] if n in without_observations else OBSERVED)
            for n in CONFORMANCE] + [make_test("operator-health", phase="deployment",
                                               evidence=OBSERVED)]


def _write(out: Path, report: Report | None = None, **kw: object) -> dict[str, str]:
    args: dict[str, object] = {
        "report": report or make_report(_tests()), "recipe": make_recipe(),
        "snapshot": make_snapshot(), "config": make_config(), "version": "1.35",
        "force": False, "recipe_source": "recipes/eks.yaml"}
    args.update(kw)
    render_submission(out, **args)  # type: ignore[arg-type]
    assert verify(out, version=None).ok
    return {str(p.relative_to(out)): p.read_text() for p in out.rglob("*") if p.is_file()}


def _note(files: dict[str, str], category: str, req_id: str) -> str:
    spec = yaml.safe_load(files["PRODUCT.yaml"])["spec"][category]
    return str(next(r for r in spec if r["id"] == req_id)["notes"])


def test_a_note_claims_observations_only_when_the_page_holds_them(tmp_path: Path) -> None:
    drm = "driver-runtime-management"  # backs a SHOULD only in 1.35
    files = _write(tmp_path / "v1.35" / "x", make_report(_tests((drm,))))
    note = _note(files, "accelerators", "driver_runtime_management")
    assert "What each asked of the cluster" not in note
    assert f"The report holds no recorded observations for {drm}" in note
    page = files["evidence/driver_runtime_management.md"]
    assert "The report holds no observations for this check" in page
    assert "What was asked of the cluster and what came back" not in page
    pods = _note(files, "schedulingOrchestration", "pod_autoscaling")
    assert "What each asked of the cluster and what came back: evidence/pod_autoscaling.md" in pods
    page = files["evidence/pod_autoscaling.md"]
    assert "#### PodGroup" in page and "2/2 Running" in page


def test_a_must_whose_checks_recorded_nothing_is_refused_naming_it(tmp_path: Path) -> None:
    from aicr.errors import SubmissionFailed

    out = tmp_path / "v1.35" / "x"
    with pytest.raises(SubmissionFailed, match="gang_scheduling \\(MUST\\): gang-scheduling"):
        _write(out, make_report(_tests(("gang-scheduling",))))
    assert not out.exists()


def test_a_report_without_run_id_writes_no_placeholder(tmp_path: Path) -> None:
    report = ctrf.build(_tests(), start=1_780_000_000_000, stop=1_780_000_100_000,
                        version="0.1.0", extra={"aicr": {"interrupted": False}})
    recipe = make_recipe()
    recipe = recipe.model_copy(update={"metadata": None})
    files = _write(tmp_path / "v1.35" / "x", report, recipe=recipe)
    for name, text in files.items():
        assert "unknown" not in text.lower(), name
    readme = files["README.md"]
    assert readme.count("records no run id") == 1
    assert "| Run id |" not in readme
    assert "from one run (its report records no run id)" in files["PRODUCT.yaml"]
    assert "ran and passed in the run:" in _note(files, "schedulingOrchestration",
                                                 "gang_scheduling")


def test_every_planned_check_missing_from_the_report_is_named(tmp_path: Path) -> None:
    reqs = load_requirements("1.35")
    # two checks whose absence blocks nothing: the deployment one and the last conformance
    # check that backs no MUST
    spare = next(c for c in reversed(CONFORMANCE)
                 if all(r.level != Level.MUST for r in reqs.backed_by(c)))
    tests = [t for t in _tests() if t.name not in ("operator-health", spare)]
    readme = _write(tmp_path / "v1.35" / "x", make_report(tests))["README.md"]
    planned = len(CONFORMANCE) + 1
    assert (f"The recipe planned {planned} checks for this submission; the report holds "
            f"{len(tests)} checks, {len(tests)} of them planned.") in readme
    assert "Planned but missing from the report (2)" in readme
    for name in ("operator-health", spare):
        backs = ", ".join(r.id for r in reqs.backed_by(name)) or "no requirement"
        assert f"- `{name}` (backs {backs})" in readme
    assert f"one test case per check in the report ({len(tests)} in all)" in readme


def test_vendor_name_ending_with_a_period_gets_no_second_one(tmp_path: Path) -> None:
    config = make_config(vendor={**VENDOR, "vendorName": "Example Cloud Inc."})
    readme = _write(tmp_path / "v1.35" / "x", config=config)["README.md"]
    assert "Vendor: Example Cloud Inc. Every status" in readme and "Inc.." not in readme


@pytest.mark.parametrize(
    ("recipe", "snapshot", "config", "shown"),
    [("/home/alice/work/eks.yaml", "/home/alice/work/snap.yaml", "/home/alice/cfg/vendor.yaml",
      ("eks.yaml", "snap.yaml", "vendor.yaml")),
     ("https://example.com/r/eks.yaml", "cm://aicr/snapshot", "../private/vendor.yaml",
      ("https://example.com/r/eks.yaml", "cm://aicr/snapshot", "vendor.yaml"))],
    ids=["absolute-paths", "url-and-configmap"],
)
def test_inputs_are_shown_by_name_never_by_local_path(
        tmp_path: Path, recipe: str, snapshot: str, config: str,
        shown: tuple[str, str, str]) -> None:
    readme = _write(tmp_path / "v1.35" / "example", recipe_source=recipe,
                    snapshot_source=snapshot, config_source=config)["README.md"]
    assert "/home/" not in readme and "../" not in readme and str(tmp_path) not in readme
    r, s, c = shown
    assert f"| Recipe | {r} | `--recipe` |" in readme
    assert f"| Snapshot | {s} | `--snapshot` |" in readme
    assert f"| Validate config | {c} | `--config` |" in readme
    assert (f"aicr validate --recipe {r} --snapshot {s} --config {c} \\\n"
            "  --cncf-submission --evidence-dir v1.35/example -o report.json") in readme
    assert f"aicr evidence render --report report.json --recipe {r} --snapshot {s}" in readme


def test_a_live_snapshot_is_named_as_such(tmp_path: Path) -> None:
    readme = _write(tmp_path / "v1.35" / "x", snapshot_source=LIVE_SNAPSHOT)["README.md"]
    assert "| Snapshot | captured live from the cluster | `--snapshot` |" in readme
    assert "--snapshot" not in readme.split("## How to reproduce")[1].split("## Verifier")[0]


def test_the_redaction_table_lists_every_class(tmp_path: Path) -> None:
    from aicr.redaction import CLASS_DESCRIPTIONS

    readme = _write(tmp_path / "v1.35" / "x")["README.md"]
    table = readme.split("## Redaction")[1]
    for cls in CLASS_DESCRIPTIONS:
        assert f"\n| {cls} | " in table


SERIAL = "1654922012345"
LEAKY_OUTPUT = [
    "nvidia-smi --query-gpu=index,serial --format=csv", "index, serial", f"0, {SERIAL}",
    f"GPU 0 on board serial {SERIAL}",
    "cluster arn:aws:eks:us-west-2:123456789012:cluster/eks-secret-prod",
    "/subscriptions/0f1e2d3c-4b5a-6978-8091-a2b3c4d5e6f7/resourceGroups/rg-secret-gpu/providers/"
    "Microsoft.ContainerService/managedClusters/aks-secret-prod",
    "projects/canary-project-42/locations/us-central1/clusters/gke-secret-prod",
    "started 1780000000000 after 1654922 ms; busbw 450.12 GB/s; 85520809984 bytes",
]


def test_one_pass_removes_serials_and_names_in_cloud_ids_and_keeps_figures(
        tmp_path: Path) -> None:
    tests = [make_test(n, stdout=LEAKY_OUTPUT, evidence=OBSERVED) for n in CONFORMANCE]
    files = _write(tmp_path / "v1.35" / "x", make_report(tests))
    for text in files.values():
        for secret in (SERIAL, "eks-secret-prod", "aks-secret-prod", "gke-secret-prod",
                       "rg-secret-gpu", "123456789012"):
            assert secret not in text
    page = files["evidence/gang_scheduling.md"]
    assert "started 1780000000000 after 1654922 ms; busbw 450.12 GB/s; 85520809984 bytes" in page
    assert "0, sn-1" in page and "board serial sn-1" in page
    assert "serial serial" not in page  # no doubled word


def test_readme_times_the_run_from_its_summary_and_says_when_the_snapshot_was_taken(
        tmp_path: Path) -> None:
    snap = make_snapshot().model_copy(update={"metadata": {
        "source": "live capture", "timestamp": "2026-05-28T20:20:00Z"}})
    readme = _write(tmp_path / "v1.35" / "x", snapshot=snap)["README.md"]
    # make_report: summary.start 1_780_000_000_000, stop 100 s later; its timestamp differs
    assert "| Run started | 2026-05-28T20:26:40Z |" in readme
    assert "| Run ended | 2026-05-28T20:28:20Z |" in readme
    assert "| Run duration | 100 s |" in readme
    assert "| Snapshot captured | 2026-05-28T20:20:00Z (live capture) |" in readme


def test_kubernetes_version_keeps_the_patch_level_and_drops_the_build() -> None:
    from aicr.cncf.vendor import kubernetes_version

    assert kubernetes_version("v1.35.6-eks-3025e55", "1.35") == "v1.35.6"
    assert kubernetes_version("v1.34.2", "1.35") == "v1.35"  # another minor: not this one
    assert kubernetes_version(None, "1.35") == "v1.35"
