"""Which kinds a run makes: the runner's own (created through the generated client) and the checks'.

The kind table lives in aicr.kube.kinds (shared with the checks). What cleanup
deletes is derived: the runner's own kinds plus every kind a catalog rule lets
a check ``create`` (cluster-scoped included), so a custom resource a new check
creates is removed without touching cleanup. A rule naming a resource the table
does not know is refused (``UnknownKind``; a unit test runs the derivation).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from aicr.kube.kinds import KINDS, Kind, by_resource

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

    from aicr.catalog.model import Catalog

Obj = dict[str, Any]

# The runner's own objects, in deletion order: Jobs before their pods (no controller
# re-creates a pod of a deleted Job), bindings before roles, namespaces last.
RUNNER_ORDER = tuple(
    KINDS[name]
    for name in (
        "Job",
        "Pod",
        "Lease",
        "ConfigMap",
        "RoleBinding",
        "Role",
        "ServiceAccount",
        "ClusterRoleBinding",
        "ClusterRole",
        "Namespace",
    )
)
CREATE_VERBS = ("create", "*")


class UnknownKind(LookupError):
    """A catalog rule lets a check create a resource the kinds table does not know."""


def created_by_checks(catalog: Catalog) -> tuple[Kind, ...]:
    """Every kind a catalog rule lets a check create, in catalog order (subresources aside)."""
    found: list[Kind] = []
    for check in catalog.checks:
        for rule in [*check.access, *check.workload_access]:
            if not any(v in CREATE_VERBS for v in rule.verbs):
                continue
            for group in rule.api_groups:
                for resource in rule.resources:
                    if "/" in resource:
                        continue  # pods/exec, pods/eviction: actions, not objects to remove
                    kind = by_resource(group, resource)
                    if kind is None:
                        raise UnknownKind(
                            f"catalog check {check.name} may create {resource!r} in API group "
                            f"{group or 'core'!r}, which aicr.kube.kinds does not know: add its "
                            "row so run cleanup can find and delete those objects"
                        )
                    if kind not in found:
                        found.append(kind)
    return tuple(found)


@functools.cache
def cleanup_order() -> tuple[Kind, ...]:
    """The kinds cleanup deletes: the checks' first (they may own pods), then the runner's."""
    from aicr.catalog import load_catalog

    checks = [k for k in created_by_checks(load_catalog()) if k not in RUNNER_ORDER]
    return (*checks, *RUNNER_ORDER)


def _api(api: ApiClient, kind: Kind) -> Any:
    from kubernetes import client

    return getattr(client, kind.api)(api)


def create(api: ApiClient, obj: Obj) -> None:
    """Create one of the runner's own objects; raises ApiException (409 when it exists)."""
    kind = KINDS[obj["kind"]]
    target = _api(api, kind)
    if kind.namespaced:
        getattr(target, f"create_namespaced_{kind.stem}")(
            obj["metadata"]["namespace"], obj, _preload_content=False
        )
    else:
        getattr(target, f"create_{kind.stem}")(obj, _preload_content=False)


def describe(kind: Kind, obj: Obj) -> str:
    """``Kind namespace/name`` for messages."""
    meta = obj.get("metadata") or {}
    where = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{kind.name} {where}{meta.get('name')}"
