"""Small manifest builders shared by the cluster tests."""

from __future__ import annotations

from typing import Any

from harness import VALIDATOR_IMAGE

GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
# The RuntimeClass the GPU Operator creates by default (chart value operator.runtimeClass)
GPU_RUNTIME_CLASS = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                     "metadata": {"name": "nvidia"}, "handler": "nvidia"}  # fmt: skip


def pod(
    name: str,
    *,
    image: str = "registry.example/plain:1",
    command: list[str] | None = None,
    annotations: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    restart_policy: str = "Never",
    **spec: Any,
) -> dict[str, Any]:
    """A one-container pod; extra keyword arguments go into its spec."""
    container: dict[str, Any] = {"name": "main", "image": image}
    if command:
        container["command"] = command
    for key in ("args", "env", "volumeMounts", "resources", "terminationMessagePolicy"):
        if key in spec:
            container[key] = spec.pop(key)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": annotations or {}, "labels": labels or {}},
        "spec": {"restartPolicy": restart_policy, "containers": [container], **spec},
    }


def validator_pod(name: str, command: list[str], **kw: Any) -> dict[str, Any]:
    """A pod of the validator image: the process runtime executes `command`."""
    return pod(name, image=VALIDATOR_IMAGE, command=command, **kw)


def job(name: str, template_spec: dict[str, Any], backoff_limit: int = 0) -> dict[str, Any]:
    """A Job whose pod template has `template_spec` (restartPolicy Never by default)."""
    template_spec.setdefault("restartPolicy", "Never")
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {"backoffLimit": backoff_limit, "template": {"spec": template_spec}},
    }


def crd(group: str, plural: str, kind: str, scope: str = "Namespaced") -> dict[str, Any]:
    """A CustomResourceDefinition serving ``v1`` of ``kind``, any content allowed."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind,
                      "listKind": f"{kind}List"},
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                "openAPIV3Schema": {"type": "object",
                                    "x-kubernetes-preserve-unknown-fields": True}}}],
        },
    }  # fmt: skip


def dial_apiserver_loopback(server: str) -> str:
    """A shell command printing connect_ex to 127.0.0.1:<the API server's port> (0: reached)."""
    port = server.rsplit(":", 1)[1]
    return f"python3 -c 'import socket; print(socket.socket().connect_ex((\"127.0.0.1\", {port})))'"
