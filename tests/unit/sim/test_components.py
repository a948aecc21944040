"""Components of the simulated cluster: the registry, images to binaries, manifests, CLI input."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml
from simcluster.__main__ import main
from simcluster.cluster.sim import Sim
from simcluster.components import catalog, install, registry
from simcluster.components.base import Context
from simcluster.components.coscheduling import COMPONENT as COSCHEDULING
from simcluster.components.prometheus import COMPONENT as PROMETHEUS
from simcluster.components.prometheus import scrape_config
from simcluster.runtime import images

REPO = Path(__file__).resolve().parents[3]


def test_resolve_all_and_order() -> None:
    assert {c.name for c in registry.resolve("all")} == {c.name for c in registry.COMPONENTS}
    assert [c.name for c in registry.resolve(" prometheus ,prometheus")] == ["prometheus"]
    # Prometheus made by the operator: the operator (and its CRDs) first.
    assert [c.name for c in registry.resolve("prometheus,prometheus-operator")] == [
        "prometheus-operator",
        "prometheus",
    ]


def test_resolve_adds_what_a_component_requires(monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import replace

    needy = replace(PROMETHEUS, name="needy", requires=("prometheus",))
    monkeypatch.setitem(registry.BY_NAME, "needy", needy)
    assert [c.name for c in registry.resolve("needy")] == ["prometheus", "needy"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("prometeus", "unknown component 'prometeus'; did you mean prometheus?"),
        ("prometheus,nope", "unknown component 'nope' (components: "),
        (" , ", "--with needs at least one component name"),
    ],
)
def test_resolve_refuses_unknown_names(spec: str, message: str) -> None:
    with pytest.raises(registry.ComponentInputError, match=re.escape(message)):
        registry.resolve(spec)


def test_up_with_an_unknown_component_exits_2_before_starting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Sim, "up", lambda self: pytest.fail("the cluster must not start"))
    assert main(["up", "--with", "prometeus"], Sim(tmp_path)) == 2
    err = capsys.readouterr().err
    names = ", ".join(c.name for c in registry.COMPONENTS)
    assert err == ("sim up: unknown component 'prometeus'; did you mean prometheus? "
                   f"(components: {names}, or all)\n")  # fmt: skip


BINARY = str(PROMETHEUS.bin_dir() / "prometheus")
PG_CONTROLLER = str(COSCHEDULING.bin_dir() / "controller")


@pytest.mark.parametrize(
    ("container", "argv"),
    [
        ({"image": "quay.io/prometheus/prometheus:v3.5.0"},
         [BINARY, "--config.file=/etc/prometheus/prometheus.yml",
          "--storage.tsdb.path=/prometheus"]),
        ({"image": "quay.io/prometheus/prometheus:v3.5.0", "args": ["--version"]},
         [BINARY, "--version"]),
        ({"image": "mirror:5000/prometheus@sha256:" + "0" * 64, "command": ["/bin/prometheus"],
          "args": ["--version"]}, [BINARY, "--version"]),
        ({"image": "quay.io/prometheus/prometheus:v3.5.0", "command": ["sh", "-c", "true"]},
         ["sh", "-c", "true"]),
        ({"image": "ubuntu:22.04", "command": ["ls"], "args": ["/"]}, ["ls", "/"]),
        # a key of two path components: that repository, not every image named "controller"
        ({"image": "registry.k8s.io/scheduler-plugins/controller:v0.34.7", "args": ["--x"]},
         [PG_CONTROLLER, "--x"]),
        ({"image": "registry.k8s.io/ingress-nginx/controller:v1.12.0",
          "command": ["/controller"], "args": ["--x"]}, ["/controller", "--x"]),
    ],
)  # fmt: skip
def test_component_images_run_the_cached_binary(container: dict[str, object],
                                                argv: list[str]) -> None:  # fmt: skip
    assert images.argv(container, Path("/sim"), "python3") == argv


def test_binary_folder_is_keyed_by_the_pin() -> None:
    pins = dict(
        line.split("=", 1)
        for line in (REPO / "hack/sim/pins.env").read_text().splitlines()
        if "=" in line and not line.startswith("#")
    )
    assert PROMETHEUS.bin_dir().parent.name == f"prometheus-{pins['PROMETHEUS_VERSION']}"


def test_build_script_refuses_an_unknown_component() -> None:
    proc = subprocess.run(["bash", str(REPO / "hack/sim/build-component.sh"), "nope"],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert (proc.returncode, proc.stderr) == (2, "sim-build: no component named nope\n")


def test_every_built_component_has_a_recipe_and_every_model_a_script() -> None:
    for c in registry.COMPONENTS:
        recipe = REPO / "hack/sim/simcluster/components" / c.name.replace("-", "_") / "build.sh"
        if c.pin:
            text = recipe.read_text()
            assert f"version=${c.pin}" in text or f"version=${{{c.pin}}}" in text, c.name
        else:
            assert not recipe.exists(), c.name
            assert all(i.script and i.script.is_file() for i in c.images.values()), c.name


def test_prometheus_discovers_pods_and_service_endpoints_every_second() -> None:
    config = scrape_config(Context(frozenset({"prometheus"})))
    assert config["global"] == {"scrape_interval": "1s", "evaluation_interval": "1s"}
    roles = [(j["job_name"], j["kubernetes_sd_configs"]) for j in config["scrape_configs"]]
    assert roles == [("kubernetes-pods", [{"role": "pod"}]),
                     ("kubernetes-service-endpoints", [{"role": "endpoints"}])]  # fmt: skip
    # the community chart honours the target's labels on both jobs (charts/prometheus
    # values.yaml): DCGM exporter's namespace/pod of the GPU's workload are kept
    assert [j["honor_labels"] for j in config["scrape_configs"]] == [True, True]


GPU_OPERATOR_VALUES = {  # AICR's recipes/components/gpu-operator/values.yaml (2026)
    "dcgmExporter": {"serviceMonitor": {"enabled": True, "interval": "30s", "honorLabels": True}}
}


@pytest.mark.parametrize(("values", "honor"), [
    (None, False),  # the demo recipe's values-kind.yaml: the chart's default
    (GPU_OPERATOR_VALUES, True),
    ({"dcgmExporter": {"serviceMonitor": {"enabled": True}}}, None),  # unset: not written
], ids=["demo-recipe-values", "aicr-values-honor-labels", "unset"])  # fmt: skip
def test_the_exporters_service_monitor_honours_the_values_labels(
    values: dict[str, object] | None, honor: bool | None
) -> None:
    from simcluster.components.dcgm_exporter import COMPONENT as EXPORTER

    given = {} if values is None else {"values": {"gpu-operator": values}}
    docs = EXPORTER.manifests(Context(frozenset({"dcgm-exporter", "prometheus-operator"}),
                                      **given))  # type: ignore[arg-type]  # fmt: skip
    monitor = next(d for d in docs if d["kind"] == "ServiceMonitor")
    endpoint = monitor["spec"]["endpoints"][0]
    assert endpoint.get("honorLabels") == honor
    # the operator's asset (0500_service_monitor.yaml), interval the sim's scrape knob
    assert {k: v for k, v in endpoint.items() if k != "honorLabels"} == {
        "port": "gpu-metrics", "path": "/metrics", "interval": "1s"}  # fmt: skip
    assert monitor["spec"]["jobLabel"] == "app"
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": ["gpu-operator"]}


def test_no_service_monitor_when_the_values_leave_it_off_or_no_operator_runs() -> None:
    from simcluster.components.dcgm_exporter import COMPONENT as EXPORTER

    off = {"gpu-operator": {"dcgmExporter": {"serviceMonitor": {"enabled": False}}}}
    chart_default = {"gpu-operator": {}}  # the chart's serviceMonitor.enabled: false
    for selected, values in (({"prometheus-operator"}, off),
                             ({"prometheus-operator"}, chart_default), (set(), {})):  # fmt: skip
        docs = EXPORTER.manifests(Context(frozenset({"dcgm-exporter", *selected}),
                                          values=values))  # fmt: skip
        assert "ServiceMonitor" not in {d["kind"] for d in docs}, (selected, values)
        assert "DaemonSet" in {d["kind"] for d in docs}


def test_prometheus_install_is_shaped_like_kube_prometheus_stack() -> None:
    docs = PROMETHEUS.manifests(Context(frozenset({"prometheus"})))
    kinds = {(d["kind"], d["metadata"]["name"]) for d in docs}
    assert {("StatefulSet", "prometheus-kube-prometheus-stack-prometheus"),
            ("Service", "prometheus-operated"),
            ("ServiceAccount", "kube-prometheus-stack-prometheus"),
            ("ClusterRoleBinding", "kube-prometheus-stack-prometheus")} <= kinds  # fmt: skip
    sts = next(d for d in docs if d["kind"] == "StatefulSet")
    container = sts["spec"]["template"]["spec"]["containers"][0]
    assert "--web.listen-address=$(POD_IP):9090" in container["args"]
    config = next(d for d in docs if d["kind"] == "ConfigMap")
    assert yaml.safe_load(config["data"]["prometheus.yml"])["scrape_configs"]


def test_the_adapter_follows_prometheus_and_serves_the_custom_metrics_api() -> None:
    from simcluster.components.prometheus_adapter import COMPONENT as ADAPTER

    assert [c.name for c in registry.resolve("prometheus-adapter")] == [
        "prometheus", "prometheus-adapter"]  # fmt: skip
    ctx = Context(frozenset({"prometheus", "prometheus-adapter"}),
                  addresses={"prometheus": "http://10.244.0.5:9090"})  # fmt: skip
    docs = ADAPTER.manifests(ctx)
    api = next(d for d in docs if d["kind"] == "APIService")
    assert api["metadata"]["name"] == "v1beta1.custom.metrics.k8s.io"
    assert api["spec"]["service"] == {"name": "prometheus-adapter", "namespace": "monitoring",
                                      "port": 443}  # fmt: skip
    deploy = next(d for d in docs if d["kind"] == "Deployment")
    args = deploy["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--prometheus-url=http://10.244.0.5:9090" in args
    with pytest.raises(ValueError, match="needs a running Prometheus"):
        ADAPTER.manifests(Context(frozenset({"prometheus-adapter"})))


def test_the_adapters_rules_are_what_the_chart_renders_from_the_recipes_values() -> None:
    from simcluster.components import prometheus_adapter

    values = yaml.safe_load(prometheus_adapter.VALUES.read_text())
    ctx = Context(frozenset({"prometheus", "prometheus-adapter"}),
                  addresses={"prometheus": "http://10.244.0.5:9090"})  # fmt: skip
    docs = prometheus_adapter.COMPONENT.manifests(ctx)
    made = next(d for d in docs if d["kind"] == "ConfigMap")
    config = yaml.safe_load(made["data"]["config.yaml"])
    # rules.default is false in the recipes' values: only their custom and external rules
    assert config == {"rules": values["rules"]["custom"],
                      "externalRules": values["rules"]["external"]}  # fmt: skip
    names = {r["name"]["as"] for r in config["rules"]}
    assert "aicr_autoscaling_load" not in str(config) and "workload_gpu_utilization" in names
    kinds = {(d["kind"], d["metadata"]["name"]) for d in docs}
    assert {
        ("APIService", "v1beta1.external.metrics.k8s.io"),
        ("ClusterRole", "prometheus-adapter-external-metrics"),
        ("ClusterRoleBinding", "prometheus-adapter-hpa-controller-external-metrics"),
    } <= kinds
    args = next(d for d in docs if d["kind"] == "Deployment")["spec"]["template"]["spec"][
        "containers"][0]["args"]  # fmt: skip
    assert "--metrics-relist-interval=30s" in args


def test_without_custom_rules_in_the_values_the_chart_defaults_apply() -> None:
    from simcluster.components import prometheus_adapter

    ctx = Context(frozenset({"prometheus", "prometheus-adapter"}),
                  addresses={"prometheus": "http://10.244.0.5:9090"},
                  values={"prometheus-adapter": {}})  # fmt: skip
    docs = prometheus_adapter.COMPONENT.manifests(ctx)
    made = next(d for d in docs if d["kind"] == "ConfigMap")
    config = yaml.safe_load(made["data"]["config.yaml"])
    assert config == {"rules": prometheus_adapter.chart_default_rules()}
    assert len(config["rules"]) == 6  # templates/configmap.yaml's default block
    assert not [d for d in docs if d["metadata"]["name"] == "v1beta1.external.metrics.k8s.io"]
    args = next(d for d in docs if d["kind"] == "Deployment")["spec"]["template"]["spec"][
        "containers"][0]["args"]  # fmt: skip
    assert "--metrics-relist-interval=1m" in args


def test_with_the_operator_prometheus_is_a_prometheus_object() -> None:
    docs = PROMETHEUS.manifests(Context(frozenset({"prometheus", "prometheus-operator"})))
    kinds = [d["kind"] for d in docs]
    assert "StatefulSet" not in kinds and "ConfigMap" not in kinds
    made = next(d for d in docs if d["kind"] == "Prometheus")
    assert made["metadata"] == {"name": "kube-prometheus-stack-prometheus",
                                "namespace": "monitoring"}  # fmt: skip
    spec = made["spec"]
    assert (spec["scrapeInterval"], spec["serviceMonitorSelector"],
            spec["podMonitorNamespaceSelector"]) == ("1s", {}, {})  # fmt: skip
    assert spec["image"] == "quay.io/prometheus/prometheus:v3.5.0"


def test_prometheus_url_goes_to_every_check_that_queries_prometheus(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    checks = catalog.prometheus_checks()
    assert {"accelerator-metrics", "ai-service-metrics"} <= set(checks)
    monkeypatch.setattr(
        "simcluster.components.prometheus.url", lambda api: "http://10.244.0.5:9090"
    )
    monkeypatch.setattr(install, "journal", lambda sim: {"prometheus": []})
    monkeypatch.setattr(install.kube, "api_client", lambda path: None)
    config = install.validate_config(Sim(tmp_path))
    assert config["kind"] == "ValidateConfig"
    assert config["spec"]["validate"]["checks"]["accelerator-metrics"] == {
        "prometheusUrl": "http://10.244.0.5:9090"
    }
    assert sorted(config["spec"]["validate"]["checks"]) == sorted(checks)


def test_adapter_down_needs_the_adapter_running(tmp_path: Path) -> None:
    from simcluster.faults import registry as fault_registry
    from simcluster.faults.registry import FaultInputError

    with pytest.raises(FaultInputError, match=re.escape(
            "fault adapter-down needs prometheus-adapter installed (`hack/sim/sim up --with "
            "prometheus-adapter`)")):  # fmt: skip
        fault_registry.apply(Sim(tmp_path), "adapter-down")


def _exporter_env(ctx: Context) -> dict[str, object]:
    from simcluster.components.dcgm_exporter import COMPONENT as EXPORTER

    ds = next(d for d in EXPORTER.manifests(ctx) if d["kind"] == "DaemonSet")
    env = ds["spec"]["template"]["spec"]["containers"][0]["env"]
    return {e["name"]: e.get("value") for e in env}


def test_the_exporter_collects_at_the_recipes_interval_else_the_knob() -> None:
    plain = _exporter_env(Context(frozenset({"dcgm-exporter"})))
    assert plain["DCGM_EXPORTER_INTERVAL"] == "1000"  # the sim's test-time knob
    values = {
        "gpu-operator": {
            "dcgmExporter": {
                "env": [
                    {"name": "DCGM_EXPORTER_INTERVAL", "value": "30000"},
                    {"name": "DCGM_EXPORTER_COLLECTORS", "value": "/etc/dcgm-exporter/x.csv"},
                ]
            }
        }
    }
    given = _exporter_env(Context(frozenset({"dcgm-exporter"}), values=values))
    assert given["DCGM_EXPORTER_INTERVAL"] == "30000"  # as the GPU Operator copies it
    assert given["DCGM_EXPORTER_COLLECTORS"] == "/etc/dcgm-exporter/x.csv"
