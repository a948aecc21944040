"""prometheus-adapter v0.12.0: the custom metrics API (custom.metrics.k8s.io) from Prometheus.

What is modelled (and nothing more): the Deployment
`monitoring/prometheus-adapter` with its ServiceAccount, RBAC (auth delegation,
the authentication-reader Role, read access, and the custom-metrics reader role
bound to the HPA controller), its rules ConfigMap, the Service and the
APIService `v1beta1.custom.metrics.k8s.io`, as the community chart lays them
out, built from the adapter's Go module (`build.sh`). It queries Prometheus
at its pod IP (the sim has no cluster DNS; on a cluster the chart gives the
Service's DNS name). Rules: the chart's default ones for pod series, every
gauge with namespace and pod labels served under its own name (the metric the
pod-autoscaling check's HPA scales on) and every `*_total` counter served as
`*_per_second`. Test-time knobs: a 15 s rate
window and a 5 s relist interval, so a new series is served within seconds.
Fault `adapter-down`: the Deployment is scaled to zero (the APIService goes
unavailable, as when the adapter crashes), healed by scaling back to one.
"""

from __future__ import annotations

from typing import Any

import yaml

from simcluster.components.base import (
    POD_IP_ENV,
    RBAC,
    Component,
    Context,
    Image,
    Manifest,
    binding,
    service_account,
    workload,
)

NAMESPACE = "monitoring"
NAME = "prometheus-adapter"
IMAGE = "registry.k8s.io/prometheus-adapter/prometheus-adapter:v0.12.0"
PORT = 6443
API_SERVICE = "v1beta1.custom.metrics.k8s.io"
RATE_WINDOW = "15s"
RELIST = "5s"


def rules() -> dict[str, Any]:
    """The adapter's rules: gauges with namespace and pod labels under their own names, and
    counters as per-second rates (the chart's default rules, reduced to pod series)."""
    pod_series = {"overrides": {"namespace": {"resource": "namespace"}, "pod": {"resource": "pod"}}}
    return {
        "rules": [
            {
                "seriesQuery": '{namespace!="",pod!=""}',
                "seriesFilters": [{"isNot": ".*_total$"}],
                "resources": pod_series,
                "name": {"matches": "^(.*)$", "as": "${1}"},
                "metricsQuery": "sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)",
            },
            {
                "seriesQuery": '{__name__=~".+_total",namespace!="",pod!=""}',
                "resources": pod_series,
                "name": {"matches": "^(.*)_total$", "as": "${1}_per_second"},
                "metricsQuery": f"sum(rate(<<.Series>>{{<<.LabelMatchers>>}}[{RATE_WINDOW}])) "
                "by (<<.GroupBy>>)",
            },
        ]
    }


def rbac() -> list[Manifest]:
    """What the chart grants the adapter, and the HPA controller's read access to its API."""
    reader = f"{NAME}-server-resources"
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
        binding(
            "hpa-controller-custom-metrics", reader, "kube-system", "horizontal-pod-autoscaler"
        ),
    ]


def deployment(prometheus_url: str) -> Manifest:
    """The adapter's Deployment, pointed at Prometheus."""
    labels = {"app.kubernetes.io/name": NAME}
    container = {
        "name": NAME,
        "image": IMAGE,
        "args": [
            f"--prometheus-url={prometheus_url}",
            f"--metrics-relist-interval={RELIST}",
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
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        *rbac(),
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": NAME, "namespace": NAMESPACE},
            "data": {"config.yaml": yaml.safe_dump(rules(), sort_keys=False)},
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
        deployment(prometheus),
        {
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {"name": API_SERVICE},
            "spec": {
                "service": {"name": NAME, "namespace": NAMESPACE, "port": 443},
                "group": "custom.metrics.k8s.io",
                "version": "v1beta1",
                "insecureSkipTLSVerify": True,
                "groupPriorityMinimum": 100,
                "versionPriority": 100,
            },
        },
    ]


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
    summary="prometheus-adapter v0.12.0: custom metrics API from Prometheus (Go module)",
    pin="PROMETHEUS_ADAPTER_VERSION",
    images={"prometheus-adapter": Image("adapter")},
    manifests=manifests,
    requires=("prometheus",),
    ready=ready,
)
