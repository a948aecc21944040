"""Run cleanup finds and deletes DRA objects at the version the cluster serves.

A 1.32-1.33 cluster serves ``resource.k8s.io`` only as v1beta1 (and v1beta2): its v1
paths answer 404, which cleanup reads as "none of that kind". The fake API below
serves paths as an API server does: a collection of an unserved version is a 404.
"""

from __future__ import annotations

from typing import Any

import pytest

from aicr.kube import names
from aicr.kube.rest import KubeApiError
from aicr.runner import cleanup

RUN = "r1a2b3c4d"
Obj = dict[str, Any]


class FakeApi:
    """Objects by REST path; ``dra`` the ``resource.k8s.io`` versions it serves."""

    def __init__(self, dra: tuple[str, ...], objects: dict[str, list[Obj]]) -> None:
        self.dra = dra
        self.objects = objects  # collection path (all namespaces) -> items
        self.deleted: list[str] = []

    def get(self, path: str, params: dict[str, str] | None = None) -> Obj:
        if path == "/apis/resource.k8s.io":
            if not self.dra:
                raise KubeApiError(404, "NotFound", "the server could not find the resource")
            return {"kind": "APIGroup", "name": "resource.k8s.io",
                    "versions": [{"groupVersion": f"resource.k8s.io/{v}", "version": v}
                                 for v in self.dra]}  # fmt: skip
        if path.startswith("/apis/resource.k8s.io/"):
            version = path.split("/")[3]
            if version not in self.dra:
                raise KubeApiError(404, "NotFound", "the server could not find the resource")
        return {"items": list(self.objects.get(path, []))}

    def delete(self, path: str, grace_seconds: int | None = None) -> None:
        self.deleted.append(path)
        collection, _, name = path.rpartition("/")
        parts = collection.split("/")
        if "namespaces" in parts:  # .../namespaces/<ns>/<plural> -> .../<plural>
            i = parts.index("namespaces")
            collection = "/".join(parts[:i] + parts[i + 2:])
        items = self.objects.get(collection, [])
        self.objects[collection] = [o for o in items if o["metadata"]["name"] != name]

    def merge_patch(self, path: str, body: Obj) -> Obj:
        raise AssertionError(f"no namespace is shared here: {path}")


def claim(version: str, name: str) -> Obj:
    return {"apiVersion": f"resource.k8s.io/{version}", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": f"aicr-{RUN}",
                         "labels": {names.RUN_ID_LABEL: RUN}}}  # fmt: skip


@pytest.mark.parametrize("served", [("v1beta1",), ("v1beta1", "v1beta2"), ("v1", "v1beta2")],
                         ids=["1.32-v1beta1", "1.33-betas", "1.34-v1"])  # fmt: skip
def test_dra_objects_are_found_and_deleted_at_the_served_version(served: tuple[str, ...]) -> None:
    newest = next(v for v in ("v1", "v1beta2", "v1beta1") if v in served)
    collection = f"/apis/resource.k8s.io/{newest}/resourceclaims"
    api = FakeApi(served, {collection: [claim(newest, "gpu-claim")]})
    assert cleanup.remaining(api, names.run_selector(RUN)) == [  # type: ignore[arg-type]
        f"ResourceClaim aicr-{RUN}/gpu-claim"]  # fmt: skip
    assert cleanup.cleanup_with(api, RUN, timeout=1) == []  # type: ignore[arg-type]
    assert (f"/apis/resource.k8s.io/{newest}/namespaces/aicr-{RUN}/resourceclaims/gpu-claim"
            in api.deleted)  # fmt: skip


def test_a_cluster_without_dra_lists_no_dra_kinds() -> None:
    api = FakeApi((), {"/api/v1/pods": []})
    kinds = cleanup.served_kinds(api, cleanup.run_kinds.cleanup_order())  # type: ignore[arg-type]
    assert not [k for k in kinds if k.group == "resource.k8s.io"]
    assert "Namespace" in {k.name for k in kinds}
    assert cleanup.cleanup_with(api, RUN, timeout=1) == []  # type: ignore[arg-type]


def test_other_discovery_errors_are_not_read_as_no_dra() -> None:
    class Forbidden(FakeApi):
        def get(self, path: str, params: dict[str, str] | None = None) -> Obj:
            if path == "/apis/resource.k8s.io":
                raise KubeApiError(403, "Forbidden", "no")
            return super().get(path, params)

    with pytest.raises(Exception, match="cleanup failed: HTTP 403 Forbidden"):
        cleanup.cleanup_with(Forbidden(("v1",), {}), RUN, timeout=1)  # type: ignore[arg-type]
