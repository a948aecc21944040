"""prometheus-operator v0.85.0 and its config reloader, as kube-prometheus-stack deploys them.

What is modelled (and nothing more): the operator's CRDs (ServiceMonitor,
PodMonitor, Prometheus, PrometheusRule, Probe, ScrapeConfig, Alertmanager...)
and ClusterRole exactly as its module publishes them, its ServiceAccount and
the Deployment `monitoring/kube-prometheus-stack-operator`, all built from
the operator's Go module (`build.sh`). Its admission webhook is not
registered (kube-prometheus-stack's default with TLS off); it does not manage
a kubelet Service (node addresses are loopback in the sim). When `prometheus`
is installed with it, the Prometheus server is a `Prometheus` object the
operator turns into the StatefulSet `prometheus-kube-prometheus-stack-prometheus`
with the config reloader beside it, selecting every ServiceMonitor and
PodMonitor in every namespace (the chart's selectors with
`*SelectorNilUsesHelmValues: false`; its defaults select only objects labelled
`release: <release>`). `sim recipe` names the operator and the Prometheus and
renders their selectors from the recipe's kube-prometheus-stack values instead
(`simcluster.components.prometheus.chart`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from simcluster.components import objects
from simcluster.components.base import (
    POD_IP_ENV,
    Component,
    Context,
    Image,
    Manifest,
    binding,
    workload,
)

NAMESPACE = "monitoring"
NAME = "kube-prometheus-stack-operator"
VERSION = "v0.85.0"
IMAGE = f"quay.io/prometheus-operator/prometheus-operator:{VERSION}"
RELOADER_IMAGE = f"quay.io/prometheus-operator/prometheus-config-reloader:{VERSION}"
PORT = 10250  # the chart's operator port; TLS off here


class _Loader(objects.LOADER):  # type: ignore[misc,valid-type]
    """YAML 1.1 reads a bare `=` as the "value" tag, which the CRDs' enums hold as a string."""


_Loader.add_constructor("tag:yaml.org,2002:value", yaml.SafeLoader.construct_yaml_str)


def published_manifests(folder: Path) -> list[Manifest]:
    """The CRDs and ClusterRole the build copied from the operator's module."""
    docs: list[Manifest] = []
    for f in sorted(folder.glob("*.yaml")):
        docs += [d for d in yaml.load_all(f.read_text(), Loader=_Loader) if d]
    return docs


def deployment(name: str = NAME) -> Manifest:
    """The operator's Deployment `name` (the chart's ``operator.fullname``)."""
    labels = {"app": name, "app.kubernetes.io/name": "prometheus-operator"}
    container = {
        "name": "kube-prometheus-stack",
        "image": IMAGE,
        "args": [
            f"--prometheus-config-reloader={RELOADER_IMAGE}",
            "--localhost=127.0.0.1",
            "--web.enable-tls=false",
            f"--web.listen-address=$(POD_IP):{PORT}",
        ],
        "env": [POD_IP_ENV],
        "ports": [{"name": "http", "containerPort": PORT}],
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": PORT}, "periodSeconds": 1},
    }
    return workload(
        "Deployment",
        name,
        NAMESPACE,
        labels,
        {
            "serviceAccountName": name,
            "nodeSelector": {"aicr.dev/node-group": "system"},
            "containers": [container],
        },
    )


def operator_name(ctx: Context) -> str:
    """The operator's name: the chart's ``operator.fullname`` for a recipe's values, else the
    default release's."""
    from simcluster.components.prometheus import chart

    given = ctx.values.get(chart.CHART)
    if given is None:
        return NAME
    return chart.operator_name(chart.values(given), ctx.release(chart.CHART))


def manifests(ctx: Context) -> list[Manifest]:
    """CRDs, RBAC and the operator's Deployment (its ServiceAccount and binding named as it)."""
    own = operator_name(ctx)
    published = published_manifests(COMPONENT.bin_dir().parent / "manifests")
    role = next(d for d in published if d["kind"] == "ClusterRole")
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        *published,
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": own, "namespace": NAMESPACE},
        },
        binding(own, role["metadata"]["name"], NAMESPACE),
        deployment(own),
    ]


def prometheus_object(
    ctx: Context, name: str, service_account: str, labels: dict[str, str], image: str
) -> Manifest:
    """The `Prometheus` object kube-prometheus-stack creates, with the sim's knobs."""
    every: dict[str, Any] = {}
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "Prometheus",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "image": image,
            "version": image.rsplit(":", 1)[-1],
            "replicas": 1,
            "serviceAccountName": service_account,
            "podMetadata": {"labels": labels},
            "nodeSelector": {"aicr.dev/node-group": "system"},
            "scrapeInterval": ctx.knobs.scrape_interval,
            "evaluationInterval": ctx.knobs.evaluation_interval,
            "retention": "1h",
            "serviceMonitorSelector": every,
            "serviceMonitorNamespaceSelector": every,
            "podMonitorSelector": every,
            "podMonitorNamespaceSelector": every,
            "probeSelector": every,
            "probeNamespaceSelector": every,
            "ruleSelector": every,
            "ruleNamespaceSelector": every,
        },
    }


COMPONENT = Component(
    name="prometheus-operator",
    summary="prometheus-operator v0.85.0 with its CRDs and config reloader (Go module)",
    pin="PROMETHEUS_OPERATOR_VERSION",
    images={
        "prometheus-operator": Image("operator"),
        "prometheus-config-reloader": Image("prometheus-config-reloader"),
    },
    manifests=manifests,
)
