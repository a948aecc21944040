"""Karpenter v1.14 with its KWOK cloud provider, plus the GPU NodePool a recipe would add.

What is modelled (and nothing more): the chart's Deployment `karpenter` in
`kube-system` running the KWOK provider build, with the chart's
ServiceAccount and RBAC, the NodePool, NodeClaim and KWOKNodeClass CRDs of
the same release, and one instance type: the sim's GPU node profile
(p5.48xlarge, 8 `nvidia.com/gpu`) in the static nodes' zones. The install
also creates a KWOKNodeClass `default` and the NodePool `gpu` (instance type
p5.48xlarge, the GPU taint, the `aicr.dev/node-group: gpu` label, at most
16 GPUs). Nodes it creates carry `kwok.x-k8s.io/node: fake`, so the sim's
kwok keeps them Ready, and the runtime gives them the GPU model
(simcluster.nodes.provisioned). Its metrics and health listeners take every
address (no bind-address setting), on ports no other pod uses. Test-time
knobs: `consolidateAfter: 5s` on the NodePool, batch windows of 1 s idle /
3 s at most.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from simcluster.components import objects
from simcluster.components.base import Component, Context, Image, Manifest
from simcluster.nodes.layout import GPU_RESOURCE, LAYOUT, load_profile

NAMESPACE = "kube-system"
NAME = "karpenter"
IMAGE = "registry.k8s.io/karpenter/kwok-controller:v1.14.1"
LABELS = {"app.kubernetes.io/name": "karpenter", "app.kubernetes.io/instance": "karpenter"}
METRICS_PORT = 18080  # the chart's 8080/8081 would collide in the shared network namespace
HEALTH_PORT = 18081
INSTANCE_TYPES = "karpenter-instance-types"
GPU_PROFILE = "p5-h100"
NODEPOOL = "gpu"
NODEPOOL_GPU_LIMIT = 16
CONSOLIDATE_AFTER = "5s"


def upstream() -> Path:
    """The release's CRDs, copied into the cache beside the binary."""
    return COMPONENT.bin_dir().parent / "upstream"


def instance_types() -> list[dict[str, Any]]:
    """The KWOK provider's catalogue: the sim's GPU node profile, on demand, in the sim's zones."""
    prof = load_profile(GPU_PROFILE)
    zones = sorted({n.zone for n in LAYOUT})
    res = prof["resources"]
    return [
        {
            "name": prof["instanceType"],
            "offerings": [
                {
                    "Price": 98.32,
                    "Available": True,
                    "Requirements": [
                        {
                            "key": "karpenter.sh/capacity-type",
                            "operator": "In",
                            "values": ["on-demand"],
                        },
                        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [z]},
                    ],
                }
                for z in zones
            ],
            "architecture": prof["arch"],
            "operatingSystems": ["linux"],
            "resources": {
                "cpu": str(res["cpu"]),
                "memory": str(res["memory"]),
                "ephemeral-storage": str(res["storage"]),
                "pods": "110",
                GPU_RESOURCE: str(prof["gpu"]["count"]),
            },
        }
    ]


def _rules(text: str) -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = yaml.safe_load(text)
    return rules


# The v1.14.1 chart's rules (kwok/charts/templates/clusterrole*.yaml, role.yaml), leader
# election left out; DRA objects read for its scheduling simulation.
CORE_RULES = _rules("""
- {apiGroups: [karpenter.sh], verbs: [get, list, watch],
   resources: [nodepools, nodepools/status, nodeclaims, nodeclaims/status, nodeoverlays,
               nodeoverlays/status]}
- {apiGroups: [autoscaling.x-k8s.io], resources: [capacitybuffers, capacitybuffers/status],
   verbs: [get, list, watch, update, patch]}
- {apiGroups: [""], verbs: [get, list, watch],
   resources: [pods, nodes, persistentvolumes, persistentvolumeclaims, replicationcontrollers,
               namespaces, podtemplates]}
- {apiGroups: [storage.k8s.io], resources: [storageclasses, csinodes, volumeattachments],
   verbs: [get, watch, list]}
- {apiGroups: [apps], resources: [daemonsets, deployments, replicasets, statefulsets],
   verbs: [get, list, watch]}
- {apiGroups: [apiextensions.k8s.io], resources: [customresourcedefinitions], verbs: [watch, list]}
- {apiGroups: [policy], resources: [poddisruptionbudgets], verbs: [get, list, watch]}
- {apiGroups: [karpenter.sh], resources: [nodeclaims, nodeclaims/status, nodeclaims/finalizers],
   verbs: [create, delete, update, patch]}
- {apiGroups: [karpenter.sh],
   resources: [nodepools, nodepools/status, nodepools/finalizers, nodeoverlays/status],
   verbs: [update, patch]}
- {apiGroups: [""], resources: [events], verbs: [create, patch]}
- {apiGroups: [""], resources: [nodes], verbs: [create, patch, delete, update]}
- {apiGroups: [""], resources: [pods/eviction], verbs: [create]}
- {apiGroups: [""], resources: [pods], verbs: [delete]}
- {apiGroups: [resource.k8s.io], resources: [resourceclaims, resourceslices, deviceclasses],
   verbs: [get, list, watch]}
""")
KWOK_RULES = _rules("""
- {apiGroups: [karpenter.kwok.sh], resources: [kwoknodeclasses], verbs: [get, list, watch]}
- {apiGroups: [karpenter.kwok.sh], resources: [kwoknodeclasses, kwoknodeclasses/status],
   verbs: [patch, update]}
""")
LEASE_RULES = _rules("""
- {apiGroups: [coordination.k8s.io], resources: [leases], verbs: [get, list, watch, delete]}
""")


