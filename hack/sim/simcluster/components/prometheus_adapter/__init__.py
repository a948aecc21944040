"""prometheus-adapter v0.12.0: the custom (and external) metrics API from Prometheus.

What is modelled (and nothing more): the Deployment
`monitoring/prometheus-adapter` with its ServiceAccount, RBAC (auth delegation,
the authentication-reader Role, read access, and the custom-metrics reader role
with the chart's binding), its rules ConfigMap, the Service and the
APIService `v1beta1.custom.metrics.k8s.io`, as the community chart lays them
out, built from the adapter's Go module (`build.sh`). It queries Prometheus
at its pod IP (the sim has no cluster DNS; on a cluster the chart gives the
Service's DNS name from `prometheus.url`).

Rules: exactly what the chart (prometheus-adapter 5.x, `templates/configmap.yaml`)
renders from the values the recipes reference
(`recipes/components/prometheus-adapter/values.yaml`, or the values a recipe
gives in `Context.values`): `rules.custom` as `rules` (after the chart's
default rules when `rules.default` is true), `rules.external` as
`externalRules`; with external rules, the APIService
`v1beta1.external.metrics.k8s.io` and its reader role bound to the HPA
controller (`templates/external-metrics-*.yaml`). `metricsRelistInterval`
comes from the values (the chart's default 1m when unset). The sim adds no
rule of its own. Fault `adapter-down`: the Deployment is scaled to zero (the
APIService goes unavailable, as when the adapter crashes), healed by scaling
back to one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from simcluster.components.base import (
    POD_IP_ENV,
    RBAC,
    RECIPE_COMPONENTS,
    Component,
    Context,
    Image,
    Manifest,
    binding,
    chart_values,
    service_account,
    workload,
)

NAMESPACE = "monitoring"
NAME = "prometheus-adapter"
IMAGE = "registry.k8s.io/prometheus-adapter/prometheus-adapter:v0.12.0"
PORT = 6443
API_SERVICE = "v1beta1.custom.metrics.k8s.io"
EXTERNAL_API_SERVICE = "v1beta1.external.metrics.k8s.io"
# The values file the example recipes reference (AICR's --data layout).
VALUES = RECIPE_COMPONENTS / NAME / "values.yaml"
CHART_RELIST = "1m"  # the chart's values.yaml metricsRelistInterval


def values(ctx: Context) -> Mapping[str, Any]:
    """The adapter's Helm values: the recipe's (``ctx.values``), else the shipped file."""
    return chart_values(ctx, NAME, VALUES)


def chart_default_rules() -> list[dict[str, Any]]:
    """The chart's ``rules.default`` block (templates/configmap.yaml), as it renders it."""
    pod = {"overrides": {"namespace": {"resource": "namespace"}, "pod": {"resource": "pod"}}}
    container = '{__name__=~"^container_.*",container!="POD",namespace!="",pod!=""}'
    other = '{namespace!="",__name__!~"^container_.*"}'
    rate = 'sum(rate(<<.Series>>{<<.LabelMatchers>>,container!="POD"}[5m])) by (<<.GroupBy>>)'
    template = {"template": "<<.Resource>>"}
    return [
        {
            "seriesQuery": container,
            "seriesFilters": [],
            "resources": pod,
            "name": {"matches": "^container_(.*)_seconds_total$", "as": ""},
            "metricsQuery": rate,
        },
        {
            "seriesQuery": container,
            "seriesFilters": [{"isNot": "^container_.*_seconds_total$"}],
            "resources": pod,
            "name": {"matches": "^container_(.*)_total$", "as": ""},
            "metricsQuery": rate,
        },
        {
            "seriesQuery": container,
            "seriesFilters": [{"isNot": "^container_.*_total$"}],
            "resources": pod,
            "name": {"matches": "^container_(.*)$", "as": ""},
            "metricsQuery": 'sum(<<.Series>>{<<.LabelMatchers>>,container!="POD"}) '
            "by (<<.GroupBy>>)",
        },
        {
            "seriesQuery": other,
            "seriesFilters": [{"isNot": ".*_total$"}],
            "resources": template,
            "name": {"matches": "", "as": ""},
            "metricsQuery": "sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)",
        },
        {
            "seriesQuery": other,
            "seriesFilters": [{"isNot": ".*_seconds_total"}],
            "resources": template,
            "name": {"matches": "^(.*)_total$", "as": ""},
            "metricsQuery": "sum(rate(<<.Series>>{<<.LabelMatchers>>}[5m])) by (<<.GroupBy>>)",
        },
        {
            "seriesQuery": other,
            "seriesFilters": [],
            "resources": template,
            "name": {"matches": "^(.*)_seconds_total$", "as": ""},
            "metricsQuery": "sum(rate(<<.Series>>{<<.LabelMatchers>>}[5m])) by (<<.GroupBy>>)",
        },
    ]


