"""The shared Lease's bookkeeping against a fake coordination API: entries, staleness, races."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from aicr.runner import gpu_lease
from aicr.runner.gpu_fit import Holding
from aicr.runner.gpu_lease import LeaseLedger
from aicr.runner.manifests import RESERVATIONS_ANNOTATION

Obj = dict[str, Any]


class FakeCoord:
    """One namespace's Leases with resourceVersion preconditions, as the API server keeps them."""

    def __init__(self) -> None:
        self.lease: Obj | None = None
        self.version = 0
        self.conflicts = 0  # the next N writes lose a race

    def _stored(self, body: Obj) -> None:
        self.version += 1
        self.lease = json.loads(json.dumps(body))
        assert self.lease is not None
        self.lease["metadata"]["resourceVersion"] = str(self.version)

    def _race(self) -> None:
        if self.conflicts:
            self.conflicts -= 1
            self.version += 1  # someone else wrote meanwhile
            if self.lease is not None:
                self.lease["metadata"]["resourceVersion"] = str(self.version)
            raise ApiException(status=409)

    def read_namespaced_lease(self, name: str, ns: str, _preload_content: bool) -> Any:
        if self.lease is None:
            raise ApiException(status=404)
        return SimpleNamespace(data=json.dumps(self.lease))

    def create_namespaced_lease(self, ns: str, body: Obj) -> None:
        self._race()
        if self.lease is not None:
            raise ApiException(status=409)
        self._stored(body)

    def replace_namespaced_lease(self, name: str, ns: str, body: Obj) -> None:
        self._race()
        if self.lease is None:
            raise ApiException(status=404)
        if body["metadata"].get("resourceVersion") != self.lease["metadata"]["resourceVersion"]:
            raise ApiException(status=409)
        self._stored(body)

    def delete_namespaced_lease(self, name: str, ns: str, body: Obj) -> None:
        assert self.lease is not None
        if body["preconditions"]["resourceVersion"] != self.lease["metadata"]["resourceVersion"]:
            raise ApiException(status=409)
        self.lease = None

    def entries(self) -> dict[str, Obj]:
        assert self.lease is not None
        parsed: dict[str, Obj] = json.loads(self.lease["metadata"]["annotations"][
            RESERVATIONS_ANNOTATION])  # fmt: skip
        return parsed


def ledger(coord: FakeCoord, run: str) -> LeaseLedger:
    out = LeaseLedger(None, "ns", run)  # type: ignore[arg-type]
    out.coord = coord
    return out


def grant(gpus: dict[str, int]) -> Any:
    return lambda others: Holding(gpus)


def test_two_runs_hold_entries_side_by_side_and_the_last_one_deletes_the_lease() -> None:
    coord = FakeCoord()
    a, b = ledger(coord, "ra"), ledger(coord, "rb")
    assert a.reserve("ra/x", "1 GPU in all", grant({"n1": 1}))[0] == Holding({"n1": 1})
    seen: list[dict[str, Holding]] = []
    b.reserve("rb/y", "1 GPU in all", lambda others: seen.append(others) or Holding({"n2": 1}))
    assert seen == [{"ra/x": Holding({"n1": 1})}]  # b decided knowing what a holds
    assert {h: e["gpus"] for h, e in coord.entries().items()} == {
        "ra/x": {"n1": 1}, "rb/y": {"n2": 1}}
    assert coord.lease is not None and coord.lease["spec"]["holderIdentity"] == "ra/x,rb/y"
    a.release("ra/x")
    assert list(coord.entries()) == ["rb/y"]
    b.close()
    assert coord.lease is None


def test_a_refused_reservation_writes_nothing() -> None:
    coord = FakeCoord()
    got, others = ledger(coord, "ra").reserve("ra/x", "every free GPU", lambda others: None)
    assert (got, others, coord.lease) == (None, {}, None)


def test_a_lost_race_is_retried_against_the_new_state() -> None:
    coord = FakeCoord()
    coord.conflicts = 2
    assert ledger(coord, "ra").reserve("ra/x", "n", grant({"n1": 1}))[0] is not None
    assert list(coord.entries()) == ["ra/x"]


def _foreign(coord: FakeCoord, entries: Obj | None, holder: str = "", seconds: int = 30) -> None:
    meta: Obj = {"name": "aicr-exclusive-gpus"}
    if entries is not None:
        meta["annotations"] = {RESERVATIONS_ANNOTATION: json.dumps(entries)}
    coord._stored({"metadata": meta, "spec": {"holderIdentity": holder,
                                              "leaseDurationSeconds": seconds}})  # fmt: skip


@pytest.mark.parametrize(
    ("entries", "holder", "expected"),
    [
        ({"rold/c": {"gpus": {"n1": 2}, "all": False}}, "", {"rold/c": Holding({"n1": 2})}),
        (None, "rold/c", {"rold/c": Holding(all=True)}),  # an older aicr: took the GPUs whole
        ({"rold/c": {"gpus": "two"}}, "", {"rold/c": Holding(all=True)}),  # unreadable entry
    ],
    ids=["entry", "older-aicr", "malformed-entry"],
)
def test_others_entries_are_read_failing_closed(
    entries: Obj | None, holder: str, expected: dict[str, Holding]
) -> None:
    coord = FakeCoord()
    _foreign(coord, entries, holder)
    assert ledger(coord, "ra").reserve("ra/x", "n", lambda others: None)[1] == expected


def test_an_unreadable_annotation_holds_every_gpu() -> None:
    coord = FakeCoord()
    _foreign(coord, None)
    assert coord.lease is not None
    coord.lease["metadata"]["annotations"] = {RESERVATIONS_ANNOTATION: "{not json"}
    others = ledger(coord, "ra").reserve("ra/x", "n", lambda others: None)[1]
    assert others == {"unreadable": Holding(all=True)}


def test_an_entry_unchanged_for_the_lease_duration_is_dropped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [1000.0]
    monkeypatch.setattr(gpu_lease.time, "monotonic", lambda: clock[0])
    coord = FakeCoord()
    _foreign(coord, {"rdead/c": {"gpus": {"n1": 8}, "renewed": "t0"},
                     "rlive/c": {"gpus": {"n2": 1}, "renewed": "t0"}}, seconds=30)  # fmt: skip
    mine = ledger(coord, "ra")
    assert set(mine.reserve("ra/x", "n", lambda others: None)[1]) == {"rdead/c", "rlive/c"}
    clock[0] += 20
    entries = coord.entries()
    entries["rlive/c"]["renewed"] = "t1"  # rlive renews, rdead does not
    _foreign(coord, entries, seconds=30)
    clock[0] += 15  # rdead unchanged for 35 s, rlive for 15 s
    assert set(mine.reserve("ra/x", "n", grant({"n1": 1}))[1]) == {"rlive/c"}
    assert set(coord.entries()) == {"rlive/c", "ra/x"}  # the stale entry is gone for good


def test_an_entry_of_this_run_it_no_longer_holds_is_ignored() -> None:
    coord = FakeCoord()
    _foreign(coord, {"ra/old": {"gpus": {"n1": 8}, "all": True}}, seconds=600)
    assert ledger(coord, "ra").reserve("ra/x", "n", grant({"n1": 1}))[1] == {}
    assert set(coord.entries()) == {"ra/x"}
