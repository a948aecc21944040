"""Readiness of what an install created: workloads ready, pods' addresses."""

from __future__ import annotations

from typing import Any

from kubernetes import client
from kubernetes.client.rest import ApiException

WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet")


def ref(obj: dict[str, Any]) -> dict[str, Any]:
    """What names an object: apiVersion, kind, name, namespace (None when cluster-scoped)."""
    meta = obj["metadata"]
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": meta["name"],
        "namespace": meta.get("namespace"),
    }


def pending(api: client.ApiClient, refs: list[dict[str, Any]]) -> list[str]:
    """`Kind ns/name` of every workload among `refs` (see `ref`) that is not ready yet."""
    apps = client.AppsV1Api(api)
    out = []
    for r in refs:
        kind, meta = r["kind"], r
        if kind not in WORKLOAD_KINDS:
            continue
        read = {
            "Deployment": apps.read_namespaced_deployment,
            "StatefulSet": apps.read_namespaced_stateful_set,
            "DaemonSet": apps.read_namespaced_daemon_set,
        }[kind]
        try:
            s = read(meta["name"], meta["namespace"]).status
        except ApiException:
            out.append(f"{kind} {meta['namespace']}/{meta['name']}")
            continue
        if kind == "DaemonSet":
            done = (s.number_ready or 0) >= (s.desired_number_scheduled or 0) and (
                s.desired_number_scheduled or 0
            ) > 0
        else:
            done = (s.ready_replicas or 0) >= (s.replicas or 0) and (s.replicas or 0) > 0
        if not done:
            out.append(f"{kind} {meta['namespace']}/{meta['name']}")
    return out


def _ready(pod: Any) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions or [])


def ready_pods(api: client.ApiClient, namespace: str, selector: str) -> list[Any]:
    """Ready, not terminating pods matching `selector`, by name."""
    pods = client.CoreV1Api(api).list_namespaced_pod(namespace, label_selector=selector).items
    live = [p for p in pods if not p.metadata.deletion_timestamp and _ready(p)]
    return sorted(live, key=lambda p: p.metadata.name)


def ready_pod_ip(api: client.ApiClient, namespace: str, selector: str) -> str | None:
    """The pod IP of the first ready pod matching `selector`, or None."""
    pods = ready_pods(api, namespace, selector)
    return str(pods[0].status.pod_ip) if pods and pods[0].status.pod_ip else None
