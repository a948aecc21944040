from __future__ import annotations

import pytest
from cncf_builders import (
    CONFORMANCE,
    made_unbacked,
    make_config,
    make_report,
    make_test,
    unbacked_should,
)

from aicr.cncf import ReqStatus, aggregate, check_not_applicable, check_recipe_coverage
from aicr.cncf.requirements import load_requirements
from aicr.ctrf import Status
from aicr.errors import InputError

R35 = load_requirements("1.35")


def _agg(tests, planned=CONFORMANCE, config=None, reqs=R35, **aicr):  # type: ignore[no-untyped-def]
    return aggregate(reqs, make_report(tests, **aicr), list(planned), config or make_config())


def _without(name: str) -> list:  # type: ignore[type-arg]
    return [make_test(n) for n in CONFORMANCE if n != name]


@pytest.mark.parametrize(
    ("status", "expected"),
    [(Status.PASSED, ReqStatus.IMPLEMENTED), (Status.FAILED, ReqStatus.INCOMPLETE),
     (Status.SKIPPED, ReqStatus.INCOMPLETE), (Status.PENDING, ReqStatus.INCOMPLETE),
     (Status.OTHER, ReqStatus.INCOMPLETE)],
    ids=["passed", "failed", "skipped", "pending", "other"],
)
def test_a_must_is_implemented_only_when_its_check_passed(
        status: Status, expected: ReqStatus) -> None:
    tests = [*_without("gang-scheduling"), make_test("gang-scheduling", status)]
    agg = _agg(tests)
    assert agg.result("gang_scheduling").status == expected  # type: ignore[union-attr]
    assert bool(agg.blocking) == (expected != ReqStatus.IMPLEMENTED)


def test_a_missing_planned_check_is_incomplete_and_says_so() -> None:
    agg = _agg(_without("robust-controller"))
    res = agg.result("robust_controller")
    assert res.status == ReqStatus.INCOMPLETE  # type: ignore[union-attr]
    assert res.reasons == ["robust-controller is missing from the report (planned by the recipe)"]  # type: ignore[union-attr]
    assert any("MUST robust_controller is incomplete" in b for b in agg.blocking)


def test_timed_out_check_reason_carries_the_status_detail() -> None:
    tests = [*_without("accelerator-metrics"),
             make_test("accelerator-metrics", Status.OTHER, detail="timeout", message="deadline")]
    res = _agg(tests).result("accelerator_metrics")
    assert res.reasons == ["accelerator-metrics other (timeout; deadline)"]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("status", "expected"),
    [(Status.PASSED, ReqStatus.IMPLEMENTED), (Status.FAILED, ReqStatus.NOT_IMPLEMENTED),
     (Status.SKIPPED, ReqStatus.NOT_IMPLEMENTED)],
    ids=["passed", "failed", "skipped"],
)
def test_a_should_never_blocks(status: Status, expected: ReqStatus) -> None:
    tests = [*_without("driver-runtime-management"), make_test("driver-runtime-management", status)]
    agg = _agg(tests)
    assert agg.result("driver_runtime_management").status == expected  # type: ignore[union-attr]
    assert agg.blocking == []
    # outside a submission a failed check still counts as failed
    assert bool(agg.failed_checks) == (status == Status.FAILED)


@pytest.mark.parametrize("pick", [unbacked_should, made_unbacked],
                         ids=["the-versions-own-or-made", "made"])
def test_unbacked_should_is_not_implemented_with_a_note(pick) -> None:  # type: ignore[no-untyped-def]
    reqs, unbacked = pick(R35)
    res = _agg([make_test(n) for n in CONFORMANCE], reqs=reqs).result(unbacked)
    assert res.status == ReqStatus.NOT_IMPLEMENTED  # type: ignore[union-attr]
    assert "no aicr check backs" in res.reasons[0]  # type: ignore[union-attr]


def test_a_failed_check_backing_no_requirement_blocks_a_submission() -> None:
    tests = [make_test(n) for n in CONFORMANCE] + [
        make_test("operator-health", Status.FAILED, phase="deployment")]
    agg = _agg(tests)
    assert [b for b in agg.blocking if "operator-health failed" in b]
    unbacked = {t.name for t in agg.unbacked_tests}
    # workload-sandboxing backs nothing before 1.37; health checks back nothing at all
    assert {"operator-health", "workload-sandboxing", "platform-health"} <= unbacked
    assert "gang-scheduling" not in unbacked


def test_a_skipped_check_backing_no_requirement_does_not_block() -> None:
    tests = [make_test(n) for n in CONFORMANCE] + [
        make_test("nccl-all-reduce-bw", Status.SKIPPED, phase="performance", reason="1 node")]
    assert _agg(tests).blocking == []


