"""`sim recipe FILE [--data DIR]`: the cluster a hydrated recipe installs, as the sim plays it.

Each componentRef's Helm values are its `valuesFile` (under `--data`, AICR's layout:
`components/<name>/values*.yaml`) with its `overrides` over them (Helm's merge). A player
per chart turns those values into what the sim runs, the way that chart version renders
them (each fact cited in the module that renders it and in docs/development.md):

- kube-prometheus-stack: prometheus-operator and a `Prometheus` object named and
  selecting as the chart renders the values (`components/prometheus/chart.py`);
- prometheus-adapter: its rules exactly as the values give them (`components/prometheus_adapter`);
- gpu-operator: the ClusterPolicy, RuntimeClass, device-plugin config and the operand
  DaemonSets the values switch on (`gpu/operator_values.py`), the DCGM exporter with the
  values' environment (`components/dcgm_exporter`);
- nvidia-dra-driver-gpu: the GPU mode (`resources.gpus.enabled`) and the DeviceClasses the
  chart renders (`gpu/modes.py`), its controller Deployment;
- kuberay-operator: KubeRay's operator (`components/kuberay`).

Every other chart is reported as not played, with the reason. `load` reads and checks
everything before the cluster is touched (ScenarioError: one message naming the file and
field, exit 2); `run` installs and waits until ready.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from simcluster.components import install, registry
from simcluster.components.base import Component, Manifest, dig, merge_values
from simcluster.components.prometheus import chart as kps
from simcluster.gpu import modes as gpu_modes
from simcluster.gpu import operator_values
from simcluster.scenarios import contents as scenario
from simcluster.scenarios.named import ScenarioError, apply_and_wait

if TYPE_CHECKING:
    from simcluster.cluster.sim import Sim

# The RecipeResult's fields (AICR's recipe format, as src/aicr/recipe/model.py accepts them)
TOP_KEYS = frozenset({"kind", "apiVersion", "metadata", "criteria", "constraints",
                      "componentRefs", "deploymentOrder", "validation"})  # fmt: skip
REF_KEYS = frozenset({"name", "namespace", "chart", "type", "source", "version", "tag",
                      "valuesFile", "overrides", "patches", "dependencyRefs", "manifestFiles",
                      "path", "cleanup", "expectedResources", "healthCheckAsserts",
                      "enabled"})  # fmt: skip
KIND = "RecipeResult"


@dataclass(frozen=True)
class Ref:
    """One enabled componentRef with its merged Helm values."""

    name: str
    chart: str
    namespace: str
    version: str
    values: dict[str, Any]
    where: str  # "FILE: componentRefs[i]" for messages
    values_file: str


@dataclass
class Part:
    """What the sim plays of one componentRef, and what it cannot (each with why)."""

    ref: str
    chart: str
    version: str
    played: list[str] = field(default_factory=list)
    not_played: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """The report: `ref (chart version): played: ...` / `not played: ...`."""
        head = f"{self.ref} ({self.chart} {self.version})"
        out = [f"{head}: played: {p}" for p in self.played]
        return out + [f"{head}: not played: {n}" for n in self.not_played]


@dataclass
class Plan:
    """Everything `run` does, found by `load` before the cluster is touched."""

    source: str
    parts: list[Part] = field(default_factory=list)
    components: list[str] = field(default_factory=list)
    values: dict[str, dict[str, Any]] = field(default_factory=dict)
    releases: dict[str, str] = field(default_factory=dict)
    manifests: list[Manifest] = field(default_factory=list)
    gpu_mode: gpu_modes.Mode | None = None
    dra_values: dict[str, Any] | None = None
    gpu_operator: dict[str, Any] | None = None  # its merged values, for the DRA driver's player

    def resolved(self) -> list[Component]:
        """The sim components to install, each after what it requires or follows."""
        return registry.resolve(",".join(self.components)) if self.components else []

    def lines(self) -> list[str]:
        """The per-component report."""
        return [line for p in self.parts for line in p.lines()]


def _read_yaml(path: Path, what: str) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ScenarioError(f"{what}: cannot read {path}: {e.strerror}") from None
    except yaml.YAMLError as e:
        raise ScenarioError(f"{path}: not YAML: {e}") from None


def _unknown(keys: Any, allowed: frozenset[str], where: str) -> None:
    extra = sorted(str(k) for k in keys if k not in allowed)
    if extra:
        import difflib

        close = difflib.get_close_matches(extra[0], sorted(allowed), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise ScenarioError(f"{where}{extra[0]}: unknown field{hint}")


def refs(path: Path, data: Path) -> list[Ref]:
    """The recipe's enabled componentRefs with their values; ScenarioError naming the file and
    field of the first problem."""
    doc = _read_yaml(path, "sim recipe")
    if not isinstance(doc, dict):
        raise ScenarioError(f"{path}: expected a mapping (a hydrated recipe, kind {KIND})")
    _unknown(doc, TOP_KEYS, f"{path}: ")
    if doc.get("kind") != KIND:
        raise ScenarioError(f"{path}: kind: expected {KIND}, got {doc.get('kind')!r}")
    given = doc.get("componentRefs")
    if not isinstance(given, list) or not given:
        raise ScenarioError(f"{path}: componentRefs: expected a non-empty list")
    out: list[Ref] = []
    for i, ref in enumerate(given):
        where = f"{path}: componentRefs[{i}]"
        if not isinstance(ref, dict):
            raise ScenarioError(f"{where}: expected a mapping")
        _unknown(ref, REF_KEYS, f"{where}.")
        name = ref.get("name")
        if not isinstance(name, str) or not name:
            raise ScenarioError(f"{where}.name: expected a component name")
        overrides = ref.get("overrides") or {}
        if not isinstance(overrides, dict):
            raise ScenarioError(f"{where}.overrides: expected a mapping of Helm values")
        if ref.get("enabled") is False or overrides.get("enabled") is False:
            continue
        values: dict[str, Any] = {}
        values_file = ref.get("valuesFile")
        if values_file is not None:
            if not isinstance(values_file, str):
                raise ScenarioError(f"{where}.valuesFile: expected a path under --data")
            file = data / values_file
            if not file.is_file():
                raise ScenarioError(f"{where}.valuesFile: {file} not found (--data {data})")
            loaded = _read_yaml(file, f"{where}.valuesFile")
            if loaded is not None and not isinstance(loaded, dict):
                raise ScenarioError(f"{file}: expected a mapping of Helm values")
            values = loaded or {}
        out.append(
            Ref(
                name=name,
                chart=str(ref.get("chart") or name),
                namespace=str(ref.get("namespace") or "default"),
                version=str(ref.get("version") or ref.get("tag") or "?"),
                values=merge_values(values, overrides),
                where=where,
                values_file=str(values_file or ""),
            )
        )
    return out


def _expect_mapping(ref: Ref, *keys: str) -> None:
    """ScenarioError naming the values' field when ``keys`` holds something but a mapping."""
    got = dig(ref.values, *keys)
    if got is not None and not isinstance(got, Mapping):
        raise ScenarioError(f"{ref.where}: values {'.'.join(keys)}: expected a mapping")


