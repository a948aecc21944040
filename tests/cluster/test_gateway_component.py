"""The gateway for real: Traefik routes an HTTPRoute to a pod, and asks for the API key."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from component_logs import logs_on_failure
from harness import SimCluster
from simcluster.components import gateway

pytestmark = pytest.mark.components("gateway")
logged = logs_on_failure(gateway.NAMESPACE, "app.kubernetes.io/name=traefik")
PORT = 8080


def backend() -> list[dict[str, Any]]:
    """A pod answering HTTP on its pod IP (host python plays the image), its Service, a route."""
    serve = ("import http.server,os;http.server.HTTPServer((os.environ['POD_IP'],8080),"
             "http.server.SimpleHTTPRequestHandler).serve_forever()")  # fmt: skip
    return [
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": "echo", "labels": {"app": "echo", "aicr.dev/run-id": "gw"}},
         "spec": {"containers": [{"name": "c", "image": "docker.io/library/ubuntu:22.04",
                                  "command": ["python3", "-c", serve], "workingDir": "/tmp",
                                  "env": [{"name": "POD_IP", "valueFrom": {"fieldRef": {
                                      "fieldPath": "status.podIP"}}}],
                                  "readinessProbe": {"tcpSocket": {"port": PORT},
                                                     "periodSeconds": 1}}]}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "echo"},
         "spec": {"selector": {"app": "echo"}, "ports": [{"port": PORT, "targetPort": PORT}]}},
        {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
         "metadata": {"name": "echo"},
         "spec": {"parentRefs": [{"name": gateway.GATEWAY, "namespace": gateway.NAMESPACE}],
                  "rules": [{"backendRefs": [{"name": "echo", "port": PORT}]}]}},
    ]  # fmt: skip


def get(cluster: SimCluster, url: str, key: str | None) -> int:
    """Status of a GET through the gateway (from inside the sim's namespace), with `key` or none."""
    token = base64.b64encode(f"{gateway.USER}:{key}".encode()).decode()
    headers = {"Authorization": f"Basic {token}"} if key else {}
    return cluster.http_get(url, timeout=5, headers=headers)[0]


@logged
def test_a_route_is_served_with_the_key_and_refused_without(
    cluster: SimCluster, namespace: str
) -> None:
    cluster.apply(backend(), namespace)
    url = gateway.address(cluster.api())
    assert url
    cluster.wait_for(lambda: get(cluster, url, gateway.API_KEY) == 200, timeout=60,
                     message="the route to answer with the key")  # fmt: skip
    assert get(cluster, url, None) == 401
    assert get(cluster, url, "wrong") == 401
    cluster.fault("gateway-auth-open")
    cluster.wait_for(lambda: (u := gateway.address(cluster.api())) and get(cluster, u, None) == 200,
                     timeout=60, message="keyless requests served")  # fmt: skip
