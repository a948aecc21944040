"""Materialise a pod's volumes and environment as a kubelet would.

Supported volumes: configMap, secret, projected (serviceAccountToken,
configMap, secret, downwardAPI, clusterTrustBundle excluded), downwardAPI,
emptyDir, and hostPath: the path under the pod's node's root
(hack/sim/profiles/roots/<profile>), never the machine the simulation runs on,
and always mounted read-only. The service-account token comes from the
TokenRequest API, bound to the pod, so the process has exactly the pod's RBAC.
Files of a volume are shown and replaced all at once (`volume_writer`).
"""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

from kubernetes import client

from simcluster.net.addresses import LOOPBACK as HOST_IP  # every node's InternalIP
from simcluster.nodes.layout import node_root
from simcluster.runtime import volume_writer
from simcluster.runtime.pod_files import PodFiles


class VolumeError(Exception):
    """A volume or env source cannot be built (shown like the kubelet's config errors)."""


def _field(pod: dict[str, Any], path: str, pod_ip: str) -> str:
    meta = pod["metadata"]
    m = re.fullmatch(r"metadata\.(labels|annotations)\['(.+)'\]", path)
    if m:
        return str((meta.get(m.group(1)) or {}).get(m.group(2), ""))
    simple = {
        "metadata.name": meta.get("name"),
        "metadata.namespace": meta.get("namespace"),
        "metadata.uid": meta.get("uid"),
        "spec.nodeName": pod["spec"].get("nodeName"),
        "spec.serviceAccountName": pod["spec"].get("serviceAccountName"),
        "status.hostIP": HOST_IP,
        "status.hostIPs": HOST_IP,
        "status.podIP": pod_ip,
        "status.podIPs": pod_ip,
    }
    if path in simple:
        return str(simple[path] or "")
    if path in ("metadata.labels", "metadata.annotations"):
        items = meta.get(path.split(".")[1]) or {}
        return "\n".join(f'{k}="{v}"' for k, v in sorted(items.items()))
    raise VolumeError(f"unsupported fieldRef {path!r}")


def _resource_field(pod: dict[str, Any], container: str | None, ref: dict[str, Any]) -> str:
    name = ref.get("containerName") or container
    c = next((c for c in pod["spec"]["containers"] if c["name"] == name), {})
    kind, _, res = ref["resource"].partition(".")
    value = ((c.get("resources") or {}).get(kind) or {}).get(res)
    return str(value) if value is not None else "0"


def _mode(vol: dict[str, Any]) -> int:
    """The volume's defaultMode, or the API's default 0644."""
    for key in ("configMap", "secret", "projected", "downwardAPI"):
        if key in vol and vol[key].get("defaultMode") is not None:
            return int(vol[key]["defaultMode"])
    return 0o644