def _expect_list(ref: Ref, *keys: str) -> None:
    got = dig(ref.values, *keys)
    if got is not None and not isinstance(got, list):
        raise ScenarioError(f"{ref.where}: values {'.'.join(keys)}: expected a list")


def _fixed_namespace(ref: Ref, part: Part, namespace: str, actual: str) -> bool:
    """True when the release goes where the sim's model of it lives; else say why not."""
    if actual == namespace:
        return True
    part.not_played.append(
        f"everything: the sim plays {ref.chart} in namespace {namespace} only, "
        f"the recipe installs it in {actual}"
    )
    return False


def _selector(sel: Any) -> str:
    if sel == {}:
        return "{} (every one)"
    labels = sel.get("matchLabels") if isinstance(sel, Mapping) else None
    if isinstance(labels, Mapping) and len(sel) == 1:
        return ",".join(f"{k}={v}" for k, v in labels.items())
    return yaml.safe_dump(sel, default_flow_style=True).strip()


def play_kube_prometheus_stack(ref: Ref, plan: Plan, part: Part) -> None:
    """prometheus-operator and the chart's `Prometheus` object from the values."""
    for keys in (("prometheus",), ("prometheus", "prometheusSpec")):
        _expect_mapping(ref, *keys)
    for kind in (*kps.SELECTED, *kps.OPTIONAL):
        _expect_mapping(ref, "prometheus", "prometheusSpec", f"{kind}Selector")
        _expect_mapping(ref, "prometheus", "prometheusSpec", f"{kind}NamespaceSelector")
    v = kps.values(ref.values)
    from simcluster.components.prometheus import NAMESPACE

    if not _fixed_namespace(ref, part, NAMESPACE, kps.namespace(v, ref.namespace)):
        return
    if not dig(v, "prometheusOperator", "enabled") or not dig(v, "prometheus", "enabled"):
        part.not_played.append(
            "everything: the sim plays the chart's Prometheus only with its operator "
            "(prometheus.enabled and prometheusOperator.enabled)"
        )
        return
    plan.components += ["prometheus-operator", "prometheus"]
    plan.values[kps.CHART] = ref.values
    plan.releases[kps.CHART] = ref.name
    name = kps.prometheus_name(v, ref.name)
    sel = kps.selectors(v, ref.name)
    part.played.append(
        f"prometheus-operator v0.85.0 as Deployment {NAMESPACE}/{kps.operator_name(v, ref.name)}"
    )
    part.played.append(
        f"Prometheus {NAMESPACE}/{name} (StatefulSet prometheus-{name}, Service "
        f"{kps.fullname(v, ref.name)}-prometheus): serviceMonitorSelector "
        f"{_selector(sel['serviceMonitorSelector'])}, podMonitorSelector "
        f"{_selector(sel['podMonitorSelector'])}, namespaces "
        f"{_selector(sel['serviceMonitorNamespaceSelector'])}"
    )
    secret = kps.scrape_secret(v, ref.name, NAMESPACE)
    part.played.append(
        f"additionalScrapeConfigs from the values (Secret {secret['metadata']['name']})"
        if secret
        else "no annotation-based scraping (the values add no additionalScrapeConfigs)"
    )
    extra = [
        label
        for keys, label in (
            (("grafana", "enabled"), "Grafana"),
            (("alertmanager", "enabled"), "Alertmanager"),
            (("nodeExporter", "enabled"), "node-exporter"),
            (("kubeStateMetrics", "enabled"), "kube-state-metrics"),
        )
        if dig(ref.values, *keys, default=True)  # each on by default (values.yaml 82.8.0)
    ]
    if extra:
        part.not_played.append(
            f"{', '.join(extra)}: the sim has no model of them (the recipe's checks read "
            "Prometheus, not these)"
        )