def test_interrupted_run_blocks() -> None:
    agg = _agg([make_test(n) for n in CONFORMANCE], interrupted=True)
    assert agg.blocking == ["the run was interrupted; a partial run cannot back a submission"]


def test_na_from_config_on_a_conditional_must_and_failed_check_is_tolerated() -> None:
    config = make_config(not_applicable={"cluster_autoscaling": "Fixed-size on-prem clusters."})
    tests = [*_without("cluster-autoscaling"), make_test("cluster-autoscaling", Status.FAILED)]
    agg = _agg(tests, config=config)
    res = agg.result("cluster_autoscaling")
    assert res.status == ReqStatus.NOT_APPLICABLE  # type: ignore[union-attr]
    assert res.justification == "Fixed-size on-prem clusters."  # type: ignore[union-attr]
    assert agg.blocking == []
    reason = agg.export_skip_reason(tests[-1])
    assert reason is not None and "cluster_autoscaling reported N/A" in reason


def test_rows_list_level_status_and_check_verdicts() -> None:
    row = next(r for r in _agg(_without("dra-support")).rows if r.id == "dra_support")
    assert (row.level, row.status, row.checks) == ("MUST", "incomplete",
                                                  ["dra-support (missing)"])


@pytest.mark.parametrize(
    ("na", "message"),
    [({"gang_scheduling": "We use no gangs."}, "gang_scheduling is not conditional"),
     ({"gang_schedulng": "x"}, "did you mean 'gang_scheduling'?"),
     ({"pod_autoscaling": "  "}, "N/A needs a written justification")],
    ids=["not-conditional", "unknown-id", "empty-justification"],
)
def test_not_applicable_refusals(na: dict[str, str], message: str) -> None:
    with pytest.raises(InputError) as exc:
        check_not_applicable(R35, make_config(not_applicable=na), "cfg.yaml")
    assert exc.value.exit_code == 2
    assert message in str(exc.value)
    assert "spec.validate.evidence.cncf.notApplicable." in str(exc.value)


@pytest.mark.parametrize(("version", "warns"), [("1.36", True), ("1.37", False)],
                         ids=["upstream-rejects", "hybrid-accepts"])
def test_na_on_a_must_warns_loudly_up_to_1_36(version: str, warns: bool) -> None:
    config = make_config(not_applicable={"cluster_autoscaling": "Fixed-size clusters only."})
    warnings = check_not_applicable(load_requirements(version), config, "cfg.yaml")
    assert bool(warnings) == warns
    if warns:
        assert warnings[0].startswith("cluster_autoscaling is a MUST declared N/A")


def test_recipe_coverage_lists_every_gap() -> None:
    planned = [c for c in CONFORMANCE if c not in ("gang-scheduling", "pod-autoscaling")]
    with pytest.raises(InputError) as exc:
        check_recipe_coverage(R35, planned, make_config())
    text = str(exc.value)
    assert "MUST gang_scheduling needs check(s) gang-scheduling" in text
    assert "MUST pod_autoscaling needs check(s) pod-autoscaling" in text
    assert "declare it N/A" in text  # only offered for the conditional one
    assert text.count("declare it N/A") == 1


def test_recipe_coverage_accepts_an_allowed_na() -> None:
    planned = [c for c in CONFORMANCE if c != "cluster-autoscaling"]
    config = make_config(not_applicable={"cluster_autoscaling": "Fixed-size clusters only."})
    check_recipe_coverage(R35, planned, config)  # does not raise


def test_the_decisions_over_a_redacted_report_quote_only_its_messages() -> None:
    tests = [*_without("gang-scheduling"),
             make_test("gang-scheduling", Status.FAILED, message="split on gpu-node-7")]
    agg = _agg(tests)
    shown = make_report([t.model_copy(update={"message": t.message.replace("gpu-node-7", "<node>")})
                         for t in tests])
    over = agg.over(shown)
    assert [(r.id, r.status) for r in over.results] == [(r.id, r.status) for r in agg.results]
    assert over.result("gang_scheduling").reasons == [  # type: ignore[union-attr]
        "gang-scheduling failed (split on <node>)"]
    assert over.blocking == [b.replace("gpu-node-7", "<node>") for b in agg.blocking]


def test_the_decisions_are_never_shown_over_another_run() -> None:
    agg = _agg([make_test(n) for n in CONFORMANCE])
    other = make_report([*_without("gang-scheduling"),
                         make_test("gang-scheduling", Status.FAILED)])
    with pytest.raises(ValueError, match="not those of the decided run"):
        agg.over(other)
