"""A recording ``Kube`` over a list of API-shaped dicts, for checks tested without a cluster.

``FakeKube`` keeps objects in memory, records every create and delete, plays
scripted status changes to watchers (``script``: what a created object becomes,
step by step, as a kubelet would make it), serves pod logs, and raises injected
failures (``fail``: operation -> exception) to test that cleanup still runs.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterator
from typing import Any

Obj = dict[str, Any]
Script = Callable[[Obj], list[Obj]]


def _matches(obj: Obj, kind: str, namespace: str | None, selector: str | None) -> bool:
    wanted = dict(p.split("=", 1) for p in selector.split(",")) if selector else {}
    meta = obj["metadata"]
    return (
        obj["kind"] == kind.split(".")[0]
        and (namespace is None or meta.get("namespace") == namespace)
        and all((meta.get("labels") or {}).get(k) == v for k, v in wanted.items())
    )


class FakeKube:
    def __init__(self, objects: list[Obj] | None = None) -> None:
        self.objects = list(objects or [])
        self.calls: list[tuple[str, ...]] = []
        self.script: dict[str, Script] = {}
        self.logs_of: dict[str | tuple[str, str], str] = {}  # pod, or (pod, container)
        self.fail: dict[str, Exception] = {}
        self.discovery: dict[str, list[str]] = {}  # api version -> served resources
        self.api_groups: dict[str, list[str]] = {}  # group -> versions, preferred first
        # (pod, metric) -> the custom metrics API's value ("100", "15500m") or an error
        self.metrics: dict[tuple[str, str], str | Exception] = {}
        self._queue: list[Obj] = []  # watch events not yet delivered
        self._version = 0

    def _check(self, op: str) -> None:
        if op in self.fail:
            raise self.fail[op]

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        for o in self.objects:
            meta = o["metadata"]
            if (o["kind"] == kind.split(".")[0] and meta["name"] == name
                    and meta.get("namespace") == namespace):
                return o
        return None

    def list(
        self, kind: str, namespace: str | None = None, label_selector: str | None = None
    ) -> list[Obj]:
        return self.listing(kind, namespace, label_selector)[0]

    def listing(
        self, kind: str, namespace: str | None = None, label_selector: str | None = None
    ) -> tuple[list[Obj], str]:
        self._check("list")
        found = [copy.deepcopy(o) for o in self.objects
                 if _matches(o, kind, namespace, label_selector)]  # fmt: skip
        return found, str(self._version)

    def watch(
        self,
        kind: str,
        namespace: str | None,
        label_selector: str | None,
        resource_version: str,
        seconds: int,
    ) -> Iterator[Obj]:
        self._check("watch")
        self.calls.append(("watch", kind))
        ready = [e for e in self._queue if _matches(e["object"], kind, namespace, label_selector)]
        if not ready:
            time.sleep(min(seconds, 0.02))  # as a quiet stream would wait
        for event in ready:
            self._queue.remove(event)
            self._store(event["object"])
            yield copy.deepcopy(event)

    def _store(self, obj: Obj) -> None:
        meta = obj["metadata"]
        self.objects = [o for o in self.objects if (o["kind"], o["metadata"]["name"],
                        o["metadata"].get("namespace")) != (obj["kind"], meta["name"],
                                                            meta.get("namespace"))]  # fmt: skip
        self.objects.append(obj)

    def create(self, obj: Obj, dry_run: bool = False) -> Obj:
        if dry_run:  # admission only: `fail["dry-run"]` is what the webhooks answer
            self.calls.append(("dry-run", obj["kind"], obj["metadata"].get("namespace") or "",
                               obj["metadata"]["name"]))  # fmt: skip
            self._check("dry-run")
            return copy.deepcopy(obj)
        self._check("create")
        meta = obj["metadata"]
        self.calls.append(("create", obj["kind"], meta.get("namespace") or "", meta["name"]))
        self._version += 1
        made = copy.deepcopy(obj)
        made["metadata"]["resourceVersion"] = str(self._version)
        self.objects.append(made)
        for later in self.script.get(obj["kind"], lambda o: [])(copy.deepcopy(made)):
            self._queue.append({"type": "MODIFIED", "object": later})
        return copy.deepcopy(made)

    def delete(self, kind: str, name: str, namespace: str | None = None) -> None:
        self._check("delete")
        self.calls.append(("delete", kind, namespace or "", name))
        self.objects = [o for o in self.objects if not (
            o["kind"] == kind.split(".")[0] and o["metadata"]["name"] == name
            and o["metadata"].get("namespace") == namespace)]  # fmt: skip
        self._queue = [e for e in self._queue if e["object"]["metadata"]["name"] != name]

    def served(self, api_version: str) -> list[str] | None:
        self._check("served")
        return self.discovery.get(api_version)

    def groups(self) -> dict[str, list[str]]:
        self._check("groups")
        return dict(self.api_groups)

    def pod_metric(self, api_version: str, namespace: str, pod: str, metric: str) -> Obj | None:
        self._check("pod_metric")
        self.calls.append(("pod_metric", api_version, namespace, f"{pod}/{metric}"))
        found = self.metrics.get((pod, metric))
        if isinstance(found, Exception):
            raise found
        if found is None:
            return None
        return {"kind": "MetricValueList", "apiVersion": api_version, "items": [
            {"describedObject": {"kind": "Pod", "namespace": namespace, "name": pod},
             "metricName": metric, "value": found}]}  # fmt: skip

    def logs(self, pod: str, namespace: str, container: str | None = None) -> str:
        self._check("logs")
        if container is not None and (pod, container) in self.logs_of:
            return self.logs_of[(pod, container)]
        return self.logs_of.get(pod, "")


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


def evicted(namespace: str, name: str, owner: str = "ReplicaSet") -> Obj:
    """A pod its controller replaced: Failed, reason Evicted, waiting to be collected."""
    p = pod(namespace, name, phase="Failed")
    p["status"]["reason"] = "Evicted"
    p["metadata"]["ownerReferences"] = [{"kind": owner, "name": f"{name}-owner"}]
    return p


def deleting(namespace: str, name: str) -> Obj:
    """A pod being deleted (its deletionTimestamp set), not yet gone."""
    p = pod(namespace, name, waiting="ContainerCreating")
    p["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return p
