"""Faults of the platform components: they need the component, stop its pods, heal to what was."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from simcluster.__main__ import main
from simcluster.cluster.sim import Sim
from simcluster.components import (
    coscheduling,
    gateway,
    kuberay,
    kueue,
    prometheus,
    prometheus_operator,
    workloads,
)
from simcluster.components.base import Context
from simcluster.components.install import ComponentError
from simcluster.faults import components, registry


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
        (coscheduling.NAMESPACE, coscheduling.NAME): {"replicas": 1, "annotations": {}, "args": []},
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


class NotFound(Exception):
    """The fake API server's 404."""


KPS_VALUES = {"kube-prometheus-stack": {"fullnameOverride": "kube-prometheus"}}  # the recipes'


def record_monitoring(sim: Sim, values: dict[str, Any] | None = None) -> None:
    """Journal prometheus and prometheus-operator as their install records them: the
    objects their manifests name, for the recipe's kube-prometheus-stack `values`."""
    ctx = Context(frozenset({"prometheus", "prometheus-operator"}), values=values or {})
    applied = {
        "prometheus-operator": [
            prometheus_operator.deployment(prometheus_operator.operator_name(ctx))
        ],
        "prometheus": prometheus.COMPONENT.manifests(ctx),
    }
    journal = {n: [workloads.ref(d) for d in docs] for n, docs in applied.items()}
    (sim.dir / "components.json").write_text(json.dumps(journal))


class FakeMonitoring:
    """The operator's `Prometheus` object `name`, its generated configuration and its pod.

    The operator writes the configuration some reads after the object changed, as a
    controller does, into the Secret `prometheus-<name>`; every call is logged in order.
    """

    def __init__(self, lag: int, name: str = "kube-prometheus-stack-prometheus") -> None:
        self.name = name
        self.spec: dict[str, Any] = {}
        self.config = "global: {}\n"
        self.lag, self.reads = lag, 0
        self.log: list[str] = []

    def patch_namespaced_custom_object(self, *args: Any) -> None:
        _group, _version, ns, plural, name, body = args
        if (ns, plural, name) != ("monitoring", "prometheuses", self.name):
            raise NotFound(f"{plural} {ns}/{name}")
        self.spec = {k: v for k, v in {**self.spec, **body["spec"]}.items() if v is not None}
        self.reads = 0
        self.log.append("patched")

    def read_namespaced_secret(self, name: str, ns: str) -> Any:
        if (ns, name) != ("monitoring", f"prometheus-{self.name}"):
            raise NotFound(f"secret {ns}/{name}")
        self.reads += 1
        if self.reads > self.lag:
            limit = self.spec.get("enforcedBodySizeLimit")
            self.config = f"global: {{body_size_limit: {limit}}}\n" if limit else "global: {}\n"
        packed = base64.b64encode(gzip.compress(self.config.encode())).decode()
        return SimpleNamespace(data={"prometheus.yaml.gz": packed})

    def list_namespaced_pod(self, ns: str, label_selector: str) -> Any:
        assert label_selector == prometheus.SELECTOR
        pod = SimpleNamespace(metadata=SimpleNamespace(name=f"prometheus-{self.name}-0"))
        return SimpleNamespace(items=[pod])

    def delete_namespaced_pod(self, name: str, ns: str) -> None:
        self.log.append(f"deleted {ns}/{name} running {self.config.strip()}")


def _monitoring(
    sim: Sim,
    monkeypatch: pytest.MonkeyPatch,
    lag: int,
    values: dict[str, Any] | None = None,
    name: str = "kube-prometheus-stack-prometheus",
) -> FakeMonitoring:
    """prometheus and prometheus-operator installed (for a recipe's `values`), their API
    the fake's, holding the `Prometheus` object `name`."""
    fake = FakeMonitoring(lag, name)
    monkeypatch.setattr(components.kube, "api_client", lambda path: None)
    monkeypatch.setattr(components.client, "CustomObjectsApi", lambda api: fake)
    monkeypatch.setattr(components.client, "CoreV1Api", lambda api: fake)
    monkeypatch.setattr(components.time, "sleep", lambda s: None)

    def waited(sim: Sim, cs: list[Any], timeout: float) -> None:
        fake.log.append(f"waited for {cs[0].name}")

    monkeypatch.setattr(components.install, "wait_ready", waited)
    install(sim)
    record_monitoring(sim, values)
    return fake


