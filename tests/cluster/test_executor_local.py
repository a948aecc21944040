"""The local executor: same checks, same CTRF, the check's own ServiceAccount token."""

from __future__ import annotations

from harness import SimCluster
from runhelp import make_ctx, planned, remaining, run_one

from aicr.ctrf import Status
from aicr.result import Detail
from aicr.runner.job import JobExecutor
from aicr.runner.local import LocalExecutor


def test_local_and_job_results_agree(cluster: SimCluster) -> None:
    ns = cluster.fresh_namespace("missing-workloads")
    recipe = f"componentRefs:\n  - name: empty\n    namespace: {ns}\n"
    results = []
    for executor in (LocalExecutor(), JobExecutor()):
        ctx = make_ctx(cluster, recipe=recipe)
        result, left = run_one(executor, ctx, planned("platform-health"))
        assert left == [] and remaining(cluster, ctx.run_id) == []
        results.append(result)
    local, job = results
    assert local.status == job.status == Status.FAILED, (local.message, job.message)
    assert local.message == job.message
    assert "nothing shows the component runs" in local.message
    assert [s.model_dump(exclude={"timestamp"}) for s in local.evidence] == [
        s.model_dump(exclude={"timestamp"}) for s in job.evidence]  # fmt: skip


def test_local_subprocess_has_only_the_checks_rbac(cluster: SimCluster) -> None:
    spec = planned("platform-health").spec
    narrowed = [r.model_dump(by_alias=True) for r in spec.access]
    narrowed[0]["resources"] = [r for r in narrowed[0]["resources"] if r != "namespaces"]
    ctx = make_ctx(cluster)
    result, left = run_one(LocalExecutor(), ctx, planned("platform-health", access=narrowed))
    assert (result.status, result.detail) == (Status.OTHER, Detail.CRASHED), result.message
    assert "403" in result.message or "Forbidden" in result.message
    assert left == [] and remaining(cluster, ctx.run_id) == []
