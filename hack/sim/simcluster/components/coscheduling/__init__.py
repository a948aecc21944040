"""scheduler-plugins v0.34 as a second scheduler with the Coscheduling (gang) plugin.

What is modelled (and nothing more): the chart's "as a second scheduler"
install: the Deployment `scheduler-plugins-scheduler` in
`scheduler-plugins` runs the project's kube-scheduler build with one profile,
`schedulerName: scheduler-plugins-scheduler`, whose Coscheduling plugin holds
a PodGroup's pods at Permit until `minMember` of them fit, and the PodGroup
CRD of the same release. Its ServiceAccount gets the built-in
`system:kube-scheduler` and `system:volume-scheduler` roles, read access to
the authentication ConfigMap, and the PodGroup access the plugin needs. It
serves health on its pod IP (10259). Beside it the chart's
`scheduler-plugins-controller` (the project's cmd/controller) writes PodGroup
status: phase Pending until `minMember` pods exist, then Scheduling, Running
once `minMember` of them run (`running`, `succeeded`, `failed` counted), and
Finished or Failed. It also reconciles ElasticQuotas, so their CRD is
installed too (without it the controller's cache never syncs and it exits).
Its ClusterRole is the part of the chart's that the controller uses: pods
read, PodGroups and ElasticQuotas read and patched (status too), events
written; no leader election (the chart's default), so no leases. Health on
its pod IP (8081), no metrics server. Test-time knob: a PodGroup waits at
Permit at most 10 s (`permitWaitingTimeSeconds`), then its pods are rejected
and retried after 2 s (`podGroupBackoffSeconds`). No webhooks. Fault
`gang-plugin-disabled`: the scheduler restarts with a second config of the
same ConfigMap whose profile (same name) leaves Coscheduling out, so a
PodGroup's pods are bound one by one as they fit (a misconfigured install).
"""

from __future__ import annotations

from pathlib import Path

import yaml

from simcluster.components import objects
from simcluster.components.base import Component, Context, Image, Manifest

NAMESPACE = "scheduler-plugins"
NAME = "scheduler-plugins-scheduler"
SCHEDULER_NAME = "scheduler-plugins-scheduler"
CONFIG = "scheduler-config"
CONFIG_FILE = "scheduler-config.yaml"
NO_GANG_FILE = "scheduler-config-no-gang.yaml"  # the gang-plugin-disabled fault's
IMAGE = "registry.k8s.io/scheduler-plugins/kube-scheduler:v0.34.7"
LABELS = {"app": NAME, "component": "scheduler"}
SECURE_PORT = 10259
CONTROLLER = "scheduler-plugins-controller"
CONTROLLER_IMAGE = "registry.k8s.io/scheduler-plugins/controller:v0.34.7"
CONTROLLER_LABELS = {"app": CONTROLLER}
PROBE_PORT = 8081
PODS = f"app in ({NAME}, {CONTROLLER})"  # the selector of both workloads' pods
GROUP = "scheduling.x-k8s.io"
PERMIT_WAITING_SECONDS = 10
BACKOFF_SECONDS = 2


def upstream() -> Path:
    """The release's CRDs, copied into the cache beside the binaries."""
    return COMPONENT.bin_dir().parent / "upstream"


def config_text(gang: bool = True) -> str:
    """The KubeSchedulerConfiguration: one profile, Coscheduling in it unless ``gang`` is off."""
    profile = {
        "schedulerName": SCHEDULER_NAME,
        "plugins": {
            "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
            "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
        },
        "pluginConfig": [
            {
                "name": "Coscheduling",
                "args": {
                    "permitWaitingTimeSeconds": PERMIT_WAITING_SECONDS,
                    "podGroupBackoffSeconds": BACKOFF_SECONDS,
                },
            }
        ],
    }
    cfg = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [profile if gang else {"schedulerName": SCHEDULER_NAME}],
    }
    return yaml.safe_dump(cfg, sort_keys=False)


def args(gang: bool = True) -> list[str]:
    """The scheduler's args: its config file (the one without Coscheduling when ``gang`` is off)."""
    return [
        f"--config=/config/{CONFIG_FILE if gang else NO_GANG_FILE}",
        "--bind-address=$(POD_IP)",
        f"--secure-port={SECURE_PORT}",
        "--v=2",
    ]