class PodMaterialiser:
    """Reads the objects a pod refers to, as the pod's kubelet would."""

    def __init__(
        self, core: client.CoreV1Api, pod: dict[str, Any], files: PodFiles, pod_ip: str = HOST_IP
    ) -> None:
        self.core = core
        self.pod = pod
        self.pod_ip = pod_ip  # what the downward API's status.podIP shows
        self.ns = pod["metadata"]["namespace"]
        self.files = files

    def _configmap(self, name: str, optional: bool) -> dict[str, bytes]:
        try:
            cm = self.core.read_namespaced_config_map(name, self.ns)
        except client.ApiException as e:
            if e.status == 404 and optional:
                return {}
            raise VolumeError(f'configmap "{name}" not found') from e
        data = {k: v.encode() for k, v in (cm.data or {}).items()}
        data.update({k: base64.b64decode(v) for k, v in (cm.binary_data or {}).items()})
        return data

    def _secret(self, name: str, optional: bool) -> dict[str, bytes]:
        try:
            s = self.core.read_namespaced_secret(name, self.ns)
        except client.ApiException as e:
            if e.status == 404 and optional:
                return {}
            raise VolumeError(f'secret "{name}" not found') from e
        return {k: base64.b64decode(v) for k, v in (s.data or {}).items()}

    def _token(self, audience: str | None, seconds: int | None) -> bytes:
        meta = self.pod["metadata"]
        sa = self.pod["spec"].get("serviceAccountName") or "default"
        req = client.AuthenticationV1TokenRequest(
            spec=client.V1TokenRequestSpec(
                audiences=[audience] if audience else [],
                expiration_seconds=max(seconds or 3607, 600),
                bound_object_ref=client.V1BoundObjectReference(
                    kind="Pod", api_version="v1", name=meta["name"], uid=meta["uid"]
                ),
            )
        )
        resp = self.core.create_namespaced_service_account_token(sa, self.ns, req)
        return str(resp.status.token).encode()

    @staticmethod
    def _select(data: dict[str, bytes], items: list[dict[str, Any]] | None) -> dict[str, bytes]:
        if not items:
            return data
        return {i["path"]: data[i["key"]] for i in items if i["key"] in data}

    def _downward(self, items: list[dict[str, Any]]) -> dict[str, bytes]:
        out = {}
        for i in items:
            if "fieldRef" in i:
                out[i["path"]] = _field(self.pod, i["fieldRef"]["fieldPath"], self.pod_ip).encode()
            elif "resourceFieldRef" in i:
                out[i["path"]] = _resource_field(self.pod, None, i["resourceFieldRef"]).encode()
        return out

    def volume_files(self, vol: dict[str, Any]) -> dict[str, bytes] | None:
        """Files of one volume (relative path -> content); None for emptyDir."""
        if "emptyDir" in vol:
            return None
        if "configMap" in vol:
            src = vol["configMap"]
            data = self._configmap(src["name"], bool(src.get("optional")))
            return self._select(data, src.get("items"))
        if "secret" in vol:
            src = vol["secret"]
            data = self._secret(src["secretName"], bool(src.get("optional")))
            return self._select(data, src.get("items"))
        if "downwardAPI" in vol:
            return self._downward(vol["downwardAPI"].get("items") or [])
        if "projected" in vol:
            out: dict[str, bytes] = {}
            for s in vol["projected"].get("sources") or []:
                if "serviceAccountToken" in s:
                    t = s["serviceAccountToken"]
                    out[t["path"]] = self._token(t.get("audience"), t.get("expirationSeconds"))
                elif "configMap" in s:
                    c = s["configMap"]
                    out.update(
                        self._select(
                            self._configmap(c["name"], bool(c.get("optional"))), c.get("items")
                        )
                    )
                elif "secret" in s:
                    c = s["secret"]
                    out.update(
                        self._select(
                            self._secret(c["name"], bool(c.get("optional"))), c.get("items")
                        )
                    )
                elif "downwardAPI" in s:
                    out.update(self._downward(s["downwardAPI"].get("items") or []))
                else:
                    raise VolumeError(f"unsupported projected source {sorted(s)}")
            return out
        raise VolumeError(
            f"volume {vol['name']!r}: type {sorted(set(vol) - {'name'})} "
            "is not supported by the simulated kubelet"
        )

    def host_path(self, vol: dict[str, Any]) -> Path:
        """A hostPath volume's source: the path under the root of the pod's node's profile."""
        node = self.pod["spec"].get("nodeName") or ""
        annotations = self.core.read_node(node).metadata.annotations or {}
        profile = annotations.get("sim.aicr.dev/profile")
        if not profile:
            raise VolumeError(f"hostPath: node {node!r} has no profile, so no host files")
        src = vol["hostPath"]
        path = node_root(profile) / src["path"].lstrip("/")
        kind = src.get("type") or ""
        found = {"File": path.is_file(), "Directory": path.is_dir()}.get(kind, path.exists())
        if not found:
            what = kind.lower() or "path that exists"
            raise VolumeError(f"hostPath type check failed: {src['path']} is not a {what}")
        return path

    def refresh(self, folders: dict[str, Path]) -> bool:
        """Replace ConfigMap and Secret volume files whose source changed, as the kubelet's
        sync does (config reloaders rely on it), all at once; True when a file changed."""
        changed = False
        for vol in self.pod["spec"].get("volumes") or []:
            if not ("configMap" in vol or "secret" in vol) or vol["name"] not in folders:
                continue
            try:
                files = self.volume_files(vol) or {}
            except (VolumeError, client.ApiException):
                continue  # deleted meanwhile: a kubelet keeps the last files too
            if volume_writer.current(folders[vol["name"]]) != files:
                volume_writer.write(folders[vol["name"]], files, _mode(vol))
                changed = True
        return changed

    def materialise(self) -> dict[str, Path]:
        """Write every volume under the pod folder; return volume name -> folder."""
        out = {}
        for vol in self.pod["spec"].get("volumes") or []:
            if "hostPath" in vol:
                out[vol["name"]] = self.host_path(vol)
                continue
            d = self.files.volume(vol["name"])
            files = self.volume_files(vol)
            if files is None:  # emptyDir
                d.mkdir(parents=True, exist_ok=True)
            else:
                volume_writer.write(d, files, _mode(vol))
            out[vol["name"]] = d
        return out

    def env(self, container: dict[str, Any], base: dict[str, str]) -> dict[str, str]:
        """The container's environment: `base` (kubelet's own) overlaid by the pod's."""
        env = dict(base)
        for src in container.get("envFrom") or []:
            prefix = src.get("prefix", "")
            if "configMapRef" in src:
                ref = src["configMapRef"]
                data = self._configmap(ref["name"], bool(ref.get("optional")))
            else:
                ref = src["secretRef"]
                data = self._secret(ref["name"], bool(ref.get("optional")))
            env.update({prefix + k: v.decode() for k, v in data.items()})
        for e in container.get("env") or []:
            if "valueFrom" not in e:
                env[e["name"]] = expand(e.get("value", ""), env)
                continue
            vf = e["valueFrom"]
            if "fieldRef" in vf:
                env[e["name"]] = _field(self.pod, vf["fieldRef"]["fieldPath"], self.pod_ip)
            elif "resourceFieldRef" in vf:
                env[e["name"]] = _resource_field(
                    self.pod, container["name"], vf["resourceFieldRef"]
                )
            elif "configMapKeyRef" in vf:
                ref = vf["configMapKeyRef"]
                data = self._configmap(ref["name"], bool(ref.get("optional")))
                if ref["key"] in data:
                    env[e["name"]] = data[ref["key"]].decode()
                elif not ref.get("optional"):
                    raise VolumeError(f"couldn't find key {ref['key']} in ConfigMap {ref['name']}")
            elif "secretKeyRef" in vf:
                ref = vf["secretKeyRef"]
                data = self._secret(ref["name"], bool(ref.get("optional")))
                if ref["key"] in data:
                    env[e["name"]] = data[ref["key"]].decode()
                elif not ref.get("optional"):
                    raise VolumeError(f"couldn't find key {ref['key']} in Secret {ref['name']}")
        return env


_VAR = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def expand(s: str, env: dict[str, str]) -> str:
    """Kubernetes `$(VAR)` expansion: known names replaced, `$$` escapes `$`."""

    def sub(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        return env.get(m.group(1), m.group(0))

    return _VAR.sub(sub, s)
