"""What a component with webhooks needs to be called by the API server through its Service.

What is modelled (and nothing more): a recipe's cert-manager (or the chart's
own hook) issues a serving certificate for `<service>.<namespace>.svc` into a
TLS Secret the pod mounts, and injects the issuing CA into the webhook
configurations. The API server (with `--enable-aggregator-routing`) dials the
Service's endpoints, i.e. the pod IP, and verifies that name.
"""

from __future__ import annotations

import base64
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simcluster.cluster import pki
from simcluster.components.base import Manifest


@dataclass(frozen=True)
class Serving:
    """A TLS Secret for a Service and the CA bundle that verifies it (base64)."""

    secret: Manifest
    ca_bundle: str


def serving(secret: str, service: str, namespace: str) -> Serving:
    """Issue a fresh CA and serving certificate for the Service, as a `kubernetes.io/tls` Secret."""
    with tempfile.TemporaryDirectory() as tmp:
        ca, leaf = pki.service_serving(Path(tmp), service, namespace)

        def b64(p: Path) -> str:
            return base64.b64encode(p.read_bytes()).decode()

        data = {"tls.crt": b64(leaf.cert), "tls.key": b64(leaf.key), "ca.crt": b64(ca.cert)}
        bundle = b64(ca.cert)
    return Serving(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "kubernetes.io/tls",
            "metadata": {"name": secret, "namespace": namespace},
            "data": data,
        },
        bundle,
    )


def webhook_service(name: str, namespace: str, selector: dict[str, str], port: int) -> Manifest:
    """The Service the API server calls webhooks through (443 -> the pod's `port`)."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "selector": selector,
            "ports": [{"name": "https", "port": 443, "targetPort": port, "protocol": "TCP"}],
        },
    }


def point_webhooks(
    configs: Iterable[Manifest],
    service: str,
    namespace: str,
    ca_bundle: str,
    keep: Any = lambda hook: True,
    prefix: str = "",
) -> list[Manifest]:
    """Webhook configurations with every webhook calling `service` and trusting `ca_bundle`.

    `keep(hook)` drops webhooks whose handler the install does not enable (a
    webhook with no handler would fail every request it matches); `prefix`
    goes before each configuration's name, as a release's kustomization puts it.
    """
    out = []
    for doc in configs:
        hooks = []
        for hook in doc.get("webhooks") or []:
            if not keep(hook):
                continue
            ref = dict(hook["clientConfig"].get("service") or {})
            ref.update(name=service, namespace=namespace)
            hooks.append({**hook, "clientConfig": {"service": ref, "caBundle": ca_bundle}})
        if hooks:
            meta = {**doc["metadata"], "name": prefix + doc["metadata"]["name"]}
            out.append({**doc, "metadata": meta, "webhooks": hooks})
    return out


def answers(api: Any, body: Manifest, namespace: str | None = None) -> str | None:
    """None when a server-side dry run of creating `body` passes the webhooks, else what failed."""
    from simcluster.cluster import kube

    res = kube.dynamic(api).resources.get(api_version=body["apiVersion"], kind=body["kind"])
    try:
        res.create(body=body, namespace=namespace, dry_run="All")
    except Exception as e:  # refused or unreachable: not ready yet
        return f"its webhooks to answer ({str(e).splitlines()[0][:120]})"
    return None
