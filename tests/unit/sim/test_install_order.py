"""Installing components: independent ones start side by side, a dependent one after its needs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from simcluster.cluster.sim import Sim
from simcluster.components import install, registry
from simcluster.components.base import Component
from simcluster.components.install import ComponentError


class Cluster:
    """Components become ready `polls` readiness checks after they are applied."""

    def __init__(self, polls: dict[str, int]) -> None:
        self.polls = dict(polls)
        self.events: list[str] = []

    def apply(self, name: str) -> None:
        self.events.append(f"apply {name}")

    def waiting_for(self, c: Component) -> list[str]:
        if f"apply {c.name}" not in self.events:
            return ["not applied"]
        if self.polls[c.name] > 0:
            self.polls[c.name] -= 1
            return [f"{c.name} pods"]
        if f"ready {c.name}" not in self.events:
            self.events.append(f"ready {c.name}")
        return []


def component(name: str, **kw: Any) -> Component:
    return Component(name, name, None, {}, lambda ctx: [{"name": name}], **kw)


def run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, components: list[Component],
    polls: dict[str, int], timeout: float = 180.0,
) -> Cluster:  # fmt: skip
    cluster = Cluster(polls)
    monkeypatch.setattr(registry, "BY_NAME", {c.name: c for c in components})
    monkeypatch.setattr(install, "require_built", lambda cs: None)
    monkeypatch.setattr(install.kube, "api_client", lambda path: None)
    monkeypatch.setattr(install.workloads, "ref", lambda o: o)
    monkeypatch.setattr(
        install.scenario, "apply", lambda sim, objs: [cluster.apply(o["name"]) or o for o in objs]
    )
    monkeypatch.setattr(install, "waiting_for", lambda sim, c: cluster.waiting_for(c))
    monkeypatch.setattr(install.time, "sleep", lambda s: None)
    install.install(Sim(tmp_path), components, timeout)
    return cluster


def test_independent_components_are_all_applied_before_any_is_ready(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    a, b = component("a"), component("b")
    events = run(monkeypatch, tmp_path, [a, b], {"a": 3, "b": 1}).events
    assert events[:2] == ["apply a", "apply b"]
    assert events.index("ready b") < events.index("ready a")


def test_a_component_is_applied_only_after_what_it_requires_is_ready(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    base, user = component("base"), component("user", requires=("base",))
    events = run(monkeypatch, tmp_path, [base, user], {"base": 2, "user": 0}).events
    assert events == ["apply base", "ready base", "apply user", "ready user"]


def test_after_orders_only_when_both_are_selected(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    follower = component("follower", after=("leader",))
    events = run(monkeypatch, tmp_path, [follower], {"follower": 0}).events
    assert events == ["apply follower", "ready follower"]
    leader = component("leader")
    (tmp_path / "2").mkdir()
    polls = {"leader": 2, "follower": 0}
    events = run(monkeypatch, tmp_path / "2", [leader, follower], polls).events
    assert events.index("apply follower") > events.index("ready leader")


def test_a_component_never_ready_is_named_with_what_it_waits_for(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fast, stuck = component("fast"), component("stuck")
    with pytest.raises(ComponentError, match=r"not ready in 0 s: stuck: waiting for stuck pods$"):
        run(monkeypatch, tmp_path, [fast, stuck], {"fast": 0, "stuck": 10**9}, timeout=0.0)
