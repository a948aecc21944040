"""Reading the cluster as plain dicts (the API's own JSON shape), behind a small protocol.

Checks see objects exactly as ``kubectl get -o json`` shows them, and tests give
them a ``FakeReader`` holding such dicts instead of a cluster.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from aicr.k8s_kinds import KINDS, Kind

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

Obj = dict[str, Any]


@dataclass(frozen=True)
class CustomKind:
    """A custom resource, reached through CustomObjectsApi."""

    group: str
    version: str
    plural: str
    namespaced: bool = True


CUSTOM_KINDS: dict[str, CustomKind] = {
    # GPU Operator's ClusterPolicy (nvidia.com/v1, cluster-scoped)
    "ClusterPolicy": CustomKind("nvidia.com", "v1", "clusterpolicies", namespaced=False),
}


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
    """A KubeReader over a real API client."""

    def __init__(self, api: ApiClient) -> None:
        self.api = api

    def _client(self, kind: str) -> tuple[Any, Kind]:
        from kubernetes import client

        spec = KINDS.get(kind)
        if spec is None:
            raise NotSupported(kind)
        return getattr(client, spec.api)(self.api), spec

    def _custom(self, kind: str) -> tuple[Any, CustomKind] | None:
        from kubernetes import client

        spec = CUSTOM_KINDS.get(kind)
        return (client.CustomObjectsApi(self.api), spec) if spec else None

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        """One object, or None on 404."""
        from kubernetes.client.exceptions import ApiException

        custom = self._custom(kind)
        if custom is not None:
            capi, c = custom
            try:
                if c.namespaced:
                    found: Obj = capi.get_namespaced_custom_object(
                        c.group, c.version, namespace, c.plural, name
                    )
                else:
                    found = capi.get_cluster_custom_object(c.group, c.version, c.plural, name)
            except ApiException as exc:
                if exc.status == 404:
                    return None
                raise
            return found
        api, spec = self._client(kind)
        try:
            if spec.namespaced:
                resp = getattr(api, f"read_namespaced_{spec.stem}")(
                    name, namespace, _preload_content=False
                )
            else:
                resp = getattr(api, f"read_{spec.stem}")(name, _preload_content=False)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise
        obj: Obj = json.loads(resp.data)
        return obj

    def list(
        self, kind: str, namespace: str | None = None, label_selector: str | None = None
    ) -> list[Obj]:
        """Objects of ``kind``; the list's kind is copied onto each item."""
        from kubernetes.client.exceptions import ApiException

        custom = self._custom(kind)
        if custom is not None:
            capi, c = custom
            sel = {"label_selector": label_selector} if label_selector else {}
            try:
                if c.namespaced and namespace:
                    out = capi.list_namespaced_custom_object(
                        c.group, c.version, namespace, c.plural, **sel
                    )
                else:
                    out = capi.list_cluster_custom_object(c.group, c.version, c.plural, **sel)
            except ApiException as exc:
                if exc.status == 404:  # the CRD is not installed: no such objects
                    return []
                raise
            found: list[Obj] = out.get("items") or []
            for item in found:
                item.setdefault("kind", kind)
            return found
        api, spec = self._client(kind)
        kwargs: dict[str, Any] = {"_preload_content": False}
        if label_selector:
            kwargs["label_selector"] = label_selector
        if spec.namespaced and namespace:
            resp = getattr(api, f"list_namespaced_{spec.stem}")(namespace, **kwargs)
        elif spec.namespaced:
            resp = getattr(api, f"list_{spec.stem}_for_all_namespaces")(**kwargs)
        else:
            resp = getattr(api, f"list_{spec.stem}")(**kwargs)
        items: list[Obj] = json.loads(resp.data).get("items") or []
        for item in items:
            item.setdefault("kind", kind)
        return items
