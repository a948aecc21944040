"""A KubeReader over a list of API-shaped dicts, for checks tested without a cluster."""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


class FakeReader:
    def __init__(self, objects: list[Obj]) -> None:
        self.objects = objects

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        for o in self.objects:
            meta = o["metadata"]
            if o["kind"] == kind and meta["name"] == name and meta.get("namespace") == namespace:
                return o
        return None

    def list(
        self, kind: str, namespace: str | None = None, label_selector: str | None = None
    ) -> list[Obj]:
        wanted = dict(p.split("=", 1) for p in label_selector.split(",")) if label_selector else {}
        return [
            o
            for o in self.objects
            if o["kind"] == kind
            and (namespace is None or o["metadata"].get("namespace") == namespace)
            and all(o["metadata"].get("labels", {}).get(k) == v for k, v in wanted.items())
        ]


def ns(name: str, phase: str = "Active") -> Obj:
    return {"kind": "Namespace", "metadata": {"name": name}, "status": {"phase": phase}}


def deployment(namespace: str, name: str, want: int = 1, available: int = 1) -> Obj:
    return {
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "generation": 1},
        "spec": {"replicas": want},
        "status": {
            "observedGeneration": 1,
            "availableReplicas": available,
            "updatedReplicas": available,
        },
    }


def daemon_set(namespace: str, name: str, want: int = 2, ready: int = 2) -> Obj:
    return {
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": namespace},
        "status": {"desiredNumberScheduled": want, "numberReady": ready},
    }


def pod(namespace: str, name: str, phase: str = "Running", waiting: str | None = None) -> Obj:
    state = {"waiting": {"reason": waiting}} if waiting else {"running": {}}
    return {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "status": {
            "phase": phase,
            "conditions": [{"type": "Ready", "status": "False" if waiting else "True"}],
            "containerStatuses": [{"name": "c", "state": state}],
        },
    }