def rules(given: Mapping[str, Any]) -> dict[str, Any]:
    """config.yaml as the chart renders it from ``given`` (the values): nothing added."""
    spec = given.get("rules") or {}
    out: dict[str, Any] = {}
    custom = [
        *(chart_default_rules() if spec.get("default", True) else []),
        *(spec.get("custom") or []),
    ]
    if custom:
        out["rules"] = custom
    if spec.get("external"):
        out["externalRules"] = list(spec["external"])
    if spec.get("resource"):
        out["resourceRules"] = spec["resource"]
    return out


def rbac(external: bool) -> list[Manifest]:
    """What the chart grants the adapter, and the HPA controller's read access to its APIs.

    With external rules, the chart's ``<name>-external-metrics`` ClusterRole and its
    ``<name>-hpa-controller-external-metrics`` binding to the HPA controller
    (templates/external-metrics-cluster-role.yaml, -cluster-role-binding-hpa.yaml).
    """
    reader = f"{NAME}-server-resources"
    extra: list[Manifest] = []
    if external:
        role = f"{NAME}-external-metrics"
        extra = [
            {
                "apiVersion": RBAC,
                "kind": "ClusterRole",
                "metadata": {"name": role},
                "rules": [
                    {
                        "apiGroups": ["external.metrics.k8s.io"],
                        "resources": ["*"],
                        "verbs": ["list", "get", "watch"],
                    }
                ],
            },
            binding(
                f"{NAME}-hpa-controller-external-metrics",
                role,
                "kube-system",
                "horizontal-pod-autoscaler",
            ),
        ]
    return [
        *service_account(
            NAME,
            NAMESPACE,
            [
                {
                    "apiGroups": [""],
                    "resources": ["namespaces", "pods", "services", "nodes"],
                    "verbs": ["get", "list", "watch"],
                }
            ],
        ),
        binding(f"{NAME}:system:auth-delegator", "system:auth-delegator", NAMESPACE, NAME),
        {
            "apiVersion": RBAC,
            "kind": "RoleBinding",
            "metadata": {"name": f"{NAME}-auth-reader", "namespace": "kube-system"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Role",
                "name": "extension-apiserver-authentication-reader",
            },
            "subjects": [{"kind": "ServiceAccount", "name": NAME, "namespace": NAMESPACE}],
        },
        {
            "apiVersion": RBAC,
            "kind": "ClusterRole",
            "metadata": {"name": reader},
            "rules": [{"apiGroups": ["custom.metrics.k8s.io"], "resources": ["*"], "verbs": ["*"]}],
        },
        # the chart's custom-metrics-cluster-role-binding-hpa.yaml: despite its name it binds
        # the reader role to the adapter's own ServiceAccount; the HPA controller's access
        # is Kubernetes' own (system:controller:horizontal-pod-autoscaler, with the
        # controller manager's --use-service-account-credentials)
        binding(f"{NAME}-hpa-controller", reader, NAMESPACE, NAME),
        *extra,
    ]


