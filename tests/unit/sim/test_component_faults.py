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
from simcluster.components import coscheduling, gateway, kuberay, kueue, prometheus
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


class FakeMonitoring:
    """The operator's `Prometheus` object, its generated configuration and its pod.

    The operator writes the configuration some reads after the object changed, as a
    controller does; every call is logged in order.
    """

    def __init__(self, lag: int) -> None:
        self.spec: dict[str, Any] = {}
        self.config = "global: {}\n"
        self.lag, self.reads = lag, 0
        self.log: list[str] = []

    def patch_namespaced_custom_object(self, *args: Any) -> None:
        self.spec = {k: v for k, v in {**self.spec, **args[-1]["spec"]}.items() if v is not None}
        self.reads = 0
        self.log.append("patched")

    def read_namespaced_secret(self, name: str, ns: str) -> Any:
        assert (ns, name) == ("monitoring", components.GENERATED[0])
        self.reads += 1
        if self.reads > self.lag:
            limit = self.spec.get("enforcedBodySizeLimit")
            self.config = f"global: {{body_size_limit: {limit}}}\n" if limit else "global: {}\n"
        packed = base64.b64encode(gzip.compress(self.config.encode())).decode()
        return SimpleNamespace(data={components.GENERATED[1]: packed})

    def list_namespaced_pod(self, ns: str, label_selector: str) -> Any:
        assert label_selector == prometheus.SELECTOR
        pod = SimpleNamespace(metadata=SimpleNamespace(name=f"{prometheus.STATEFULSET}-0"))
        return SimpleNamespace(items=[pod])

    def delete_namespaced_pod(self, name: str, ns: str) -> None:
        self.log.append(f"deleted {ns}/{name} running {self.config.strip()}")


def _monitoring(sim: Sim, monkeypatch: pytest.MonkeyPatch, lag: int) -> FakeMonitoring:
    """prometheus and prometheus-operator installed, their API the fake's."""
    fake = FakeMonitoring(lag)
    monkeypatch.setattr(components.kube, "api_client", lambda path: None)
    monkeypatch.setattr(components.client, "CustomObjectsApi", lambda api: fake)
    monkeypatch.setattr(components.client, "CoreV1Api", lambda api: fake)
    monkeypatch.setattr(components.time, "sleep", lambda s: None)

    def waited(sim: Sim, cs: list[Any], timeout: float) -> None:
        fake.log.append(f"waited for {cs[0].name}")

    monkeypatch.setattr(components.install, "wait_ready", waited)
    install(sim, "prometheus", "prometheus-operator")
    return fake


def test_a_prometheus_object_fault_restarts_prometheus_on_the_written_configuration(
    sim: Sim, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reloader misses a second config change for minutes: the fault restarts the pod
    once the operator has written the configuration, and waits until it is ready."""
    fake = _monitoring(sim, monkeypatch, lag=3)
    pod = f"monitoring/{prometheus.STATEFULSET}-0"
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
    secret = components.GENERATED[0]
    with pytest.raises(ComponentError, match=f"prometheus-operator has not written "
                       f"'body_size_limit' in {secret} in 120 s"):  # fmt: skip
        registry.apply(sim, "scrape-body-limit")
    assert fake.log == ["patched"]  # no pod restarted on the old configuration
