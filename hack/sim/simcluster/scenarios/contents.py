"""Cluster contents: bootstrap objects, scenarios loaded from test code, reset.

Everything here goes through the API server, as a user of the cluster would.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

from simcluster.cluster import kube, paths
from simcluster.gpu import modes as gpu_modes
from simcluster.gpu import sharing as gpu_sharing
from simcluster.gpu import vgpu as gpu_vgpu
from simcluster.nodes import provisioned
from simcluster.nodes.layout import LAYOUT, node_manifest

if TYPE_CHECKING:
    from simcluster.cluster.sim import Sim

FIELD_MANAGER = "aicr-sim"


def bootstrap(sim: Sim, deadline: float) -> None:
    """Create the nodes as the run's platform gives them (and the RuntimeClass the
    platform itself creates), start in device-plugin mode, wait until usable."""
    api = kube.api_client(sim.kubeconfig)
    core = client.CoreV1Api(api)
    version = paths.read_pins()["KUBERNETES_VERSION"]
    platform = sim.platform
    for spec in LAYOUT:
        body = node_manifest(spec, version, sim.ports.kubelet, platform)
        _retry_until(deadline, lambda b=body: core.create_node(b))
    rc = platform.sandbox.runtime_class_manifest() if platform.sandbox else None
    if rc is not None:
        node_api = client.NodeV1Api(api)
        _retry_until(deadline, lambda: node_api.create_runtime_class(rc))
    gpu_modes.set_mode(api, "device-plugin")
    gpu_modes.record_mode(sim.dir, "device-plugin")

    def usable() -> bool:
        try:
            core.read_namespaced_service_account("default", "default")
            core.read_namespaced_config_map("kube-root-ca.crt", "default")
        except ApiException:
            return False
        nodes = core.list_node().items
        return len(nodes) == len(LAYOUT) and all(
            any(c.type == "Ready" and c.status == "True" for c in n.status.conditions or [])
            for n in nodes
        )

    while not usable():
        if time.monotonic() > deadline:
            raise TimeoutError("cluster did not become usable (default SA, root CA, nodes)")
        time.sleep(0.2)
    _wait_port(sim.ports.kubelet, deadline)


def _retry_until(deadline: float, fn: Any) -> Any:
    while True:
        try:
            return fn()
        except ApiException as e:
            if e.status == 409:
                return None
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _wait_port(port: int, deadline: float) -> None:
    import socket

    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise TimeoutError(f"simulated kubelet endpoint on 127.0.0.1:{port} did not come up")


def current_mode(sim: Sim) -> str:
    """The GPU mode last set on this run."""
    return gpu_modes.recorded_mode(sim.dir)


def set_mode(sim: Sim, mode: gpu_modes.Mode, dra_values: dict[str, Any] | None = None) -> None:
    """Switch the GPU allocation mode of every GPU node (DeviceClasses from `dra_values`)."""
    gpu_modes.set_mode(kube.api_client(sim.kubeconfig), mode, dra_values)
    gpu_modes.record_mode(sim.dir, mode)


def set_node_images(sim: Sim, node: str, images: list[str], size_bytes: int = 500_000_000) -> None:
    """Set the images a node reports (status.images), for image-locality scoring."""
    api = kube.api_client(sim.kubeconfig)
    core = client.CoreV1Api(api)

    def update() -> None:
        obj = kube.to_dict(api, core.read_node_status(node))
        obj["status"]["images"] = [{"names": [i], "sizeBytes": size_bytes} for i in images]
        core.replace_node_status(node, obj)

    kube.retry_conflicts(update)


def load_manifests(manifests: Any) -> list[dict[str, Any]]:
    """Documents from a YAML string, a path, a dict or a list of those."""
    if isinstance(manifests, dict):
        return [manifests]
    if isinstance(manifests, Path):
        return load_manifests(manifests.read_text())
    if isinstance(manifests, str):
        return [d for d in yaml.safe_load_all(manifests) if d]
    out: list[dict[str, Any]] = []
    for m in manifests:
        out += load_manifests(m)
    return out


def apply(sim: Sim, manifests: Any, namespace: str | None = None) -> list[dict[str, Any]]:
    """Server-side apply manifests (CRDs are waited on until established)."""
    api = kube.api_client(sim.kubeconfig)
    dyn = kube.dynamic(api)
    out = []
    for doc in load_manifests(manifests):
        res = dyn.resources.get(api_version=doc["apiVersion"], kind=doc["kind"])
        ns = doc.get("metadata", {}).get("namespace") or (namespace if res.namespaced else None)
        if ns and res.namespaced:
            doc.setdefault("metadata", {})["namespace"] = ns
        obj = res.server_side_apply(
            body=doc, namespace=ns, field_manager=FIELD_MANAGER, force_conflicts=True
        )
        out.append(obj.to_dict())
        if doc["kind"] == "CustomResourceDefinition":
            _wait_crd(dyn, doc["metadata"]["name"])
    return out


# How long a CRD may take to be Established: 0-1 s on an idle 2-core machine, 10 s at load
# 13-15, but over 34 s for KubeRay's 3.2 MB of CRDs at load 21 (three clusters' suites side
# by side): the API server's CPU, not the CRD, sets it, so the bound is generous.
CRD_ESTABLISHED_SECONDS = 120.0


def _wait_crd(dyn: Any, name: str, timeout: float = CRD_ESTABLISHED_SECONDS) -> None:
    crds = dyn.resources.get(api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition")
    start = time.monotonic()
    conds: list[dict[str, Any]] = []
    while time.monotonic() < start + timeout:
        conds = crds.get(name=name).to_dict().get("status", {}).get("conditions") or []
        if any(c["type"] == "Established" and c["status"] == "True" for c in conds):
            dyn.resources.invalidate_cache() if hasattr(dyn.resources, "invalidate_cache") else None
            return
        time.sleep(0.1)
    seen = "; ".join(f"{c['type']}={c['status']} {c.get('reason') or ''}".strip() for c in conds)
    raise TimeoutError(
        f"CRD {name} not established in {time.monotonic() - start:.0f} s "
        f"(conditions: {seen or 'none yet'})"
    )


def reset_nodes(sim: Sim) -> None:
    """Put every node back to its profile: labels, taints, images, GPU mode.

    Nodes an autoscaler added (and their NodeClaims) are removed.
    """
    api = kube.api_client(sim.kubeconfig)
    core = client.CoreV1Api(api)
    provisioned.remove_all(api)
    version = paths.read_pins()["KUBERNETES_VERSION"]
    platform = sim.platform
    for spec in LAYOUT:
        want = node_manifest(spec, version, sim.ports.kubelet, platform)

        def update(want: dict[str, Any] = want) -> None:
            obj = kube.to_dict(api, core.read_node(want["metadata"]["name"]))
            obj["metadata"]["labels"] = want["metadata"]["labels"]
            obj["spec"]["taints"] = want["spec"]["taints"]
            obj["spec"]["unschedulable"] = False
            core.replace_node(obj["metadata"]["name"], obj)

        kube.retry_conflicts(update)
        set_node_images(sim, spec.name, [])
        gpu_vgpu.forget(api, spec.name)
    gpu_sharing.clear(api, profile_gpu_labels(sim), plugin=True)
    set_mode(sim, "device-plugin")


def profile_gpu_labels(sim: Sim) -> dict[str, dict[str, str]]:
    """GPU node name -> the labels its profile gives it (GFD's, unshared)."""
    version = paths.read_pins()["KUBERNETES_VERSION"]
    out = {}
    platform = sim.platform
    for spec in LAYOUT:
        labels = node_manifest(spec, version, sim.ports.kubelet, platform)["metadata"]["labels"]
        if labels.get("nvidia.com/gpu.present") == "true":
            out[spec.name] = labels
    return out


def apply_sharing(sim: Sim) -> None:
    """Advertise the GPU nodes' sharing as the GPU Operator's ClusterPolicy says (gpu.sharing),
    then label the nodes that declare vGPUs as GPU feature discovery would (gpu.vgpu)."""
    api = kube.api_client(sim.kubeconfig)
    base = profile_gpu_labels(sim)
    gpu_sharing.reconcile(api, base, plugin=current_mode(sim) != "dra")
    gpu_vgpu.reconcile(api, base)


def dump(obj: Any) -> str:
    """Pretty JSON for assertion messages."""
    return json.dumps(obj, indent=1, default=str)[:4000]
