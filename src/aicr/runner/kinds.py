"""Create, list and delete the kinds a run makes, through the generated client.

The kind table lives in aicr.k8s_kinds (shared with the checks); the rest of
the runner deals in plain manifest dicts.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from aicr.k8s_kinds import KINDS, Kind

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

Obj = dict[str, Any]


# Deletion order of `cleanup`: Jobs before their pods (no controller re-creates a
# pod of a deleted Job), bindings before roles, namespaces last.
CLEANUP_ORDER = tuple(
    KINDS[name]
    for name in ("Job", "Pod", "Lease", "ConfigMap", "RoleBinding", "Role", "ServiceAccount",
                 "ClusterRoleBinding", "ClusterRole", "Namespace")
)  # fmt: skip


def _api(api: ApiClient, kind: Kind) -> Any:
    from kubernetes import client

    return getattr(client, kind.api)(api)


def create(api: ApiClient, obj: Obj) -> None:
    """Create ``obj``; raises ApiException (409 when it exists)."""
    kind = KINDS[obj["kind"]]
    target = _api(api, kind)
    if kind.namespaced:
        getattr(target, f"create_namespaced_{kind.stem}")(
            obj["metadata"]["namespace"], obj, _preload_content=False
        )
    else:
        getattr(target, f"create_{kind.stem}")(obj, _preload_content=False)


def list_all(api: ApiClient, kind: Kind, selector: str) -> list[Obj]:
    """Every object of ``kind`` matching ``selector``, in every namespace."""
    target = _api(api, kind)
    if kind.namespaced:
        fn = getattr(target, f"list_{kind.stem}_for_all_namespaces")
    else:
        fn = getattr(target, f"list_{kind.stem}")
    data = json.loads(fn(label_selector=selector, _preload_content=False).data)
    items: list[Obj] = data.get("items") or []
    return items


def delete(api: ApiClient, kind: Kind, name: str, namespace: str | None) -> None:
    """Delete one object (dependents in the background); a 404 is fine."""
    from kubernetes.client.exceptions import ApiException

    target = _api(api, kind)
    body = {"propagationPolicy": "Background"}
    try:
        if kind.namespaced:
            getattr(target, f"delete_namespaced_{kind.stem}")(name, namespace, body=body)
        else:
            getattr(target, f"delete_{kind.stem}")(name, body=body)
    except ApiException as exc:
        if exc.status != 404:
            raise


def describe(kind: Kind, obj: Obj) -> str:
    """``Kind namespace/name`` for messages."""
    meta = obj.get("metadata") or {}
    where = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{kind.name} {where}{meta.get('name')}"