def play_prometheus_adapter(ref: Ref, plan: Plan, part: Part) -> None:
    """The adapter with its rules exactly as the values give them."""
    from simcluster.components import prometheus_adapter as adapter

    _expect_mapping(ref, "rules")
    for key in ("custom", "external", "resource"):
        got = dig(ref.values, "rules", key)
        if key != "resource" and got is not None and not isinstance(got, list):
            raise ScenarioError(f"{ref.where}: values rules.{key}: expected a list")
    full = str(ref.values.get("fullnameOverride") or "")
    name = ref.values.get("nameOverride") or adapter.NAME
    full = full or (ref.name if name in ref.name else f"{ref.name}-{name}")
    ns = str(ref.values.get("namespaceOverride") or ref.namespace)
    if not _fixed_namespace(ref, part, adapter.NAMESPACE, ns):
        return
    if full != adapter.NAME:
        part.not_played.append(
            f"everything: the chart names it {full}; the sim plays it as {adapter.NAME} only"
        )
        return
    if "prometheus" not in plan.components:
        part.not_played.append("everything: it needs the kube-prometheus-stack the sim plays")
        return
    plan.components.append("prometheus-adapter")
    plan.values[adapter.NAME] = ref.values
    config = adapter.rules(ref.values)
    default = "on" if dig(ref.values, "rules", "default", default=True) else "off"
    part.played.append(
        f"Deployment {adapter.NAMESPACE}/{adapter.NAME}: {len(config.get('rules', []))} rules "
        f"(the chart's default rules {default}), {len(config.get('externalRules', []))} "
        "external rules, as the values give them"
    )
    url = dig(ref.values, "prometheus", "url")
    host = str(url or "").split("//", 1)[-1].split("/", 1)[0].split(":", 1)[0]
    service = plan_prometheus_service(plan)
    if url and service and host.split(".", 1)[0] != service:
        part.not_played.append(
            f"the values' prometheus.url {url}: kube-prometheus-stack's Service is {service} "
            "(the sim points the adapter at Prometheus' pod address)"
        )