def deployment(prometheus_url: str, relist: str) -> Manifest:
    """The adapter's Deployment, pointed at Prometheus."""
    labels = {"app.kubernetes.io/name": NAME}
    container = {
        "name": NAME,
        "image": IMAGE,
        "args": [
            f"--prometheus-url={prometheus_url}",
            f"--metrics-relist-interval={relist}",
            "--config=/etc/adapter/config.yaml",
            f"--secure-port={PORT}",
            "--bind-address=$(POD_IP)",
            "--cert-dir=/var/run/serving-cert",
            "--v=2",
        ],
        "env": [POD_IP_ENV],
        "ports": [{"name": "https", "containerPort": PORT}],
        "readinessProbe": {
            "httpGet": {"path": "/readyz", "port": PORT, "scheme": "HTTPS"},
            "periodSeconds": 1,
            "failureThreshold": 60,
        },
        "volumeMounts": [
            {"name": "config", "mountPath": "/etc/adapter"},
            {"name": "serving-cert", "mountPath": "/var/run/serving-cert"},
        ],
    }
    return workload(
        "Deployment",
        NAME,
        NAMESPACE,
        labels,
        {
            "serviceAccountName": NAME,
            "nodeSelector": {"aicr.dev/node-group": "system"},
            "containers": [container],
            "volumes": [
                {"name": "config", "configMap": {"name": NAME}},
                {"name": "serving-cert", "emptyDir": {}},
            ],
        },
    )


def manifests(ctx: Context) -> list[Manifest]:
    """Everything the chart creates, pointed at the running Prometheus."""
    prometheus = ctx.addresses.get("prometheus")
    if prometheus is None:
        raise ValueError("prometheus-adapter needs a running Prometheus (it requires prometheus)")
    given = values(ctx)
    config = rules(given)
    external = bool(config.get("externalRules"))
    relist = str(given.get("metricsRelistInterval") or CHART_RELIST)
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        *rbac(external),
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": NAME, "namespace": NAMESPACE},
            "data": {"config.yaml": yaml.safe_dump(config, sort_keys=False)},
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": NAME, "namespace": NAMESPACE},
            "spec": {
                "selector": {"app.kubernetes.io/name": NAME},
                "ports": [{"port": 443, "targetPort": PORT}],
            },
        },
        deployment(prometheus, relist),
        api_service("custom.metrics.k8s.io"),
        *([api_service("external.metrics.k8s.io")] if external else []),
    ]


def api_service(group: str) -> Manifest:
    """The chart's APIService of ``group`` v1beta1 (templates/*-metrics-apiservice.yaml)."""
    return {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": f"v1beta1.{group}"},
        "spec": {
            "service": {"name": NAME, "namespace": NAMESPACE, "port": 443},
            "group": group,
            "version": "v1beta1",
            "insecureSkipTLSVerify": True,
            "groupPriorityMinimum": 100,
            "versionPriority": 100,
        },
    }


def ready(api: Any) -> str | None:
    """Ready once the API server reports the APIService Available (it reached the adapter)."""
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    try:
        obj = client.ApiregistrationV1Api(api).read_api_service(API_SERVICE)
    except ApiException:
        return f"APIService {API_SERVICE}"
    ok = any(c.type == "Available" and c.status == "True" for c in obj.status.conditions or [])
    return None if ok else f"APIService {API_SERVICE} to be Available"


COMPONENT = Component(
    name="prometheus-adapter",
    summary="prometheus-adapter v0.12.0: custom and external metrics APIs from Prometheus "
    "(Go module), rules from the recipe's values",
    pin="PROMETHEUS_ADAPTER_VERSION",
    images={"prometheus-adapter": Image("adapter")},
    manifests=manifests,
    requires=("prometheus",),
    ready=ready,
)
