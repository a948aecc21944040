"""Removing components: each has its own deadline, and a stuck object says what holds it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException
from simcluster.cluster.sim import Sim
from simcluster.components import install
from simcluster.components.install import ComponentError

from fake_clock import Clock


class Obj:
    def __init__(self, body: dict[str, Any]) -> None:
        self.body = body

    def to_dict(self) -> dict[str, Any]:
        return self.body


class Cluster:
    """Objects go `linger` seconds of the clock after their delete (None: never)."""

    def __init__(self, clock: Clock, linger: dict[str, float | None]) -> None:
        self.clock, self.linger = clock, linger
        self.deleted_at: dict[str, float] = {}

    def get(self, name: str, **_: Any) -> Obj:
        at, linger = self.deleted_at.get(name), self.linger.get(name, 0.0)
        if at is not None and linger is not None and self.clock.now >= at + linger:
            raise ApiException(status=404)
        status = {"conditions": [
            {"type": "NamespaceContentRemaining", "status": "True", "message": "pods: 1 remain"},
            {"type": "NamespaceDeletionDiscoveryFailure", "status": "False"},
        ]}  # fmt: skip
        return Obj({"metadata": {"name": name, "finalizers": ["kubernetes"]}, "status": status})

    def delete(self, name: str, **_: Any) -> None:
        self.deleted_at.setdefault(name, self.clock.now)


class Dynamic:
    def __init__(self, cluster: Cluster) -> None:
        self.resources = self
        self.cluster = cluster

    def get(self, **_: Any) -> Cluster:
        return self.cluster


def ns(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "name": name, "namespace": None}


def remove(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, linger: dict[str, float | None]
) -> None:
    clock = Clock()
    cluster = Cluster(clock, linger)
    sim = Sim(tmp_path)
    (tmp_path / install.JOURNAL).write_text(json.dumps({n: [ns(n)] for n in linger}))
    monkeypatch.setattr(install.kube, "api_client", lambda path: None)
    monkeypatch.setattr(install.kube, "dynamic", lambda api: Dynamic(cluster))
    monkeypatch.setattr(install, "custom_objects", lambda dyn, refs: [])
    monkeypatch.setattr(install.time, "monotonic", clock.monotonic)
    monkeypatch.setattr(install.time, "sleep", clock.sleep)
    install.remove(sim, list(linger), timeout=100.0)


def test_each_component_has_its_own_deadline(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # 70 + 70 s is over one 100 s deadline, but each namespace goes within its own.
    remove(monkeypatch, tmp_path, {"kuberay": 70.0, "kueue": 70.0})
    assert install.journal(Sim(tmp_path)) == {}


def test_a_namespace_that_never_goes_names_what_holds_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with pytest.raises(ComponentError) as err:
        remove(monkeypatch, tmp_path, {"kuberay": None})
    assert str(err.value) == (
        "Namespace kuberay not deleted in 100 s "
        "(NamespaceContentRemaining: pods: 1 remain; finalizers kubernetes)"
    )
