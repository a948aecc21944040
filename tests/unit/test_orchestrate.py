from __future__ import annotations

import threading
import time

import pytest

from aicr.catalog import load_catalog
from aicr.config import EMPTY_CONFIG
from aicr.ctrf import Status
from aicr.kube.target import KubeTarget
from aicr.plan import Plan, build, resolve_phases
from aicr.recipe.load import parse_recipe
from aicr.result import Detail
from aicr.runner.context import RunContext
from aicr.runner.events import Event
from aicr.runner.gpu_fit import Inventory
from aicr.runner.gpu_pool import GpuPool, InventoryReader, MemoryLedger
from aicr.runner.orchestrate import StopReason, run_plan
from executor_fakes import FakeExecutor, wait_until

RECIPE = parse_recipe(
    """
validation:
  deployment:
    checks: [operator-health, expected-resources, check-nvidia-smi, gpu-allocation-policy]
  conformance:
    checks: [platform-health, accelerator-metrics, ai-service-metrics, inference-gateway,
             dra-support, gang-scheduling, secure-accelerator-access]
"""
)
EXCLUSIVE = {"check-nvidia-smi", "dra-support", "gang-scheduling", "secure-accelerator-access"}


def make_plan(*phases: str) -> Plan:
    return build(RECIPE, load_catalog(), phases=resolve_phases(phases), config=EMPTY_CONFIG)


def ctx() -> RunContext:
    return RunContext(run_id="rtest", namespace="ns", recipe=RECIPE, recipe_source="r",
                      snapshot=None, config=EMPTY_CONFIG, kube=KubeTarget(), image="img")


@pytest.mark.parametrize("parallel", [1, 2, 4])
def test_parallelism_is_bounded_and_gpu_checks_never_overlap(parallel: int) -> None:
    plan = make_plan("conformance")
    fake = FakeExecutor(durations={c.name: 0.05 for c in plan.checks})
    out = run_plan(plan, fake, ctx(), parallel=parallel)
    assert fake.max_running <= parallel
    if parallel > 1:
        assert fake.max_running > 1
    assert not [pair for pair in fake.overlaps if set(pair) <= EXCLUSIVE]
    assert all(r.status == Status.PASSED for _, r in out.results)


def test_results_come_back_in_plan_order_whatever_finishes_first() -> None:
    plan = make_plan("conformance")
    durations = {c.name: 0.2 - i * 0.02 for i, c in enumerate(plan.checks)}
    parallel = run_plan(plan, FakeExecutor(durations=durations), ctx(), parallel=4)
    serial = run_plan(plan, FakeExecutor(durations=durations), ctx(), parallel=1)
    assert [c.name for c, _ in parallel.results] == plan.check_names
    assert [(c.name, r.status, r.message) for c, r in parallel.results] == [
        (c.name, r.status, r.message) for c, r in serial.results
    ]


@pytest.mark.parametrize("status", [Status.FAILED, Status.OTHER], ids=["failed", "other"])
def test_a_failing_phase_skips_later_phases(status: Status) -> None:
    plan = make_plan("all")
    fake = FakeExecutor(results={"expected-resources": (status, "bad")})
    out = run_plan(plan, fake, ctx(), parallel=2)
    by_name = {c.name: r for c, r in out.results}
    assert by_name["expected-resources"].status == status
    assert by_name["operator-health"].status == Status.PASSED
    conformance = [r for c, r in out.results if c.phase.value == "conformance"]
    assert conformance and all(r.status == Status.SKIPPED for r in conformance)
    assert {r.message for r in conformance} == {
        "not run: the deployment phase had failing checks"
    }
    assert {r.detail for r in conformance} == {Detail.PHASE_STOPPED}
    assert not set(fake.started) & {c.name for c in plan.checks if c.phase.value == "conformance"}


def test_an_executor_crash_is_other_not_pass() -> None:
    out = run_plan(make_plan("deployment"), FakeExecutor(raises={"operator-health"}), ctx(),
                   parallel=1)
    result = dict((c.name, r) for c, r in out.results)["operator-health"]
    assert result.status == Status.OTHER
    assert result.message == "executor error: RuntimeError: boom"