def rbac() -> list[Manifest]:
    """The scheduler's built-in roles plus PodGroup access, for its ServiceAccount."""
    account = (NAMESPACE, NAME)
    podgroups = [
        {
            "apiGroups": [GROUP],
            "resources": ["podgroups"],
            "verbs": ["get", "list", "watch", "update", "patch"],
        },
        {
            "apiGroups": [GROUP],
            "resources": ["podgroups/status"],
            "verbs": ["get", "update", "patch"],
        },
    ]
    return [
        objects.service_account(NAME, NAMESPACE),
        *objects.bound_role("ClusterRole", f"{NAME}-podgroups", podgroups, account),
        objects.binding(
            "ClusterRole", f"{NAME}-as-kube-scheduler", "system:kube-scheduler", account
        ),
        objects.binding(
            "ClusterRole", f"{NAME}-as-volume-scheduler", "system:volume-scheduler", account
        ),
        objects.binding(
            "Role",
            f"{NAME}-auth-reader",
            "extension-apiserver-authentication-reader",
            account,
            "kube-system",
        ),
    ]


def deployment() -> Manifest:
    """The second scheduler, bound to its pod IP."""
    container = {
        "name": "scheduler",
        "image": IMAGE,
        "command": ["/bin/kube-scheduler"],
        "args": args(),
        "env": [objects.pod_ip_env()],
        "readinessProbe": {
            "httpGet": {"path": "/healthz", "port": SECURE_PORT, "scheme": "HTTPS"},
            "periodSeconds": 1,
            "failureThreshold": 60,
        },
        "volumeMounts": [{"name": "config", "mountPath": "/config", "readOnly": True}],
    }
    volumes = [{"name": "config", "configMap": {"name": CONFIG}}]
    return objects.deployment(NAME, NAMESPACE, LABELS, [container], volumes)


def controller_rbac() -> list[Manifest]:
    """What the controller's reconcilers read and patch, and its events; nothing else."""
    rules = [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch", "update"]},
        {
            "apiGroups": [GROUP],
            "resources": ["podgroups", "elasticquotas"],
            "verbs": ["get", "list", "watch", "patch"],
        },
        {
            "apiGroups": [GROUP],
            "resources": ["podgroups/status", "elasticquotas/status"],
            "verbs": ["patch"],
        },
    ]
    return [
        objects.service_account(CONTROLLER, NAMESPACE),
        *objects.bound_role("ClusterRole", CONTROLLER, rules, (NAMESPACE, CONTROLLER)),
    ]


def controller_deployment() -> Manifest:
    """The PodGroup status controller: health on its pod IP, metrics off, no leader election."""
    container = {
        "name": CONTROLLER,
        "image": CONTROLLER_IMAGE,
        "args": ["--metricsAddr=0", f"--probeAddr=$(POD_IP):{PROBE_PORT}"],
        "env": [objects.pod_ip_env()],
        "readinessProbe": {
            "httpGet": {"path": "/readyz", "port": PROBE_PORT},
            "periodSeconds": 1,
            "failureThreshold": 60,
        },
    }
    return objects.deployment(CONTROLLER, NAMESPACE, CONTROLLER_LABELS, [container])


def config_map() -> Manifest:
    """Both configs: the one in use, and the one the gang-plugin-disabled fault switches to."""
    return objects.configmap(
        CONFIG, NAMESPACE, CONFIG_FILE, config_text(), {NO_GANG_FILE: config_text(gang=False)}
    )


def manifests(ctx: Context) -> list[Manifest]:
    """Namespace, the PodGroup and ElasticQuota CRDs, RBAC, config, scheduler and controller."""
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        *objects.documents(upstream() / "crd.yaml", upstream() / "elasticquota-crd.yaml"),
        *rbac(),
        config_map(),
        deployment(),
        *controller_rbac(),
        controller_deployment(),
    ]


COMPONENT = Component(
    name="coscheduling",
    summary="scheduler-plugins v0.34 second scheduler with Coscheduling (PodGroup gangs) and "
    "its PodGroup status controller",
    pin="SCHEDULER_PLUGINS_VERSION",
    # "controller" alone is a generic word: the runtime would own every such image
    images={
        "kube-scheduler": Image("kube-scheduler"),
        "scheduler-plugins/controller": Image("controller"),
    },
    manifests=manifests,
    also_pinned_by=("SCHEDULER_PLUGINS_K8S_VERSION",),
)
