"""Reading the cluster as plain dicts (the API's own JSON shape), behind a small protocol.

Checks see objects exactly as ``kubectl get -o json`` shows them, and tests give
them a ``FakeReader`` holding such dicts instead of a cluster.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from aicr.k8s_kinds import KINDS, Kind

if TYPE_CHECKING:
    from aicr.kubeapi import KubeApi

Obj = dict[str, Any]


class NotSupported(LookupError):
    """A kind the reader does not know how to fetch."""


class KubeReader(Protocol):
    """Read access to the cluster; every method returns API-shaped dicts."""

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        """One object, or None when it does not exist."""

    def list(
        self, kind: str, namespace: str | None = None, label_selector: str | None = None
    ) -> list[Obj]:
        """Objects of ``kind`` (in ``namespace``, or everywhere)."""


class ApiReader:
    """A KubeReader over the REST client (``aicr.kubeapi``)."""

    def __init__(self, api: KubeApi) -> None:
        self.api = api

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        """One object, or None on 404."""
        from aicr.kubeapi import KubeApiError

        try:
            return self.api.get(_kind(kind).path(namespace, name))
        except KubeApiError as exc:
            if exc.status == 404:
                return None
            raise

    def list(
        self, kind: str, namespace: str | None = None, label_selector: str | None = None
    ) -> list[Obj]:
        """Objects of ``kind``; the list's kind is copied onto each item.

        A 404 on a collection means the API is not served (a CRD not installed):
        there are no such objects.
        """
        from aicr.kubeapi import KubeApiError

        params = {"labelSelector": label_selector} if label_selector else None
        try:
            data = self.api.get(_kind(kind).path(namespace), params)
        except KubeApiError as exc:
            if exc.status == 404:
                return []
            raise
        items: list[Obj] = data.get("items") or []
        for item in items:
            item.setdefault("kind", kind)
        return items


def _kind(name: str) -> Kind:
    spec = KINDS.get(name)
    if spec is None:
        raise NotSupported(name)
    return spec
