"""The cluster as plain dicts (the API's own JSON shape), behind a small protocol.

Checks see objects exactly as ``kubectl get -o json`` shows them, but for the DRA
API (``resource.k8s.io``): checks read and write its v1 shapes, and ``RestKube``
talks to the newest version the cluster serves (v1, v1beta2 or v1beta1),
converting on the way (``aicr.kube.dra``). ``KubeReader``
is what read-only checks need; ``Kube`` adds what checks that create workloads
need (create, delete, the list's resourceVersion, watch, logs). ``RestKube``
implements both over the REST client (``aicr.kube.rest``), the only client in a
check process; tests use the fakes in ``tests/unit/checks/fakes.py``.
"""

from __future__ import annotations

import builtins
import dataclasses
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol

from aicr.kube import dra
from aicr.kube.kinds import KINDS, Kind
from aicr.kube.kinds import of as kind_of

if TYPE_CHECKING:
    from aicr.kube.rest import KubeApi

Obj = dict[str, Any]


class NotSupported(LookupError):
    """A kind the client does not know how to fetch."""


class KubeReader(Protocol):
    """Read access to the cluster; every method returns API-shaped dicts."""

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        """One object, or None when it does not exist."""

    def list(
        self, kind: str, namespace: str | None = None, label_selector: str | None = None
    ) -> list[Obj]:
        """Objects of ``kind`` (in ``namespace``, or everywhere)."""


class Kube(KubeReader, Protocol):
    """Everything a check may do to the cluster (its RBAC decides what succeeds)."""

    def listing(
        self, kind: str, namespace: str | None = None, label_selector: str | None = None
    ) -> tuple[list[Obj], str]:
        """Objects of ``kind`` and the list's resourceVersion, to watch from."""

    def watch(
        self,
        kind: str,
        namespace: str | None,
        label_selector: str | None,
        resource_version: str,
        seconds: int,
    ) -> Iterator[Obj]:
        """Events ``{"type", "object"}`` after ``resource_version``, for at most ``seconds``."""

    def create(self, obj: Obj, dry_run: bool = False) -> Obj:
        """Create ``obj`` (its namespace from ``metadata.namespace``); the created object.

        ``dry_run`` asks for a server-side dry run: every admission stage runs
        (webhooks included), nothing is stored.
        """

    def delete(self, kind: str, name: str, namespace: str | None = None) -> None:
        """Delete one object at once; already gone is fine."""

    def logs(self, pod: str, namespace: str, container: str | None = None) -> str:
        """A pod's (container's) log."""

    def served(self, api_version: str) -> builtins.list[str] | None:
        """The resources API discovery lists for ``api_version``; None when it is not served."""

    def groups(self) -> dict[str, builtins.list[str]]:
        """Every served API group (``/apis``) and its versions, the preferred one first."""

    def pod_metric(self, api_version: str, namespace: str, pod: str, metric: str) -> Obj | None:
        """A custom metrics API's ``MetricValueList`` of ``metric`` for one pod; None on 404."""