def plan_prometheus_service(plan: Plan) -> str | None:
    """kube-prometheus-stack's Prometheus Service name in `plan`, if it plays one."""
    given = plan.values.get(kps.CHART)
    if given is None:
        return None
    return f"{kps.fullname(kps.values(given), plan.releases[kps.CHART])}-prometheus"


def play_gpu_operator(ref: Ref, plan: Plan, part: Part) -> None:
    """The chart's ClusterPolicy and RuntimeClass, the operator and its operands."""
    for block in operator_values.OPERANDS:
        _expect_mapping(ref, block)
    _expect_list(ref, "dcgmExporter", "env")
    if not _fixed_namespace(ref, part, operator_values.NAMESPACE, ref.namespace):
        return
    v = merge_values(operator_values.CHART_DEFAULTS, ref.values)
    plan.manifests += [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": operator_values.NAMESPACE}},
        *operator_values.from_values(v),
    ]
    on = [b for b in operator_values.OPERANDS if dig(v, b, "enabled")]
    daemon_sets = [d["metadata"]["name"] for d in operator_values.operand_daemon_sets(v)]
    part.played.append(
        f"ClusterPolicy cluster-policy (operands on: {', '.join(on)}), RuntimeClass "
        f"{operator_values.runtime_class(v)['metadata']['name']}, CDI "
        f"{'on' if dig(v, 'cdi', 'enabled') else 'off'}, device plugin "
        f"{'on' if dig(v, 'devicePlugin', 'enabled') else 'off'}; Deployment gpu-operator"
    )
    if dig(v, "dcgmExporter", "enabled"):
        from simcluster.components import dcgm_exporter

        plan.components.append("dcgm-exporter")
        plan.values[dcgm_exporter.CHART] = v
        env = {e["name"]: e.get("value") for e in dcgm_exporter.values_env(v)}
        interval = env.get(dcgm_exporter.INTERVAL_ENV)
        daemon_sets.append(dcgm_exporter.NAME)
        part.played.append(
            "DCGM exporter: collection interval "
            + (f"{interval} ms (the values' dcgmExporter.env)" if interval else
               "the sim's 1000 ms test knob (the values set none; dcgm-exporter's own "
               "default is 30000 ms)")
            + ", ServiceMonitor "
            + ("on" if dig(v, "dcgmExporter", "serviceMonitor", "enabled") else "off")
        )  # fmt: skip
        part.not_played.append(
            "DCGM exporter counters "
            + ("(the values' dcgmExporter.config)" if dig(v, "dcgmExporter", "config") else
               "(the chart's default set)")
            + ": the sim's exporter serves its own fixed fields (simcluster/gpu/dcgm.py)"
        )  # fmt: skip
    part.played.append(f"operand DaemonSets {', '.join(daemon_sets)}")
    if dig(v, "migManager", "enabled"):
        part.not_played.append(
            "MIG manager: the sim applies the ClusterPolicy's MIG configuration itself "
            "(simcluster/gpu/sharing.py); no nvidia-mig-manager pod"
        )
    plan.gpu_operator = v


def play_dra_driver(ref: Ref, plan: Plan, part: Part) -> None:
    """The GPU mode and DeviceClasses from the values, and the chart's controller."""
    _expect_mapping(ref, "resources")
    v = merge_values(gpu_modes.CHART_DEFAULTS, ref.values)
    gpus = bool(dig(v, "resources", "gpus", "enabled"))
    plugin = bool(dig(plan.gpu_operator or {}, "devicePlugin", "enabled"))
    mode: gpu_modes.Mode = ("dual" if plugin else "dra") if gpus else "device-plugin"
    plan.gpu_mode = mode
    plan.dra_values = ref.values
    classes = [c["metadata"]["name"] for c in gpu_modes.device_classes(
        gpu_modes.dra_values(mode, ref.values))]  # fmt: skip
    part.played.append(
        f"GPU mode {mode} (resources.gpus.enabled {str(gpus).lower()}"
        + (", with the GPU Operator's device plugin on" if mode == "dual" else "")
        + f"); DeviceClasses {', '.join(classes) or 'none'}"
    )
    name = str(v.get("nameOverride") or "nvidia-dra-driver-gpu")
    ns = str(v.get("namespaceOverride") or ref.namespace)
    if dig(v, "resources", "computeDomains", "enabled"):
        labels = {"app": f"{name}-controller"}
        plan.manifests += [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": f"{name}-controller", "namespace": ns},
                "spec": {
                    "replicas": 1,
                    "selector": {"matchLabels": labels},
                    "template": {
                        "metadata": {"labels": labels},
                        "spec": {
                            "nodeSelector": {"aicr.dev/node-group": "system"},
                            "containers": [{"name": "controller", "image": DRA_IMAGE}],
                        },
                    },
                },
            },
        ]
        part.played.append(
            f"Deployment {ns}/{name}-controller, on the system nodes (the chart's default "
            "affinity asks for a control-plane node, which the sim has none of)"
        )
    part.not_played.append(
        f"DaemonSet {ns}/{name}-kubelet-plugin: the sim's GPU model publishes the "
        "ResourceSlices and prepares claims itself"
    )