def test_interrupt_stops_launching_and_reports_everything_other() -> None:
    plan = make_plan("all")
    fake = FakeExecutor(durations={c.name: 5.0 for c in plan.checks})
    context = ctx()
    threading.Timer(0.3, context.cancel.set).start()
    out = run_plan(plan, fake, context, parallel=1)
    assert out.stopped == StopReason.INTERRUPTED
    statuses = [(c.name, r.status, r.detail) for c, r in out.results]
    assert statuses[0] == ("operator-health", Status.OTHER, Detail.INTERRUPTED)
    assert all(s == Status.OTHER for _, s, _ in statuses)
    assert fake.started == ["operator-health"]
    assert dict((c.name, r) for c, r in out.results)["platform-health"].message == (
        "not started: the run was stopped"
    )


def test_run_deadline_turns_unfinished_checks_into_timeouts() -> None:
    plan = make_plan("deployment")
    fake = FakeExecutor(durations={"operator-health": 0.0, "expected-resources": 5.0})
    out = run_plan(plan, fake, ctx(), parallel=1, deadline=time.monotonic() + 0.3,
                   timeout_text="300ms")
    by_name = {c.name: r for c, r in out.results}
    assert out.stopped == StopReason.TIMEOUT
    assert by_name["operator-health"].status == Status.PASSED
    assert by_name["expected-resources"].detail == Detail.TIMEOUT
    assert by_name["expected-resources"].message == (
        "the run's --timeout 300ms expired: stopped while running"
    )
    assert by_name["check-nvidia-smi"].message == "not started: the run's --timeout 300ms expired"


def test_events_report_every_start_and_finish() -> None:
    seen: list[tuple[str, str | None]] = []
    plan = make_plan("deployment")
    run_plan(plan, FakeExecutor(), ctx(), parallel=2,
             events=lambda e: seen.append((e.kind.value, e.check)))
    wait_until(lambda: len(seen) >= 2 * len(plan.checks) + 2)
    finished = [c for k, c in seen if k == "check-finished"]
    assert sorted(finished) == sorted(plan.check_names)
    assert seen[0] == ("phase-started", None) and seen[-1] == ("phase-finished", None)


def test_interrupt_seen_first_by_the_executor_still_marks_the_run_interrupted() -> None:
    plan = build(parse_recipe("validation: {conformance: {checks: [platform-health]}}"),
                 load_catalog(), phases=resolve_phases(["all"]), config=EMPTY_CONFIG)
    context = ctx()
    threading.Timer(0.2, context.cancel.set).start()
    out = run_plan(plan, FakeExecutor(durations={"platform-health": 5.0}), context, parallel=1)
    assert out.stopped == StopReason.INTERRUPTED
    assert out.results[0][1].detail == Detail.INTERRUPTED


def test_a_signal_before_a_phase_starts_runs_nothing() -> None:
    context = ctx()
    context.cancel.set()
    fake = FakeExecutor()
    out = run_plan(make_plan("all"), fake, context, parallel=2)
    assert out.stopped == StopReason.INTERRUPTED and fake.started == []
    assert {r.status for _, r in out.results} == {Status.OTHER}


def gpu_plan(*names: str) -> Plan:
    recipe = parse_recipe(f"validation: {{conformance: {{checks: [{', '.join(names)}]}}}}")
    return build(recipe, load_catalog(), phases=resolve_phases(["conformance"]),
                 config=EMPTY_CONFIG)  # fmt: skip


def reader(usable: dict[str, int]) -> InventoryReader:
    """A cluster whose schedulable GPU nodes have ``usable`` free GPUs, nothing else running."""
    return lambda: lambda holders: Inventory(dict(usable))


def test_gpu_checks_whose_reservations_fit_together_overlap() -> None:
    # 2 nodes x 3 GPUs: dra-support takes 1, secure-accelerator-access 4 of the 5 left
    plan = gpu_plan("dra-support", "secure-accelerator-access", "driver-runtime-management")
    fake = FakeExecutor(durations={c.name: 0.3 for c in plan.checks},
                        gpu_reader=reader({"a": 3, "b": 3}))  # fmt: skip
    events: list[Event] = []
    out = run_plan(plan, fake, ctx(), parallel=4, gpus=fake.gpu_pool(ctx()), events=events.append)
    assert ("dra-support", "secure-accelerator-access") in fake.overlaps
    # driver-runtime-management needs 1 on every node: b is full until the pair ends
    assert not [p for p in fake.overlaps if "driver-runtime-management" in p
                and "secure-accelerator-access" in p]  # fmt: skip
    assert all(r.status == Status.PASSED for _, r in out.results)
    said = [e.message for e in events if e.check == "driver-runtime-management"
            and e.message.startswith("waiting")]  # fmt: skip
    assert said[0] == (
        "waiting for GPUs: needs 1 GPU on every GPU node; free now a 1, b 0; "
        "rtest/dra-support holds 1 GPU (a 1); rtest/secure-accelerator-access holds 4 GPUs "
        "(a 1, b 3)"
    )


