"""One validate run resolves each choice once; the executor and writers read the result.

Calls are counted by code object (``sys.setprofile``), so a resolver reached through any
import path, alias or module counts.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

import pytest

import submission_recipe
from aicr import ctrf, run_plan
from aicr.catalog.params import check_params
from aicr.cncf import aggregation, vendor
from aicr.cncf.requirements import model as requirements
from aicr.run_plan import ValidateRequest
from aicr.runner.context import RunContext
from aicr.validate import run
from executor_fakes import FakeExecutor

DATA = Path(__file__).parents[1] / "data"
ROOT = Path(__file__).parents[2]
H100 = str(ROOT / "recipes" / "h100-eks-ubuntu-training.yaml")
SUBMISSION = submission_recipe.path()
SNAPSHOT = str(DATA / "snapshots" / "ok.yaml")
VENDOR = str(DATA / "configs" / "vendor.yaml")

RESOLVERS: dict[str, Callable[..., Any]] = {
    "cncf version": requirements.resolve_conformance,
    "validator image": run_plan.resolve_image,
    "vendor check": vendor.check_vendor,
    "n/a check": aggregation.check_not_applicable,
    "aggregation": aggregation.aggregate,
}


@contextmanager
def counting() -> Iterator[Counter[str]]:
    """Calls of each resolver, of ``load_requirements`` and of ``check_params`` per check."""
    codes: dict[CodeType, str] = {f.__code__: name for name, f in RESOLVERS.items()}
    params_code = check_params.__code__
    counts: Counter[str] = Counter()

    def profile(frame: FrameType, event: str, _: object) -> None:
        if event != "call":
            return
        if frame.f_code in codes:
            counts[codes[frame.f_code]] += 1
        elif frame.f_code is params_code:
            counts[f"params {frame.f_locals['name']}"] += 1

    requirements.load_requirements.cache_clear()
    sys.setprofile(profile)
    try:
        yield counts
    finally:
        sys.setprofile(None)
        info = requirements.load_requirements.cache_info()
        counts["requirement set"] = info.hits + info.misses


def test_a_no_cluster_run_resolves_each_choice_once() -> None:
    with counting() as counts:
        outcome = run(ValidateRequest(recipe=H100, snapshot=SNAPSHOT, no_cluster=True))
    assert outcome.plan is not None
    planned = outcome.plan.check_names
    assert len(planned) == 18
    assert {k: v for k, v in counts.items() if not k.startswith("params ")} == {
        "cncf version": 1, "requirement set": 1, "validator image": 1, "aggregation": 1}
    assert {k: v for k, v in counts.items() if k.startswith("params ")} == {
        f"params {name}": 1 for name in planned}


class RecordingExecutor(FakeExecutor):
    contexts: list[RunContext]

    def start(self, ctx: RunContext) -> None:
        self.contexts = [*getattr(self, "contexts", []), ctx]


def test_a_live_submission_resolves_once_and_the_executor_reads_the_resolved_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from aicr.snapshot.load import load_snapshot

    captured = load_snapshot(SNAPSHOT)
    monkeypatch.setattr("aicr.snapshot.capture.capture", lambda kube, timeout: captured)
    resolved: list[run_plan.ResolvedRun] = []
    real_context = sys.modules["aicr.validate"]._context

    def context(request: ValidateRequest, r: run_plan.ResolvedRun, *a: Any) -> RunContext:
        resolved.append(r)
        return real_context(request, r, *a)  # type: ignore[no-any-return]

    monkeypatch.setattr("aicr.validate._context", context)
    request = ValidateRequest(recipe=SUBMISSION, config=VENDOR, cncf_version="1.35",
                              cncf_submission=True, evidence_dir=str(tmp_path / "v1.35" / "x"),
                              orchestrator_node_selector={"pool": "cpu"},
                              node_selector={"pool": "gpu"})
    fake = RecordingExecutor()
    with counting() as counts:
        outcome = run(request, executor=fake)
    assert outcome.submission_path is not None, outcome.no_submission
    assert counts["cncf version"] == 1
    assert counts["requirement set"] == 1
    assert counts["validator image"] == 1
    # the submission's vendor data and N/A are checked before the run, the requirement
    # map decided once: the writer renders that one over the redacted report
    assert (counts["vendor check"], counts["n/a check"], counts["aggregation"]) == (1, 1, 1)
    assert all(n == 1 for k, n in counts.items() if k.startswith("params "))
    [ctx] = fake.contexts
    [r] = resolved
    assert r.snapshot is not None and "live capture" in r.snapshot.metadata["source"]
    assert ctx.snapshot is r.snapshot and ctx.config is r.config
    assert (ctx.image, ctx.orchestrator, ctx.workloads) == (r.image, r.orchestrator, r.workloads)
    assert ctx.orchestrator.node_selector == {"pool": "cpu"}
    assert ctx.workloads.node_selector == {"pool": "gpu"}
    assert r.conformance is not None and r.conformance.version == "1.35"
    assert outcome.report.extra is not None
    assert outcome.report.extra["aicr"]["provenance"]["validatorImage"] == r.image


def test_evidence_render_checks_the_config_and_aggregates_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from aicr.cli.main import run as cli

    fake = FakeExecutor()
    outcome = run(ValidateRequest(recipe=SUBMISSION, snapshot=SNAPSHOT), executor=fake)
    report = tmp_path / "report.json"
    report.write_text(ctrf.dumps(outcome.report))
    with counting() as counts:
        code = cli(["evidence", "render", "--report", str(report), "--recipe", SUBMISSION,
                    "--snapshot", SNAPSHOT, "--config", VENDOR, "--out",
                    str(tmp_path / "v1.35" / "x")])
    assert code == 0, capsys.readouterr().err
    assert (counts["vendor check"], counts["n/a check"], counts["aggregation"]) == (1, 1, 1)