class RestKube:
    """``Kube`` over the REST client (``aicr.kube.rest``)."""

    def __init__(self, api: KubeApi) -> None:
        self.api = api
        self._dra: tuple[str | None] | None = None  # (served DRA version,) once discovered

    def close(self) -> None:
        """Close the connection pool."""
        self.api.close()

    def dra_version(self) -> str | None:
        """The DRA version the cluster serves (``resource.k8s.io/v1beta2`` ...), None: none."""
        if self._dra is None:
            self._dra = (dra.pick(self.groups().get(dra.GROUP)),)
        return self._dra[0]

    def _at(self, kind: Kind) -> tuple[Kind, str | None]:
        """``kind`` at the version the cluster serves, and that version (DRA kinds only)."""
        if not dra.is_dra(kind.api_version):
            return kind, None
        version = self.dra_version()
        if version is None:  # not served: the v1 paths answer 404, as for any absent API
            return kind, None
        return dataclasses.replace(kind, api_version=version), version

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        """One object, or None on 404."""
        from aicr.kube.rest import KubeApiError

        at, version = self._at(_kind(kind))
        try:
            found = self.api.get(at.path(namespace, name))
        except KubeApiError as exc:
            if exc.status == 404:
                return None
            raise
        return dra.to_v1(found, version) if version else found

    def list(
        self, kind: str, namespace: str | None = None, label_selector: str | None = None
    ) -> list[Obj]:
        """Objects of ``kind``; the list's kind is copied onto each item."""
        return self.listing(kind, namespace, label_selector)[0]

    def listing(
        self, kind: str, namespace: str | None = None, label_selector: str | None = None
    ) -> tuple[builtins.list[Obj], str]:
        """Objects and resourceVersion; the list's kind is copied onto each item.

        A 404 on a collection means the API is not served (a CRD not installed):
        there are no such objects.
        """
        from aicr.kube.rest import KubeApiError

        at, version = self._at(_kind(kind))
        params = {"labelSelector": label_selector} if label_selector else None
        try:
            data = self.api.get(at.path(namespace), params)
        except KubeApiError as exc:
            if exc.status == 404:
                return [], ""
            raise
        items: builtins.list[Obj] = data.get("items") or []
        for item in items:
            item.setdefault("kind", at.name)
        if version:
            items = [dra.to_v1(item, version) for item in items]
        return items, str((data.get("metadata") or {}).get("resourceVersion") or "")

    def watch(
        self,
        kind: str,
        namespace: str | None,
        label_selector: str | None,
        resource_version: str,
        seconds: int,
    ) -> Iterator[Obj]:
        """The REST client's single-threaded watch."""
        at, version = self._at(_kind(kind))
        params = {"labelSelector": label_selector} if label_selector else None
        events = self.api.watch(at.path(namespace), resource_version, seconds, params)
        if not version:
            return events
        return (
            {**e, "object": dra.to_v1(e["object"], version)}
            if isinstance(e.get("object"), dict)
            else e
            for e in events
        )

    def create(self, obj: Obj, dry_run: bool = False) -> Obj:
        """POST to the object's collection (``?dryRun=All`` for a dry run)."""
        namespace = (obj.get("metadata") or {}).get("namespace")
        at, version = self._at(kind_of(obj))
        body = dra.from_v1(obj, version) if version else obj
        made = self.api.create(at.path(namespace), body, dry_run=dry_run)
        return dra.to_v1(made, version) if version else made

    def delete(self, kind: str, name: str, namespace: str | None = None) -> None:
        """DELETE with no grace period; 404 is fine."""
        at, _ = self._at(_kind(kind))
        self.api.delete(at.path(namespace, name), grace_seconds=0)

    def served(self, api_version: str) -> builtins.list[str] | None:
        """GET the group version's discovery document; 404 means not served."""
        from aicr.kube.rest import KubeApiError

        path = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        try:
            data = self.api.get(path)
        except KubeApiError as exc:
            if exc.status == 404:
                return None
            raise
        return [str(r.get("name")) for r in data.get("resources") or []]

    def groups(self) -> dict[str, builtins.list[str]]:
        """GET ``/apis``: each group's versions, the preferred one first."""
        found: dict[str, builtins.list[str]] = {}
        for g in self.api.get("/apis").get("groups") or []:
            preferred = (g.get("preferredVersion") or {}).get("version")
            versions = [str(v.get("version")) for v in g.get("versions") or []]
            found[str(g.get("name"))] = sorted(versions, key=lambda v: v != preferred)
        return found

    def pod_metric(self, api_version: str, namespace: str, pod: str, metric: str) -> Obj | None:
        """GET ``/apis/<api_version>/namespaces/<ns>/pods/<pod>/<metric>``; 404 means none."""
        from urllib.parse import quote

        from aicr.kube.rest import KubeApiError

        parts = "/".join(quote(p, safe="") for p in ("namespaces", namespace, "pods", pod, metric))
        try:
            return self.api.get(f"/apis/{api_version}/{parts}")
        except KubeApiError as exc:
            if exc.status == 404:
                return None
            raise

    def logs(self, pod: str, namespace: str, container: str | None = None) -> str:
        """GET the pod's log subresource."""
        path = KINDS["Pod"].path(namespace, pod) + "/log"
        return self.api.get_text(path, {"container": container} if container else None)


def _kind(name: str) -> Kind:
    spec = KINDS.get(name)
    if spec is None:
        raise NotSupported(name)
    return spec