def rbac() -> list[Manifest]:
    """ServiceAccount, the chart's core and KWOK ClusterRoles and the node-lease Role."""
    account = (NAMESPACE, NAME)
    return [
        objects.service_account(NAME, NAMESPACE),
        *objects.bound_role("ClusterRole", f"{NAME}-core", CORE_RULES, account),
        *objects.bound_role("ClusterRole", NAME, KWOK_RULES, account),
        *objects.bound_role("Role", f"{NAME}-lease", LEASE_RULES, account, "kube-node-lease"),
    ]


def deployment() -> Manifest:
    """The controller with the KWOK provider's settings."""
    env = {
        "SYSTEM_NAMESPACE": NAMESPACE,
        "KARPENTER_SERVICE": NAME,
        "DISABLE_LEADER_ELECTION": "true",
        "METRICS_PORT": str(METRICS_PORT),
        "HEALTH_PROBE_PORT": str(HEALTH_PORT),
        "INSTANCE_TYPES_FILE_PATH": "/etc/karpenter/instance-types.json",
        "BATCH_IDLE_DURATION": "1s",
        "BATCH_MAX_DURATION": "3s",
        "LOG_LEVEL": "info",
    }
    container = {
        "name": "controller",
        "image": IMAGE,
        "env": [{"name": k, "value": v} for k, v in env.items()],
        "ports": [
            {"name": "http-metrics", "containerPort": METRICS_PORT},
            {"name": "http", "containerPort": HEALTH_PORT},
        ],
        "readinessProbe": {
            "httpGet": {"path": "/readyz", "port": HEALTH_PORT},
            "periodSeconds": 1,
            "failureThreshold": 120,
        },
        "volumeMounts": [
            {"name": "instance-types", "mountPath": "/etc/karpenter", "readOnly": True}
        ],
    }
    volumes = [{"name": "instance-types", "configMap": {"name": INSTANCE_TYPES}}]
    return objects.deployment(NAME, NAMESPACE, LABELS, [container], volumes)


def node_pool() -> list[Manifest]:
    """The KWOKNodeClass and the GPU NodePool a recipe's autoscaling section would create."""
    prof = load_profile(GPU_PROFILE)
    return [
        {
            "apiVersion": "karpenter.kwok.sh/v1alpha1",
            "kind": "KWOKNodeClass",
            "metadata": {"name": "default"},
        },
        {
            "apiVersion": "karpenter.sh/v1",
            "kind": "NodePool",
            "metadata": {"name": NODEPOOL},
            "spec": {
                "template": {
                    "metadata": {
                        "labels": {
                            "aicr.dev/node-group": "gpu",
                            "aicr.nvidia.com/node-type": "accelerated",
                        }
                    },
                    "spec": {
                        "nodeClassRef": {
                            "group": "karpenter.kwok.sh",
                            "kind": "KWOKNodeClass",
                            "name": "default",
                        },
                        "requirements": [
                            {
                                "key": "node.kubernetes.io/instance-type",
                                "operator": "In",
                                "values": [prof["instanceType"]],
                            },
                            {
                                "key": "karpenter.sh/capacity-type",
                                "operator": "In",
                                "values": ["on-demand"],
                            },
                        ],
                        "taints": [{"key": GPU_RESOURCE, "effect": "NoSchedule"}],
                        "expireAfter": "Never",
                    },
                },
                "limits": {GPU_RESOURCE: str(NODEPOOL_GPU_LIMIT)},
                "disruption": {
                    "consolidationPolicy": "WhenEmptyOrUnderutilized",
                    "consolidateAfter": CONSOLIDATE_AFTER,
                },
            },
        },
    ]


def manifests(ctx: Context) -> list[Manifest]:
    """CRDs, RBAC, the instance types, the controller, then the NodePool once the CRDs exist."""
    crds = objects.documents(upstream())
    catalogue = objects.configmap(
        INSTANCE_TYPES, NAMESPACE, "instance-types.json", json.dumps(instance_types(), indent=1)
    )
    return [*crds, *rbac(), catalogue, deployment(), *node_pool()]


COMPONENT = Component(
    name="karpenter",
    summary="Karpenter v1.14 (KWOK provider) with a GPU NodePool of the sim's H100 profile",
    pin="KARPENTER_VERSION",
    images={"kwok-controller": Image("karpenter-kwok")},
    manifests=manifests,
)
