"""The DRA API at v1beta1 (1.32), v1beta2 (1.33) and v1 (1.34+): one v1 view for the checks.

The shapes are those of the Kubernetes API reference for each version: in v1beta1 a
device request keeps deviceClassName/allocationMode/count on itself and a slice's
device keeps its attributes and capacity under ``basic``; v1beta2 and v1 move them to
``exactly`` and onto the device.
"""

from __future__ import annotations

import json
import ssl
from typing import Any

import httpx
import pytest

from aicr.checks.probe_pods import gpu_claim, gpu_claim_template
from aicr.kube import dra
from aicr.kube.dicts import RestKube
from aicr.kube.gpus import device_uuid, is_whole_gpu
from aicr.kube.rest import Credentials, KubeApi

Obj = dict[str, Any]
ATTRS = {"type": {"string": "gpu"}, "uuid": {"string": "GPU-6d2b4e1c"},
         "driverVersion": {"version": "570.124.6"}}  # fmt: skip
CAPACITY = {"memory": {"value": "80Gi"}}
RESULTS = {"devices": {"results": [{"request": "gpu", "driver": "gpu.nvidia.com",
                                    "pool": "node-a", "device": "gpu-0"}]}}  # fmt: skip


def slice_at(version: str) -> Obj:
    device: Obj = {"name": "gpu-0"}
    if version == "v1beta1":
        device["basic"] = {"attributes": ATTRS, "capacity": CAPACITY}
    else:
        device.update({"attributes": ATTRS, "capacity": CAPACITY})
    return {"apiVersion": f"resource.k8s.io/{version}", "kind": "ResourceSlice",
            "metadata": {"name": "node-a-gpu.nvidia.com-x7k2p"},
            "spec": {"driver": "gpu.nvidia.com", "nodeName": "node-a",
                     "pool": {"name": "node-a", "generation": 1, "resourceSliceCount": 1},
                     "devices": [device]}}  # fmt: skip


def claim_at(version: str) -> Obj:
    exact = {"deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 1}
    request: Obj = {"name": "gpu", **exact} if version == "v1beta1" else {
        "name": "gpu", "exactly": exact}  # fmt: skip
    return {"apiVersion": f"resource.k8s.io/{version}", "kind": "ResourceClaim",
            "metadata": {"name": "dra-gpu", "namespace": "w"},
            "spec": {"devices": {"requests": [request]}},
            "status": {"allocation": RESULTS, "reservedFor": [
                {"resource": "pods", "name": "dra-gpu", "uid": "u1"}]}}  # fmt: skip


@pytest.mark.parametrize(("served", "picked"), [
    (["v1beta1"], "resource.k8s.io/v1beta1"),  # 1.32
    (["v1beta2", "v1beta1"], "resource.k8s.io/v1beta2"),  # 1.33
    (["v1", "v1beta2", "v1beta1"], "resource.k8s.io/v1"),  # 1.34
    (["v1"], "resource.k8s.io/v1"),
    (["v1alpha3"], None), ([], None), (None, None),
])  # fmt: skip
def test_the_newest_served_version_is_used(served: list[str] | None, picked: str | None) -> None:
    assert dra.pick(served) == picked


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2", "v1"])
def test_every_version_reads_as_v1(version: str) -> None:
    at = f"resource.k8s.io/{version}"
    assert dra.to_v1(slice_at(version), at) == slice_at("v1")
    assert dra.to_v1(claim_at(version), at) == claim_at("v1")
    device = dra.to_v1(slice_at(version))["spec"]["devices"][0]  # its own apiVersion
    assert is_whole_gpu(device) and device_uuid(device) == "GPU-6d2b4e1c"


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2", "v1"])
def test_v1_objects_are_written_as_each_version_takes_them(version: str) -> None:
    at = f"resource.k8s.io/{version}"
    claim = gpu_claim("dra-gpu", 1, "gpu")
    written = dra.from_v1(claim, at)
    request = written["spec"]["devices"]["requests"][0]
    assert written["apiVersion"] == at
    if version == "v1beta1":
        assert request == {"name": "gpu", "deviceClassName": "gpu.nvidia.com",
                           "allocationMode": "ExactCount", "count": 1}  # fmt: skip
    else:
        assert request == claim["spec"]["devices"]["requests"][0]
    template = dra.from_v1(gpu_claim_template("one-gpu", 2, "gpu", {"aicr.dev/run-id": "r"}), at)
    inner = template["spec"]["spec"]["devices"]["requests"][0]
    assert ("exactly" in inner) is (version != "v1beta1")
    assert template["spec"]["metadata"] == {"labels": {"aicr.dev/run-id": "r"}}
    assert dra.to_v1(dra.from_v1(slice_at("v1"), at), at) == slice_at("v1")
    assert dra.from_v1(slice_at("v1"), at) == slice_at(version)
    assert claim["apiVersion"] == "resource.k8s.io/v1"  # the check's own object is untouched


def test_a_first_available_request_keeps_its_flat_subrequests() -> None:
    sub = {"name": "big", "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount",
           "count": 1}  # fmt: skip
    beta = {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim",
            "metadata": {"name": "c"},
            "spec": {"devices": {"requests": [{"name": "gpu", "firstAvailable": [sub]}]}}}
    assert dra.to_v1(beta)["spec"]["devices"]["requests"] == [
        {"name": "gpu", "firstAvailable": [sub]}]  # fmt: skip


def test_other_groups_pass_unchanged() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}}
    assert dra.to_v1(pod) == pod and dra.from_v1(pod, "resource.k8s.io/v1beta1") == pod


