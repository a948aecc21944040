"""Faults of the platform components: they need the component, stop its pods, heal to what was."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from simcluster.__main__ import main
from simcluster.cluster import Sim
from simcluster.components import coscheduling, gateway, kuberay, kueue
from simcluster.components import faults as components
from simcluster.faults import registry


class FakeApps:
    """A Deployment store answering read and merge-patch as the API server would."""

    def __init__(self, deployments: dict[tuple[str, str], dict[str, Any]]) -> None:
        self.deps = deployments

    def read_namespaced_deployment(self, name: str, ns: str) -> Any:
        d = self.deps[(ns, name)]
        return SimpleNamespace(
            metadata=SimpleNamespace(annotations=dict(d["annotations"])),
            spec=SimpleNamespace(replicas=d["replicas"], template=SimpleNamespace(
                spec=SimpleNamespace(containers=[SimpleNamespace(name="c")]))),
        )  # fmt: skip

    def patch_namespaced_deployment(self, name: str, ns: str, body: dict[str, Any]) -> None:
        d = self.deps[(ns, name)]
        for k, v in ((body.get("metadata") or {}).get("annotations") or {}).items():
            if v is None:
                d["annotations"].pop(k, None)
            else:
                d["annotations"][k] = v
        spec = body.get("spec") or {}
        if "replicas" in spec:
            d["replicas"] = spec["replicas"]
        if "template" in spec:
            d["args"] = spec["template"]["spec"]["containers"][0]["args"]


APPS = FakeApps({})


@pytest.fixture
def sim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sim:
    monkeypatch.setattr(Sim, "is_up", lambda self: True)
    monkeypatch.setattr(Sim, "enter", lambda self: None)
    monkeypatch.setattr(components, "_apps", lambda sim: APPS)
    return Sim(tmp_path)


def install(sim: Sim, *names: str) -> FakeApps:
    """Record `names` as installed; their Deployments as the fake API holds them."""
    (sim.dir / "components.json").write_text(json.dumps({n: [] for n in names}))
    APPS.deps = {
        (kueue.NAMESPACE, kueue.NAME): {"replicas": 1, "annotations": {}, "args": []},
        ("kube-system", "karpenter"): {"replicas": 2, "annotations": {}},
        (gateway.NAMESPACE, gateway.NAME): {"replicas": 1, "annotations": {}, "args": []},
        (kuberay.NAMESPACE, kuberay.NAME): {"replicas": 1, "annotations": {}, "args": []},
        (coscheduling.NAMESPACE, coscheduling.NAME): {"replicas": 1, "annotations": {},
                                                      "args": []},
    }
    return APPS


def test_a_component_fault_without_its_component_is_bad_input(
    sim: Sim, capsys: pytest.CaptureFixture[str]
) -> None:
    install(sim, "kueue")
    assert main(["fault", "autoscaler-stopped"], sim=sim) == 2
    assert "needs karpenter installed" in capsys.readouterr().err
    assert main(["fault", "gateway-auth-open"], sim=sim) == 2
    assert main(["fault", "webhook-fail-open"], sim=sim) == 2
    assert main(["fault", "operator-not-reconciling"], sim=sim) == 2
    assert "needs kuberay installed" in capsys.readouterr().err
    assert registry.active(sim) == []


def test_stopping_remembers_the_replicas_and_healing_restores_them(sim: Sim) -> None:
    apps = install(sim, "kueue", "karpenter")
    registry.apply(sim, "autoscaler-stopped")
    registry.apply(sim, "webhook-down")
    karpenter = apps.deps[("kube-system", "karpenter")]
    assert karpenter["replicas"] == 0
    assert apps.deps[("kueue-system", "kueue-controller-manager")]["replicas"] == 0
    registry.heal(sim)
    assert karpenter == {"replicas": 2, "annotations": {}}
    assert apps.deps[("kueue-system", "kueue-controller-manager")]["replicas"] == 1


def test_gateway_auth_open_drops_the_api_key_middleware_and_heal_restores_it(sim: Sim) -> None:
    apps = install(sim, "gateway")
    registry.apply(sim, "gateway-auth-open")
    args = apps.deps[(gateway.NAMESPACE, gateway.NAME)]["args"]
    assert not any(gateway.MIDDLEWARE in a for a in args)
    registry.heal(sim)
    assert apps.deps[(gateway.NAMESPACE, gateway.NAME)]["args"] == gateway.args()
    assert any(gateway.MIDDLEWARE in a for a in gateway.args())


def test_operator_not_reconciling_narrows_its_watch_and_heal_restores_it(sim: Sim) -> None:
    apps = install(sim, "kuberay")
    registry.apply(sim, "operator-not-reconciling")
    args = apps.deps[(kuberay.NAMESPACE, kuberay.NAME)]["args"]
    assert f"--watch-namespace={kuberay.NOWHERE}" in args
    registry.heal(sim)
    assert apps.deps[(kuberay.NAMESPACE, kuberay.NAME)]["args"] == kuberay.args()
    assert not any("--watch-namespace" in a for a in kuberay.args())


def test_gang_plugin_disabled_switches_to_the_config_without_coscheduling(sim: Sim) -> None:
    apps = install(sim, "coscheduling")
    registry.apply(sim, "gang-plugin-disabled")
    where = (coscheduling.NAMESPACE, coscheduling.NAME)
    assert f"--config=/config/{coscheduling.NO_GANG_FILE}" in apps.deps[where]["args"]
    data = coscheduling.config_map()["data"]
    assert "Coscheduling" in data[coscheduling.CONFIG_FILE]
    assert "Coscheduling" not in data[coscheduling.NO_GANG_FILE]
    assert coscheduling.SCHEDULER_NAME in data[coscheduling.NO_GANG_FILE]
    registry.heal(sim)
    assert apps.deps[where]["args"] == coscheduling.args()


def test_gang_scheduler_down_stops_the_second_scheduler(sim: Sim) -> None:
    apps = install(sim, "coscheduling")
    registry.apply(sim, "gang-scheduler-down")
    assert apps.deps[(coscheduling.NAMESPACE, coscheduling.NAME)]["replicas"] == 0
    registry.heal(sim)
    assert apps.deps[(coscheduling.NAMESPACE, coscheduling.NAME)]["replicas"] == 1


def test_gang_plugin_disabled_needs_coscheduling(
    sim: Sim, capsys: pytest.CaptureFixture[str]
) -> None:
    install(sim, "kueue")
    assert main(["fault", "gang-plugin-disabled"], sim=sim) == 2
    assert "needs coscheduling installed" in capsys.readouterr().err


def test_queue_jobs_unmanaged_switches_to_the_configuration_without_batch_job(sim: Sim) -> None:
    apps = install(sim, "kueue")
    registry.apply(sim, "queue-jobs-unmanaged")
    where = (kueue.NAMESPACE, kueue.NAME)
    assert f"--config=/config/{kueue.NO_JOBS_FILE}" in apps.deps[where]["args"]
    registry.heal(sim)
    assert apps.deps[where]["args"] == kueue.args()
    assert f"--config=/config/{kueue.CONFIG_FILE}" in kueue.args()


def test_queue_jobs_unmanaged_needs_kueue(sim: Sim, capsys: pytest.CaptureFixture[str]) -> None:
    install(sim, "coscheduling")
    assert main(["fault", "queue-jobs-unmanaged"], sim=sim) == 2
    assert "needs kueue installed" in capsys.readouterr().err
