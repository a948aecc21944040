"""Reading the cluster as plain dicts (the API's own JSON shape), behind a small protocol.

Checks see objects exactly as ``kubectl get -o json`` shows them, and tests give
them a ``FakeReader`` holding such dicts instead of a cluster.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

Obj = dict[str, Any]


@dataclass(frozen=True)
class Kind:
    """How to reach one kind through the generated client."""

    api: str  # class name in kubernetes.client
    snake: str  # e.g. "deployment" -> read_namespaced_deployment
    namespaced: bool = True


KINDS: dict[str, Kind] = {
    "Namespace": Kind("CoreV1Api", "namespace", namespaced=False),
    "Node": Kind("CoreV1Api", "node", namespaced=False),
    "Pod": Kind("CoreV1Api", "pod"),
    "Service": Kind("CoreV1Api", "service"),
    "ConfigMap": Kind("CoreV1Api", "config_map"),
    "Secret": Kind("CoreV1Api", "secret"),
    "ServiceAccount": Kind("CoreV1Api", "service_account"),
    "Deployment": Kind("AppsV1Api", "deployment"),
    "DaemonSet": Kind("AppsV1Api", "daemon_set"),
    "StatefulSet": Kind("AppsV1Api", "stateful_set"),
    "EndpointSlice": Kind("DiscoveryV1Api", "endpoint_slice"),
    "CustomResourceDefinition": Kind(
        "ApiextensionsV1Api", "custom_resource_definition", namespaced=False
    ),
    "ResourceSlice": Kind("ResourceV1Api", "resource_slice", namespaced=False),
    "DeviceClass": Kind("ResourceV1Api", "device_class", namespaced=False),
    "ResourceClaim": Kind("ResourceV1Api", "resource_claim"),
}


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
                resp = getattr(api, f"read_namespaced_{spec.snake}")(
                    name, namespace, _preload_content=False
                )
            else:
                resp = getattr(api, f"read_{spec.snake}")(name, _preload_content=False)
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
            resp = getattr(api, f"list_namespaced_{spec.snake}")(namespace, **kwargs)
        elif spec.namespaced:
            resp = getattr(api, f"list_{spec.snake}_for_all_namespaces")(**kwargs)
        else:
            resp = getattr(api, f"list_{spec.snake}")(**kwargs)
        items: list[Obj] = json.loads(resp.data).get("items") or []
        for item in items:
            item.setdefault("kind", kind)
        return items