# ---- the client on a cluster that serves one version --------------------------------------


class Server:
    """An API server serving ``resource.k8s.io`` at ``versions`` (newest first) only."""

    def __init__(self, versions: list[str]) -> None:
        self.versions = versions
        self.seen: list[tuple[str, str, Obj | None]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        body = json.loads(request.content) if request.content else None
        self.seen.append((request.method, path, body))
        if path == "/apis":
            groups = [{"name": "resource.k8s.io", "versions": [
                {"groupVersion": f"resource.k8s.io/{v}", "version": v} for v in self.versions],
                "preferredVersion": {"version": self.versions[0]}}] if self.versions else []
            return httpx.Response(200, json={"kind": "APIGroupList", "groups": groups})
        served = self.versions[0] if self.versions else None
        if served is None or not path.startswith(f"/apis/resource.k8s.io/{served}/"):
            return httpx.Response(404, json={"kind": "Status", "code": 404, "message": "nf"})
        if path.endswith("/resourceslices"):
            return httpx.Response(200, json={"items": [slice_at(served)],
                                             "metadata": {"resourceVersion": "9"}})
        if request.method == "POST":
            return httpx.Response(201, json={**(body or {}), "status": {}})
        return httpx.Response(200, json=claim_at(served))


def reader(server: Server) -> RestKube:
    creds = Credentials("https://api.test:6443", lambda: "t", ssl.create_default_context())
    return RestKube(KubeApi(creds, transport=httpx.MockTransport(server)))


@pytest.mark.parametrize("versions", [["v1beta1"], ["v1beta2", "v1beta1"],
                                      ["v1", "v1beta2", "v1beta1"]])  # fmt: skip
def test_the_client_talks_to_the_served_version_and_shows_v1(versions: list[str]) -> None:
    server = Server(versions)
    kube = reader(server)
    newest = versions[0]
    assert kube.dra_version() == f"resource.k8s.io/{newest}"
    assert kube.list("ResourceSlice") == [slice_at("v1")]
    assert kube.get("ResourceClaim", "dra-gpu", "w") == claim_at("v1")
    made = kube.create({**gpu_claim("dra-gpu", 1, "gpu"),
                        "metadata": {"name": "dra-gpu", "namespace": "w"}})  # fmt: skip
    assert made["spec"]["devices"]["requests"][0]["exactly"]["count"] == 1
    kube.delete("ResourceClaim", "dra-gpu", "w")
    paths = [(m, p) for m, p, _ in server.seen]
    assert paths == [
        ("GET", "/apis"), ("GET", f"/apis/resource.k8s.io/{newest}/resourceslices"),
        ("GET", f"/apis/resource.k8s.io/{newest}/namespaces/w/resourceclaims/dra-gpu"),
        ("POST", f"/apis/resource.k8s.io/{newest}/namespaces/w/resourceclaims"),
        ("DELETE", f"/apis/resource.k8s.io/{newest}/namespaces/w/resourceclaims/dra-gpu")]
    posted = next(b for m, _, b in server.seen if m == "POST")
    assert posted is not None and posted["apiVersion"] == f"resource.k8s.io/{newest}"
    assert ("exactly" in posted["spec"]["devices"]["requests"][0]) is (newest != "v1beta1")


def test_without_dra_there_are_no_slices() -> None:
    kube = reader(Server([]))
    assert kube.dra_version() is None
    assert kube.list("ResourceSlice") == [] and kube.get("ResourceClaim", "c", "w") is None


def test_listed_v1_tries_each_version_newest_first() -> None:
    tried: list[str] = []

    def at(version: str) -> list[Obj]:
        tried.append(version)
        if version != "v1beta1":
            raise LookupError(version)  # this version is not served
        return [slice_at("v1beta1")]

    assert dra.listed_v1(at, lambda e: isinstance(e, LookupError)) == [slice_at("v1")]
    assert tried == ["v1", "v1beta2", "v1beta1"]
    assert dra.listed_v1(lambda v: (_ for _ in ()).throw(LookupError(v)),
                         lambda e: isinstance(e, LookupError)) == []  # fmt: skip
    with pytest.raises(PermissionError):
        dra.listed_v1(lambda v: (_ for _ in ()).throw(PermissionError(v)),
                      lambda e: isinstance(e, LookupError))  # fmt: skip


def test_the_snapshot_reads_slices_of_a_beta_only_cluster_as_v1(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from types import SimpleNamespace

    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    from aicr.snapshot import capture

    asked: list[str] = []

    class Custom:
        def __init__(self, api: object) -> None:
            pass

        def list_cluster_custom_object(self, group: str, version: str, plural: str,
                                       **kw: object) -> object:  # fmt: skip
            asked.append(f"{group}/{version}/{plural}")
            if version != "v1beta1":  # a 1.32 cluster
                raise ApiException(status=404, reason="Not Found")
            return SimpleNamespace(data=json.dumps({"items": [slice_at("v1beta1")]}))

    monkeypatch.setattr(client, "CustomObjectsApi", Custom)
    assert capture._resource_slices(object(), 5.0) == [slice_at("v1")]
    assert asked == ["resource.k8s.io/v1/resourceslices", "resource.k8s.io/v1beta2/resourceslices",
                     "resource.k8s.io/v1beta1/resourceslices"]  # fmt: skip