DRA_IMAGE = "nvcr.io/nvidia/k8s-dra-driver-gpu:v25.12.0"


def play_kuberay(ref: Ref, plan: Plan, part: Part) -> None:
    """KubeRay's operator (the sim's pin) where the chart would put it."""
    from simcluster.components import kuberay

    full = str(ref.values.get("fullnameOverride") or "")
    name = str(ref.values.get("nameOverride") or "kuberay-operator")
    full = full or (ref.name if name in ref.name else f"{ref.name}-{name}")
    if not _fixed_namespace(ref, part, kuberay.NAMESPACE, ref.namespace):
        return
    if full != kuberay.NAME:
        part.not_played.append(
            f"everything: the chart names it {full}; the sim plays it as {kuberay.NAME} only"
        )
        return
    plan.components.append("kuberay")
    part.played.append(
        f"Deployment {kuberay.NAMESPACE}/{kuberay.NAME}: ray-operator v1.5.0 (the sim's "
        f"pin; chart {ref.version} ships its own release), RayCluster webhook on"
    )


# chart -> why the sim cannot play it
NOT_PLAYED = {
    "kai-scheduler": "NVIDIA KAI scheduler's Go module is refused by the module proxy this "
    "sim builds from (v0.1-v0.9 tried), so no KAI scheduler runs; gang-scheduling cannot "
    "be proven here",
    "cert-manager": "the sim has no cert-manager; the components it plays get their "
    "serving certificates from the sim's install",
    "kgateway": "kgateway's Envoy data plane is not built here; the sim's gateway component "
    "is Traefik, another implementation, so it is not played in kgateway's place",
    "inferencepool": "its endpoint picker needs kgateway, which the sim does not play",
    "dynamo-platform": "the sim has no model of NVIDIA Dynamo's operator",
    "kubeflow-trainer": "Kubeflow Trainer v2 needs JobSet v0.12.0, which the module proxy "
    "does not serve here; without its controller its CRDs alone would reconcile nothing",
}
PLAYERS: dict[str, Callable[[Ref, Plan, Part], None]] = {
    "kube-prometheus-stack": play_kube_prometheus_stack,
    "prometheus-adapter": play_prometheus_adapter,
    "gpu-operator": play_gpu_operator,
    "nvidia-dra-driver-gpu": play_dra_driver,
    "kuberay-operator": play_kuberay,
}
# a player reads what another decided first (the adapter, kube-prometheus-stack's Service;
# the DRA driver, the GPU Operator's device plugin)
ORDER = ("kube-prometheus-stack", "gpu-operator")


def load(path: Path, data: Path) -> Plan:
    """The plan for recipe `path` with values under `data`; ScenarioError when input is wrong."""
    given = refs(path, data)
    plan = Plan(source=str(path))
    parts = {id(r): Part(r.name, r.chart, r.version) for r in given}
    for r in sorted(given, key=lambda r: (r.chart not in ORDER, ORDER.index(r.chart)
                                           if r.chart in ORDER else 0)):  # fmt: skip
        part = parts[id(r)]
        player = PLAYERS.get(r.chart)
        if player is not None:
            player(r, plan, part)
        else:
            part.not_played.append(
                f"everything: {NOT_PLAYED.get(r.chart, 'the sim has no model of this chart')}"
            )
    plan.parts = [parts[id(r)] for r in given]
    return plan


def build(plan: Plan) -> None:
    """Build the binaries of the plan's components (outside the cluster's network namespace)."""
    install.build(plan.resolved())


