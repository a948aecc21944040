"""Objects every controller install makes: its ServiceAccount, roles bound to it, its Deployment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from simcluster.components.base import Manifest

RBAC = "rbac.authorization.k8s.io/v1"
# libyaml's safe loader where PyYAML has it: the releases' CRDs are megabytes of YAML, which the
# pure-Python loader reads about 3-5 times slower (kuberay's 3.2 MB: 3.7 s of CPU against 1.2 s,
# measured beside a loaded machine's other work), time a component's install spends before
# it applies anything
LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
SYSTEM_NODES = {"aicr.dev/node-group": "system"}  # where a recipe puts its controllers


def service_account(name: str, namespace: str) -> Manifest:
    """The ServiceAccount the controller runs as."""
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": name, "namespace": namespace},
    }


def bound_role(
    kind: str,
    name: str,
    rules: list[dict[str, Any]],
    account: tuple[str, str],
    namespace: str | None = None,
) -> list[Manifest]:
    """A Role or ClusterRole (`kind`) with `rules`, bound to ServiceAccount `account` (ns, name)."""
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return [
        {"apiVersion": RBAC, "kind": kind, "metadata": dict(meta), "rules": rules},
        binding(kind, name, name, account, namespace),
    ]


def binding(
    kind: str, name: str, role: str, account: tuple[str, str], namespace: str | None = None
) -> Manifest:
    """A (Cluster)RoleBinding of role `role` (of `kind`) to the ServiceAccount `account`."""
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {
        "apiVersion": RBAC,
        "kind": f"{kind}Binding",
        "metadata": meta,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
        "subjects": [{"kind": "ServiceAccount", "namespace": account[0], "name": account[1]}],
    }


def deployment(
    name: str,
    namespace: str,
    labels: dict[str, str],
    containers: list[dict[str, Any]],
    volumes: list[dict[str, Any]] | None = None,
    init: list[dict[str, Any]] | None = None,
) -> Manifest:
    """One replica on the system nodes, running as the ServiceAccount `name`."""
    spec: dict[str, Any] = {"serviceAccountName": name, "nodeSelector": dict(SYSTEM_NODES)}
    if init:
        spec["initContainers"] = init
    spec["containers"] = containers
    if volumes:
        spec["volumes"] = volumes
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": spec},
        },
    }


def pod_ip_env() -> dict[str, Any]:
    """The env var POD_IP from the downward API (listeners bind the pod's own address)."""
    return {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}


def documents(*paths: Path) -> list[Manifest]:
    """Every YAML document in `paths` (a folder: its *.yaml files, nested, by name)."""
    files = [f for p in paths for f in (sorted(p.rglob("*.yaml")) if p.is_dir() else [p])]
    return [d for f in files for d in yaml.load_all(f.read_text(), Loader=LOADER) if d]


def first(docs: list[Manifest], kind: str) -> Manifest:
    """The first document of `kind` (a release's role file may start with a comment document)."""
    return next(d for d in docs if d.get("kind") == kind)


def configmap(
    name: str, namespace: str, filename: str, text: str, more: dict[str, str] | None = None
) -> Manifest:
    """A ConfigMap holding a file (a config the component reads, or its template), and `more`."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": {filename: text, **(more or {})},
    }
