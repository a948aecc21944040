"""Kubernetes client construction honouring --kubeconfig and --context.

The kubernetes package is imported here, lazily, so that ``aicr --help`` and
``--no-cluster`` runs never pay for it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aicr.errors import ClusterError

if TYPE_CHECKING:
    from kubernetes.client import ApiClient


@dataclass(frozen=True)
class KubeTarget:
    """Which cluster to talk to. None means the client's defaults (KUBECONFIG, in-cluster)."""

    kubeconfig: str | None = None
    context: str | None = None


def load_configuration(target: KubeTarget) -> Any:
    """The kubernetes client Configuration for ``target``; a bad kubeconfig is a ClusterError."""
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    configuration = client.Configuration()
    try:
        if target.kubeconfig is None and target.context is None:
            try:
                # KUBECONFIG read now, not when the kubernetes package was first imported
                config.load_kube_config(
                    config_file=os.environ.get("KUBECONFIG") or None,
                    client_configuration=configuration,
                )
            except (ConfigException, FileNotFoundError, TypeError):
                config.load_incluster_config(client_configuration=configuration)
        else:
            config.load_kube_config(
                config_file=target.kubeconfig,
                context=target.context,
                client_configuration=configuration,
            )
    except (ConfigException, FileNotFoundError, TypeError) as exc:
        where = target.kubeconfig or "the default kubeconfig"
        raise ClusterError(f"cannot load cluster credentials from {where}: {exc}") from None
    return configuration


def api_client(target: KubeTarget) -> ApiClient:
    """A configured ApiClient; a bad kubeconfig or context is a ClusterError naming it."""
    from kubernetes import client

    return client.ApiClient(load_configuration(target))


def describe_api_error(exc: Any) -> str:
    """A one-line account of a kubernetes ApiException."""
    status = getattr(exc, "status", None)
    reason = getattr(exc, "reason", None) or "error"
    return f"HTTP {status} {reason}" if status else str(exc)


def read_pod_log(core: Any, name: str, namespace: str, **params: Any) -> str:
    """A pod's log as text, the same on every client version.

    Some kubernetes client releases return the repr of the bytes (``"b'...'"``) from
    read_namespaced_pod_log; reading the raw response and decoding it avoids that.
    """
    response = core.read_namespaced_pod_log(name, namespace, _preload_content=False, **params)
    data: bytes = response.data
    return data.decode("utf-8", errors="replace")