def run(sim: Sim, plan: Plan) -> None:
    """Set the GPU mode, install the components with the recipe's values, apply the rendered
    objects and wait until all are ready; each stage's time on stderr."""
    import sys
    import time

    def timed(stage: str, act: Callable[[], object]) -> None:
        start = time.monotonic()
        act()
        print(f"sim recipe: {stage} in {time.monotonic() - start:.1f} s", file=sys.stderr)

    if plan.gpu_mode is not None:
        mode, dra = plan.gpu_mode, plan.dra_values
        timed(f"GPU mode {mode}", lambda: scenario.set_mode(sim, mode, dra))
    components = plan.resolved()
    # those given Prometheus' address (the adapter) go after it has settled: restarting it
    # gives its pod a new address, and the sim has no DNS name that would follow it
    later = [c for c in components if "prometheus" in c.requires]
    first = [c for c in components if c not in later]

    def ready(stage: list[Component]) -> None:
        timed(
            ", ".join(c.name for c in stage) + " ready",
            lambda: install.install(sim, stage, values=plan.values, releases=plan.releases),
        )

    if first:
        ready(first)
    timed(
        f"{len(plan.manifests)} objects applied and ready",
        lambda: apply_and_wait(sim, plan.manifests),
    )
    timed("Prometheus settled", lambda: settle_prometheus(sim, plan))
    if later:
        ready(later)


MONITOR_JOBS = {"ServiceMonitor": "serviceMonitor", "PodMonitor": "podMonitor"}


def selected(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool | None:
    """Whether a label selector selects `labels` (None for expressions, not judged here)."""
    if set(selector) - {"matchLabels"}:
        return None
    return all(labels.get(k) == v for k, v in (selector.get("matchLabels") or {}).items())


def settle_prometheus(sim: Sim, plan: Plan) -> None:
    """Ready means Prometheus runs the configuration of the monitors the install made that its
    selectors select (by the job names prometheus-operator gives them).

    The operator writes each new monitor into the configuration Secret, but v0.85's config
    reloader misses a change after the pod's first one until its 3-minute re-read
    (prometheus-operator PR 7366; see `faults.components.restart_on`): a monitor installed
    after Prometheus started (the GPU Operator's DCGM exporter's, as on a cluster where the
    GPU Operator follows kube-prometheus-stack) is scraped only minutes later. A settled
    cluster scrapes it, so Prometheus is restarted on the written configuration when the
    one it runs lacks one (as a fault's change is applied).
    """
    if kps.CHART not in plan.values or "prometheus-operator" not in plan.components:
        return
    from kubernetes import client

    from simcluster.cluster import kube
    from simcluster.components import prometheus
    from simcluster.faults import components as faults

    release = plan.releases[kps.CHART]
    v = kps.values(plan.values[kps.CHART])
    name = kps.prometheus_name(v, release)
    sel = kps.selectors(v, release)
    api = kube.api_client(sim.kubeconfig)
    dyn = kube.dynamic(api)
    markers = []
    for refs in install.journal(sim).values():
        for r in refs:
            job = MONITOR_JOBS.get(r["kind"])
            if job is None:
                continue
            res = dyn.resources.get(api_version=r["apiVersion"], kind=r["kind"])
            labels = res.get(name=r["name"], namespace=r["namespace"]).metadata.labels or {}
            key = "serviceMonitorSelector" if job == "serviceMonitor" else "podMonitorSelector"
            if selected(sel[key], dict(labels)):  # namespace selectors: {} in the recipes
                markers.append(f"{job}/{r['namespace']}/{r['name']}/")
    if not markers or all(m in _running_config(api, prometheus) for m in markers):
        return
    where = (prometheus.NAMESPACE, name)
    written = faults.generated_config(client.CoreV1Api(api), where)
    pending = [m for m in markers if m not in written]
    faults.restart_on(sim, where, pending[-1] if pending else markers[0], True)


def _running_config(api: Any, prometheus: Any) -> str:
    """The configuration the Prometheus pod runs (its /api/v1/status/config), "" if unread."""
    import json
    import urllib.request

    url = prometheus.url(api)
    if url is None:
        return ""
    try:
        with urllib.request.urlopen(f"{url}/api/v1/status/config", timeout=10) as r:
            return str(json.load(r)["data"]["yaml"])
    except (OSError, ValueError, KeyError):
        return ""
