"""scheduler-plugins v0.34 as a second scheduler with the Coscheduling (gang) plugin.

What is modelled (and nothing more): the chart's "as a second scheduler"
install: the Deployment `scheduler-plugins-scheduler` in
`scheduler-plugins` runs the project's kube-scheduler build with one profile,
`schedulerName: scheduler-plugins-scheduler`, whose Coscheduling plugin holds
a PodGroup's pods at Permit until `minMember` of them fit, and the PodGroup
CRD of the same release. Its ServiceAccount gets the built-in
`system:kube-scheduler` and `system:volume-scheduler` roles, read access to
the authentication ConfigMap, and the PodGroup access the plugin needs. It
serves health on its pod IP (10259). Test-time knob: a PodGroup waits at
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
PERMIT_WAITING_SECONDS = 10
BACKOFF_SECONDS = 2


def upstream() -> Path:
    """The release's CRDs, copied into the cache beside the binary."""
    return COMPONENT.bin_dir().parent / "upstream"


def config_text(gang: bool = True) -> str:
    """The KubeSchedulerConfiguration: one profile, Coscheduling in it unless ``gang`` is off."""
    profile = {
        "schedulerName": SCHEDULER_NAME,
        "plugins": {
            "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
            "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
        },
        "pluginConfig": [{
            "name": "Coscheduling",
            "args": {"permitWaitingTimeSeconds": PERMIT_WAITING_SECONDS,
                     "podGroupBackoffSeconds": BACKOFF_SECONDS},
        }],
    }  # fmt: skip
    cfg = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [profile if gang else {"schedulerName": SCHEDULER_NAME}],
    }
    return yaml.safe_dump(cfg, sort_keys=False)


def args(gang: bool = True) -> list[str]:
    """The scheduler's args: its config file (the one without Coscheduling when ``gang`` is off)."""
    return [f"--config=/config/{CONFIG_FILE if gang else NO_GANG_FILE}",
            "--bind-address=$(POD_IP)", f"--secure-port={SECURE_PORT}", "--v=2"]  # fmt: skip


def rbac() -> list[Manifest]:
    """The scheduler's built-in roles plus PodGroup access, for its ServiceAccount."""
    account = (NAMESPACE, NAME)
    podgroups = [
        {"apiGroups": ["scheduling.x-k8s.io"], "resources": ["podgroups"],
         "verbs": ["get", "list", "watch", "update", "patch"]},
        {"apiGroups": ["scheduling.x-k8s.io"], "resources": ["podgroups/status"],
         "verbs": ["get", "update", "patch"]},
    ]  # fmt: skip
    return [
        objects.service_account(NAME, NAMESPACE),
        *objects.bound_role("ClusterRole", f"{NAME}-podgroups", podgroups, account),
        objects.binding("ClusterRole", f"{NAME}-as-kube-scheduler", "system:kube-scheduler",
                        account),
        objects.binding("ClusterRole", f"{NAME}-as-volume-scheduler", "system:volume-scheduler",
                        account),
        objects.binding("Role", f"{NAME}-auth-reader", "extension-apiserver-authentication-reader",
                        account, "kube-system"),
    ]  # fmt: skip


def deployment() -> Manifest:
    """The second scheduler, bound to its pod IP."""
    container = {
        "name": "scheduler",
        "image": IMAGE,
        "command": ["/bin/kube-scheduler"],
        "args": args(),
        "env": [objects.pod_ip_env()],
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": SECURE_PORT,
                                       "scheme": "HTTPS"},
                           "periodSeconds": 1, "failureThreshold": 60},
        "volumeMounts": [{"name": "config", "mountPath": "/config", "readOnly": True}],
    }  # fmt: skip
    volumes = [{"name": "config", "configMap": {"name": CONFIG}}]
    return objects.deployment(NAME, NAMESPACE, LABELS, [container], volumes)


def config_map() -> Manifest:
    """Both configs: the one in use, and the one the gang-plugin-disabled fault switches to."""
    return objects.configmap(CONFIG, NAMESPACE, CONFIG_FILE, config_text(),
                             {NO_GANG_FILE: config_text(gang=False)})  # fmt: skip


def manifests(ctx: Context) -> list[Manifest]:
    """Namespace, the PodGroup CRD, RBAC, config and the scheduler."""
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        *objects.documents(upstream() / "crd.yaml"),
        *rbac(),
        config_map(),
        deployment(),
    ]


COMPONENT = Component(
    name="coscheduling",
    summary="scheduler-plugins v0.34 second scheduler with Coscheduling (PodGroup gangs)",
    pin="SCHEDULER_PLUGINS_VERSION",
    images={"kube-scheduler": Image("kube-scheduler")},
    manifests=manifests,
    also_pinned_by=("SCHEDULER_PLUGINS_K8S_VERSION",),
)
