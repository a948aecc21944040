"""The probe session against the recording fake: create, wait, logs, close."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fakes import FakeKube

from aicr.checks.probes import Deadline, ProbePod, ProbeSession
from aicr.checks.steps import Step
from aicr.kube.placement import Placement, Toleration
from aicr.kube.rest import KubeApiError
from aicr.result import StepStatus

Obj = dict[str, Any]
LABELS = {"app.kubernetes.io/managed-by": "aicr", "aicr.nvidia.com/run-id": "r1"}
NS = "aicr-r1-x"


def session(kube: FakeKube, seconds: float = 120.0, **kw: Any) -> ProbeSession:
    placement = Placement({"pool": "gpu"}, (Toleration("maint", "NoSchedule"),))
    return ProbeSession(kube, NS, dict(LABELS), placement, Deadline.after(seconds), **kw)


def pod(name: str, **spec: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "i"}], **spec}}  # fmt: skip


def with_status(obj: Obj, phase: str, **status: Any) -> Obj:
    return {**obj, "status": {"phase": phase, **status}}


def test_create_labels_namespaces_and_places_the_object() -> None:
    kube = FakeKube()
    s = session(kube)
    own = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    made = s.create(pod("p", nodeSelector={"zone": "a"}, tolerations=[own]))
    meta, spec = made["metadata"], made["spec"]
    assert meta["namespace"] == NS and meta["labels"] == LABELS
    assert spec["nodeSelector"] == {"zone": "a", "pool": "gpu"}
    assert spec["tolerations"] == [own, {"key": "maint", "operator": "Equal",
                                         "effect": "NoSchedule"}]  # fmt: skip
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "c", "labels": {"mine": "yes"}}, "spec": {}}  # fmt: skip
    assert s.create(claim)["metadata"]["labels"] == {"mine": "yes", **LABELS}
    assert kube.calls == [("create", "Pod", NS, "p"), ("create", "ResourceClaim", NS, "c")]


def test_wait_lists_then_watches_until_every_created_object_gets_there() -> None:
    kube = FakeKube()
    kube.script["Pod"] = lambda p: [with_status(p, "Pending"), with_status(p, "Running"),
                                    with_status(p, "Succeeded")]  # fmt: skip
    s = session(kube)
    s.create(pod("a"))
    s.create(pod("b"))
    waited = s.wait("Pod", lambda o: (o.get("status") or {}).get("phase") == "Succeeded")
    assert waited.done and sorted(waited.objects) == ["a", "b"]
    assert waited.objects["a"]["status"]["phase"] == "Succeeded"
    assert ("watch", "Pod") in kube.calls  # events, not polling GETs


def test_an_object_created_here_and_deleted_since_does_not_hold_a_wait() -> None:
    kube = FakeKube()
    kube.script["Pod"] = lambda p: [with_status(p, "Succeeded")]
    s = session(kube)
    s.create(pod("gone"))
    kube.delete("Pod", "gone", NS)  # e.g. a lifecycle probe that deleted its own object
    s.create(pod("b"))
    waited = s.wait("Pod", lambda o: (o.get("status") or {}).get("phase") == "Succeeded",
                    budget=30)  # fmt: skip
    # known as deleted (it would otherwise hold the wait to its budget as "not found")
    assert "b" in waited.objects and waited.pending == {"gone": "deleted"}


def test_a_wait_that_runs_out_says_where_each_object_got_to() -> None:
    kube = FakeKube()
    unschedulable = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.",
    }
    kube.script["Pod"] = lambda p: (
        [with_status(p, "Pending", conditions=[unschedulable])] if p["metadata"]["name"] == "a"
        else [with_status({**p, "spec": {**p["spec"], "nodeName": "n1"}}, "Succeeded")]
    )  # fmt: skip
    s = session(kube)
    s.create(pod("a"))
    s.create(pod("b"))
    waited = s.wait("Pod", lambda o: (o.get("status") or {}).get("phase") == "Succeeded",
                    budget=0.3)  # fmt: skip
    assert not waited.done
    assert waited.pending == {
        "a": "Pending, unschedulable: 0/2 nodes are available: 2 Insufficient nvidia.com/gpu."
    }
    assert waited.seconds == pytest.approx(0.3)


def test_waits_are_capped_by_the_checks_deadline_less_cleanup_and_result() -> None:
    s = session(FakeKube(), seconds=45.0, cleanup_seconds=30.0)
    waited = s.wait("Pod", lambda o: True, budget=600)
    # nothing was created: nothing to wait for, and the budget is what the deadline left
    assert waited.done and waited.seconds <= 45.0 - 30.0 - 10.0 + 0.01


def test_close_deletes_newest_first_waits_until_gone_and_says_so() -> None:
    kube = FakeKube()
    s = session(kube)
    s.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
              "metadata": {"name": "c"}, "spec": {}})  # fmt: skip
    s.create(pod("p"))
    section = s.close()
    assert [c for c in kube.calls if c[0] == "delete"] == [
        ("delete", "Pod", NS, "p"),
        ("delete", "ResourceClaim", NS, "c"),
    ]
    assert kube.objects == []
    assert section is not None and section.status == StepStatus.PASSED
    assert section.asked == f"created ResourceClaim {NS}/c; created Pod {NS}/p"
    assert section.answer.startswith("all 2 deleted and gone after")
    assert s.close() is None  # closed exactly once


def test_close_reports_what_it_could_not_remove() -> None:
    kube = FakeKube()
    s = session(kube, cleanup_seconds=0.2)
    s.create(pod("p"))
    kube.fail["delete"] = KubeApiError(403, "Forbidden", "cannot delete")
    section = s.close()
    assert section is not None and section.status == StepStatus.FAILED
    assert section.answer == (
        f"Pod {NS}/p: HTTP 403 Forbidden: cannot delete; Pod {NS}/p still present after 0s"
    )


def test_a_transient_api_error_during_a_wait_is_retried() -> None:
    kube = FakeKube()
    kube.script["Pod"] = lambda p: [with_status(p, "Succeeded")]
    s = session(kube)
    s.create(pod("a"))
    kube.fail["watch"] = KubeApiError(503, "Service Unavailable", "")
    calls = {"n": 0}
    original = kube.listing

    def heal(*args: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:
            kube.fail.pop("watch")
        return original(*args)

    kube.listing = heal  # type: ignore[method-assign]
    waited = s.wait("Pod", lambda o: (o.get("status") or {}).get("phase") == "Succeeded",
                    budget=5)  # fmt: skip
    assert waited.done


def test_a_forbidden_wait_raises() -> None:
    kube = FakeKube()
    s = session(kube)
    s.create(pod("a"))
    kube.fail["watch"] = KubeApiError(403, "Forbidden", "cannot watch pods")
    with pytest.raises(KubeApiError, match="cannot watch pods"):
        s.wait("Pod", lambda o: False, budget=5)


def test_a_wait_with_no_budget_left_still_looks_once() -> None:
    kube = FakeKube()
    s = session(kube, seconds=1.0)  # less than cleanup and the result write need
    s.create(pod("a"))
    waited = s.wait("Pod", lambda o: (o.get("status") or {}).get("phase") == "Succeeded")
    assert waited.seconds == 0.0
    assert waited.pending == {"a": "Pending, not scheduled yet"}


def _ended(p: Obj) -> list[Obj]:
    name = p["metadata"]["name"]
    if name == "stuck":
        return [with_status(p, "Pending")]
    state = {"terminated": {"exitCode": 0 if name == "ok" else 3}}
    return [with_status(p, "Succeeded" if name == "ok" else "Failed",
                        containerStatuses=[{"name": "c", "state": state}])]  # fmt: skip


def _judge(code: int, log: str) -> tuple[list[str], str]:
    return ([] if code == 0 else [f"exited {code}: {log}"]), f"saw {log}"


def test_prove_judges_each_pod_on_its_own_step_after_one_wait() -> None:
    kube = FakeKube()
    kube.script["Pod"] = _ended
    kube.logs_of.update({("ok", "c"): "one GPU", ("bad", "c"): "no GPU"})
    steps: list[Step] = []

    @contextlib.contextmanager
    def record(title: str) -> Iterator[Step]:
        steps.append(Step(title))
        yield steps[-1]

    probes = [
        ProbePod(pod(n), label=f"step {n}", container="c", asked="(i, 1 GPU): ls",
                 judge=_judge, passed="fine")
        for n in ("ok", "bad", "stuck")
    ]  # fmt: skip
    session(kube).prove(record, probes, budget=0.5)
    got = [(s.title, s.asked, s.answer, s.status, s.reason) for s in steps]
    assert got[:2] == [
        ("step ok", f"pod {NS}/ok (i, 1 GPU): ls", "saw one GPU", StepStatus.PASSED, "fine"),
        ("step bad", f"pod {NS}/bad (i, 1 GPU): ls", "saw no GPU", StepStatus.FAILED,
         "exited 3: no GPU"),
    ]  # fmt: skip
    assert got[2][3] == StepStatus.FAILED
    assert got[2][4].startswith("the pod did not finish within 0s: Pending")
    assert [c[0] for c in kube.calls].count("create") == 3