def test_a_later_gpu_check_never_overtakes_an_earlier_one_that_waits() -> None:
    # cluster-autoscaling needs every free GPU: driver-runtime-management would fit beside
    # dra-support, but starting it would keep cluster-autoscaling waiting longer
    plan = gpu_plan("dra-support", "cluster-autoscaling", "driver-runtime-management",
                    "platform-health")  # fmt: skip
    fake = FakeExecutor(durations={c.name: 0.3 for c in plan.checks},
                        gpu_reader=reader({"a": 4, "b": 4}))  # fmt: skip
    run_plan(plan, fake, ctx(), parallel=4, gpus=fake.gpu_pool(ctx()))
    assert fake.started.index("cluster-autoscaling") < fake.started.index(
        "driver-runtime-management")
    gpu_pairs = [p for p in fake.overlaps if "platform-health" not in p]
    assert gpu_pairs == []  # every GPU check waited for the one before it here
    assert ("dra-support", "platform-health") in fake.overlaps  # checks without GPUs go on


def test_without_an_inventory_gpu_checks_run_one_at_a_time() -> None:
    plan = gpu_plan("dra-support", "secure-accelerator-access", "platform-health")
    fake = FakeExecutor(durations={c.name: 0.2 for c in plan.checks})
    run_plan(plan, fake, ctx(), parallel=4)
    assert ("dra-support", "secure-accelerator-access") not in fake.overlaps
    assert ("dra-support", "platform-health") in fake.overlaps


def test_two_runs_sharing_a_ledger_both_run_when_their_reservations_fit() -> None:
    ledger = MemoryLedger()
    plan = gpu_plan("dra-support")
    fakes = [FakeExecutor(durations={"dra-support": 0.5}) for _ in range(2)]
    pools = [GpuPool(f"r{i}", ledger, reader({"a": 1, "b": 1})) for i in range(2)]
    threads = [threading.Thread(target=run_plan, args=(plan, f, ctx()),
                                kwargs={"parallel": 1, "gpus": p})
               for f, p in zip(fakes, pools, strict=True)]  # fmt: skip
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # together, not one after the other: each ran while the other was running
    (a_start, a_end), (b_start, b_end) = (f.spans["dra-support"] for f in fakes)
    assert a_start < b_end and b_start < a_end, (fakes[0].spans, fakes[1].spans)
    # a third run finds no GPU left and waits until a holder is gone
    assert GpuPool("r2", ledger, reader({"a": 1})).try_reserve(plan.checks[0]).holding
    blocked = GpuPool("r3", ledger, reader({"a": 1})).try_reserve(plan.checks[0])
    assert blocked.holding is None and "r2/dra-support holds" in blocked.waiting


def test_a_run_stopped_while_a_check_waits_for_gpus_says_what_it_waited_for() -> None:
    ledger = MemoryLedger()
    plan = gpu_plan("dra-support")
    other = GpuPool("rother", ledger, reader({"a": 1}))
    assert other.try_reserve(plan.checks[0]).holding is not None
    context = ctx()
    threading.Timer(0.3, context.cancel.set).start()
    fake = FakeExecutor()
    out = run_plan(plan, fake, context, parallel=1,
                   gpus=GpuPool("rtest", ledger, reader({"a": 1})))  # fmt: skip
    assert fake.started == []
    ((_, result),) = out.results
    assert (result.status, result.detail) == (Status.OTHER, Detail.INTERRUPTED)
    assert result.message == (
        "not started: the run was stopped (waiting for GPUs: needs 1 GPU in all; "
        "free now a 0; rother/dra-support holds 1 GPU (a 1))"
    )
    assert set(ledger._held) == {"rother/dra-support"}  # the other run's holding is kept
