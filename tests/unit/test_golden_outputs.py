"""No behaviour change: every output that needs no cluster, compared with committed goldens.

For the example recipes (recipes/) and the sample recipes, snapshots and configs the unit
tests use, this runs the CLI in this process and compares, byte for byte, with the files
under tests/data/golden/outputs/ (one per case, named after it):

- ``validate --no-cluster``: exit code, stderr (plan, gate, tables), the CTRF report and
  the JUnit XML;
- ``validate --dry-run``: every manifest the run would apply;
- ``images list`` and ``check list``;
- ``evidence render`` of a report in which every check of the submission recipe passed:
  every file of the submission, then ``evidence verify`` of it.

The submission recipe and that report are derived from the catalog (tests/submission_recipe.py)
and written to each case's folder, so a check that comes to back a MUST is planned and
passed there too: ``make golden`` shows it, and no input is edited by hand.

Values that differ on every run by design are replaced in one place, tests/golden.py.
A case that is added or dropped, or an output that changes, fails. After a deliberate
change of output, regenerate and review the diff:

    make golden      # = AICR_UPDATE_GOLDEN=1 pytest tests/unit/test_golden_outputs.py
    git diff tests/data/golden/outputs
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import submission_recipe
from aicr.cli import render
from aicr.cli.main import run
from golden import normalise, stable

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
GOLDEN = DATA / "golden" / "outputs"
INPUTS = DATA / "golden" / "inputs"
UPDATE = os.environ.get("AICR_UPDATE_GOLDEN") == "1"

RECIPES = {
    **{p.stem: p for p in sorted((ROOT / "recipes").glob("*.yaml"))},
    "small": DATA / "recipes" / "small.yaml",
    # derived from the catalog; written to the case's folder (``_write_inputs``)
    "submission": Path("{tmp}/submission.yaml"),
    "every-field": DATA / "aicr" / "every-field-recipe.yaml",
}
SNAPSHOTS = {p.stem: p for p in sorted((DATA / "snapshots").glob("*.yaml"))}
VENDOR = DATA / "configs" / "vendor.yaml"
MIRROR = INPUTS / "mirror-config.yaml"
H100 = RECIPES["h100-eks-ubuntu-training"]
OK = SNAPSHOTS["ok"]


@dataclass(frozen=True)
class Case:
    name: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    files: tuple[str, ...] = ()  # files (in the case's folder) the command writes, in order
    tree: str | None = None  # a folder the command writes, dumped file by file


def _validate(name: str, recipe: Path, *extra: str) -> Case:
    args = ("validate", "-r", str(recipe), "--no-cluster", "-o", "{tmp}/report.json",
            "--junit", "{tmp}/junit.xml", *extra)
    return Case(name, args, files=("report.json", "junit.xml"))


def cases() -> list[Case]:
    out: list[Case] = []
    for r, recipe in RECIPES.items():
        for s, snapshot in SNAPSHOTS.items():
            out.append(_validate(f"validate-{r}-{s}", recipe, "-s", str(snapshot)))
        out.append(_validate(f"validate-{r}-ok-vendor", recipe, "-s", str(OK),
                             "--config", str(VENDOR)))
    h100 = [
        ("phase-conformance", ("--phase", "conformance")),
        ("phase-deployment-performance", ("--phase", "deployment", "--phase", "performance")),
        ("skip-checks", ("--skip-check", "dra-support", "--skip-check", "nccl-all-reduce-bw")),
        ("cncf-1.34", ("--cncf-version", "1.34")),
        ("cncf-1.36", ("--cncf-version", "1.36")),
        ("cncf-unsupported", ("--cncf-version", "1.20")),
        ("image", ("--image", "registry.example.com/team/validator:v9")),
        ("mirror", ("--config", str(MIRROR))),
        ("require-gpu", ("--require-gpu",)),
        ("no-fail-on-error", ("--no-fail-on-error",)),
    ]
    out += [_validate(f"validate-h100-ok-{n}", H100, "-s", str(OK), *a) for n, a in h100]
    out.append(_validate("validate-h100-no-snapshot", H100))
    out.append(_validate("validate-h100-gpu-require-gpu", H100, "-s", str(SNAPSHOTS["gpu"]),
                         "--require-gpu"))
    for fmt in ("table", "yaml"):
        out.append(Case(f"validate-h100-ok-format-{fmt}",
                        ("validate", "-r", str(H100), "-s", str(OK), "--no-cluster", "-t", fmt)))
    for r, recipe in RECIPES.items():
        out.append(Case(f"dry-run-{r}", ("validate", "-r", str(recipe), "-s", str(OK),
                                         "--dry-run")))
    out.append(Case("dry-run-h100-placement", (
        "validate", "-r", str(H100), "-s", str(OK), "--dry-run", "--config", str(MIRROR),
        "-n", "team-a", "--job-name", "nightly", "--image-pull-secret", "regcred",
        "--node-selector", "pool=gpu", "--toleration", "nvidia.com/gpu:NoSchedule",
        "--orchestrator-node-selector", "pool=cpu",
        "--orchestrator-toleration", "dedicated=aicr:NoSchedule", "--no-cleanup")))
    out.append(Case("images-list", ("images", "list")))
    out.append(Case("images-list-performance", ("images", "list", "--phase", "performance")))
    out += [Case(f"images-list-{r}", ("images", "list", "-r", str(recipe)))
            for r, recipe in RECIPES.items()]
    out.append(Case("images-list-h100-mirror", ("images", "list", "-r", str(H100), "--config",
                                                str(MIRROR))))
    out.append(Case("images-list-env-registry", ("images", "list"),
                    env=(("AICR_VALIDATOR_IMAGE_REGISTRY", "env-mirror.example.com/m"),)))
    out += [Case(f"check-list-{o}", ("check", "list", "--output", o))
            for o in ("plain", "json", "table")]
    render_args = ("evidence", "render", "--report", "{tmp}/report-passed.json",
                   "--recipe", str(RECIPES["submission"]), "--snapshot", str(OK),
                   "--config", str(VENDOR))
    out.append(Case("evidence-render", (*render_args, "--out", "{tmp}/v1.35/example"),
                    tree="v1.35/example"))
    out.append(Case("evidence-render-cncf-1.34", (*render_args, "--cncf-version", "1.34",
                                                  "--out", "{tmp}/v1.34/example")))
    return out


CASES = cases()


@pytest.fixture(autouse=True)
def _hermetic(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No setting of this machine reaches the outputs: AICR_* variables, kubeconfig, width."""
    for key in list(os.environ):
        if key.startswith("AICR_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.setenv("COLUMNS", "160")
    monkeypatch.setattr(render.console, "width", 160)
    yield


def _dump_tree(folder: Path) -> str:
    blocks = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        blocks.append(f"=== {path.relative_to(folder)}\n{path.read_text(encoding='utf-8')}")
    return "".join(blocks)


def _passed_report() -> str:
    """A report in which every check of the submission recipe passed, its ids and times fixed."""
    sys.path.insert(0, str(ROOT / "tests" / "unit" / "cncf"))
    from cncf_builders import make_report, make_test

    from aicr import ctrf

    tests = [make_test("operator-health", phase="deployment"),
             *(make_test(n) for n in submission_recipe.conformance_checks())]
    return ctrf.dumps(make_report(
        tests, recipe="recipe.yaml", snapshot="snapshot.yaml",
        phases=["deployment", "conformance"], noCluster=False,
        trust={"class": "live", "why": "fixed golden input"}))


def _write_inputs(case: Case, tmp: Path) -> None:
    """The derived inputs a case reads from its folder."""
    if "{tmp}/submission.yaml" in case.args:
        submission_recipe.write(tmp)
    if "{tmp}/report-passed.json" in case.args:
        (tmp / "report-passed.json").write_text(_passed_report(), encoding="utf-8")


def output_of(case: Case, tmp: Path, capsys: pytest.CaptureFixture[str],
              monkeypatch: pytest.MonkeyPatch) -> str:
    for key, value in case.env:
        monkeypatch.setenv(key, value)
    _write_inputs(case, tmp)
    args = [a.replace("{tmp}", str(tmp)) for a in case.args]
    capsys.readouterr()
    code = run(args)
    out, err = capsys.readouterr()
    text = [f"$ aicr {' '.join(case.args)}\n", f"exit {code}\n", f"--- stdout\n{out}",
            f"--- stderr\n{err}"]
    for name in case.files:
        path = tmp / name
        body = path.read_text(encoding="utf-8") if path.exists() else "(not written)\n"
        if name.endswith(".json") and path.exists():
            body = json.dumps(stable(json.loads(body)), indent=2) + "\n"
        text.append(f"--- {name}\n{body}")
    if case.tree is not None:
        text.append(f"--- {case.tree}/\n{_dump_tree(tmp / case.tree)}")
        verify = run(["evidence", "verify", str(tmp / case.tree)])
        vout, verr = capsys.readouterr()
        text.append(f"--- evidence verify: exit {verify}\n{vout}{verr}")
    return normalise("".join(text), tmp, ROOT)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_output_is_unchanged(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                             monkeypatch: pytest.MonkeyPatch) -> None:
    text = output_of(case, tmp_path, capsys, monkeypatch)
    path = GOLDEN / f"{case.name}.txt"
    if UPDATE:
        GOLDEN.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"no golden for {case.name}: run `make golden` and review the diff"
    assert text == path.read_text(encoding="utf-8"), (
        f"{case.name}: output differs from {path.relative_to(ROOT)} "
        "(a deliberate change: `make golden`, then review `git diff tests/data/golden`)")


def test_every_golden_has_a_case() -> None:
    names = {c.name for c in CASES}
    assert len(names) == len(CASES), "two cases share a name"
    if UPDATE:
        for stale in GOLDEN.glob("*.txt"):
            if stale.stem not in names:
                stale.unlink()
    assert {p.stem for p in GOLDEN.glob("*.txt")} == names


def test_normalise_replaces_only_the_volatile(tmp_path: Path) -> None:
    text = (f'aicr-r0123abcd-inputs nightly-r89abcdef time="0.1" timestamp="2026-01-01" '
            f"{tmp_path}/x {ROOT}/y rdeadbeefs r0123abc sha256:ab0123abcd\n"
            "  start: 17\nsummary.stop      18\n- duration: 0\nstarted: 1")
    assert normalise(text, tmp_path, ROOT) == (
        'aicr-<run-id>-inputs nightly-<run-id> time="<volatile>" timestamp="<volatile>" '
        "<tmp>/x <root>/y rdeadbeefs r0123abc sha256:ab0123abcd\n"
        "  start: <volatile>\nsummary.stop      <volatile>\n- duration: <volatile>\nstarted: 1")
    report = {"runId": "r1", "results": {"summary": {"start": 1, "tests": 2}}}
    assert stable(report) == {"runId": "<volatile>",
                              "results": {"summary": {"start": "<volatile>", "tests": 2}}}