def test_a_prometheus_object_fault_restarts_prometheus_on_the_written_configuration(
    sim: Sim, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reloader misses a second config change for minutes: the fault restarts the pod
    once the operator has written the configuration, and waits until it is ready."""
    fake = _monitoring(sim, monkeypatch, lag=3)
    pod = "monitoring/prometheus-kube-prometheus-stack-prometheus-0"
    registry.apply(sim, "scrape-body-limit")
    assert fake.log == ["patched", f"deleted {pod} running global: {{body_size_limit: 64B}}",
                        "waited for prometheus"]  # fmt: skip
    registry.heal(sim)
    assert fake.log[3:] == ["patched", f"deleted {pod} running global: {{}}",
                            "waited for prometheus"]  # fmt: skip


def test_a_prometheus_object_fault_the_operator_never_writes_fails(
    sim: Sim, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = _monitoring(sim, monkeypatch, lag=10**9)  # the operator never rewrites it
    clock = iter(range(0, 10**6, 10))
    monkeypatch.setattr(components.time, "monotonic", lambda: float(next(clock)))
    secret = "prometheus-kube-prometheus-stack-prometheus"
    with pytest.raises(ComponentError, match=f"prometheus-operator has not written "
                       f"'body_size_limit' in {secret} in 120 s"):  # fmt: skip
        registry.apply(sim, "scrape-body-limit")
    assert fake.log == ["patched"]  # no pod restarted on the old configuration


def test_a_prometheus_object_fault_acts_on_the_prometheus_a_recipe_named(
    sim: Sim, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`sim recipe` with `fullnameOverride: kube-prometheus` installs the `Prometheus`
    `kube-prometheus-prometheus`: the faults patch that one and follow its Secret."""
    name = "kube-prometheus-prometheus"
    fake = _monitoring(sim, monkeypatch, lag=1, values=KPS_VALUES, name=name)
    pod = "monitoring/prometheus-kube-prometheus-prometheus-0"
    registry.apply(sim, "scrape-body-limit")
    assert fake.spec == {"enforcedBodySizeLimit": "64B"}
    assert fake.log == ["patched", f"deleted {pod} running global: {{body_size_limit: 64B}}",
                        "waited for prometheus"]  # fmt: skip
    registry.heal(sim)
    assert fake.spec == {}
    assert fake.log[3:] == ["patched", f"deleted {pod} running global: {{}}",
                            "waited for prometheus"]  # fmt: skip


def test_monitoring_operator_down_stops_the_operator_a_recipe_named(sim: Sim) -> None:
    apps = install(sim)
    record_monitoring(sim, KPS_VALUES)
    apps.deps[("monitoring", "kube-prometheus-operator")] = {"replicas": 1, "annotations": {}}
    registry.apply(sim, "monitoring-operator-down")
    assert apps.deps[("monitoring", "kube-prometheus-operator")]["replicas"] == 0
    registry.heal(sim)
    assert apps.deps[("monitoring", "kube-prometheus-operator")] == {
        "replicas": 1,
        "annotations": {},
    }


def _journal(sim: Sim, refs: dict[str, list[tuple[str, str]]]) -> None:
    """Record each component's install as having applied the (kind, name) objects given."""
    journal = {
        component: [
            {"apiVersion": "v1", "kind": kind, "name": name, "namespace": "monitoring"}
            for kind, name in objects
        ]
        for component, objects in refs.items()
    }
    (sim.dir / "components.json").write_text(json.dumps(journal))


def test_a_prometheus_fault_with_two_recorded_prometheus_objects_is_bad_input(
    sim: Sim, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = _monitoring(sim, monkeypatch, lag=1)
    two = [("Prometheus", "a-prometheus"), ("Prometheus", "b-prometheus")]
    _journal(sim, {"prometheus-operator": [("Deployment", "op")], "prometheus": two})
    assert main(["fault", "duplicate-scrape"], sim=sim) == 2
    assert ("fault duplicate-scrape: the install of prometheus applied 2 Prometheus objects "
            "(monitoring/a-prometheus, monitoring/b-prometheus), expected exactly one"
            in capsys.readouterr().err)  # fmt: skip
    assert fake.log == [] and registry.active(sim) == []


def test_a_prometheus_fault_without_a_recorded_prometheus_object_is_bad_input(
    sim: Sim, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """prometheus installed without the operator's `Prometheus` (a StatefulSet only)."""
    fake = _monitoring(sim, monkeypatch, lag=1)
    only = [("StatefulSet", "prometheus-kube-prometheus-stack-prometheus")]
    _journal(sim, {"prometheus-operator": [("Deployment", "op")], "prometheus": only})
    assert main(["fault", "scrape-body-limit"], sim=sim) == 2
    assert ("fault scrape-body-limit: the install of prometheus applied 0 Prometheus objects, "
            "expected exactly one" in capsys.readouterr().err)  # fmt: skip
    assert fake.log == [] and registry.active(sim) == []


def test_monitoring_operator_down_without_one_recorded_deployment_is_bad_input(
    sim: Sim, capsys: pytest.CaptureFixture[str]
) -> None:
    install(sim)
    _journal(sim, {"prometheus-operator": [("ClusterRole", "prometheus-operator")]})
    assert main(["fault", "monitoring-operator-down"], sim=sim) == 2
    assert ("fault monitoring-operator-down: the install of prometheus-operator applied 0 "
            "Deployment objects, expected exactly one" in capsys.readouterr().err)  # fmt: skip
    assert registry.active(sim) == []
