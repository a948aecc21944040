"""The pure parts of inference-gateway: discovery verdicts, route counting, workloads, probes.

No client and no I/O: functions of the API's dicts and of the traffic client's
counts, tested as tables.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

from aicr.checks.conformance.inference_gateway.split import Bound
from aicr.checks.probe_pods import restricted_pod_spec
from aicr.kube import pod_status, selectors

Obj = dict[str, Any]
GROUP = "gateway.networking.k8s.io"
IMAGE = "python"  # in aicr/checks/images.yaml
PORT = 8080
STABLE, CANARY = "stable", "canary"
CLIENT = "traffic-client"
ROUTE = "inference-canary"
KEY_SECRET = "gateway-key"
CANARY_HEADER = "OpenAI-Project"
CANARY_VALUE = "ai-conformance-canary"
BOGUS_KEY = "aicr-not-a-valid-key"
DENIED = ("401", "403")
RESULT = "AICR-RESULT "  # the client's result line (traffic_client.RESULT)
# The Gateway API Inference Extension v1.0 CRDs (InferencePool went GA in its own group).
INFERENCE_CRDS = (
    "inferencepools.inference.networking.k8s.io",
    "inferencepools.inference.networking.x-k8s.io",
    "inferenceobjectives.inference.networking.x-k8s.io",
)


def extension_missing(state: dict[str, str]) -> list[str]:
    """What of the Inference Extension is not Established (state: CRD name -> its state)."""
    out = []
    pools = [n for n in INFERENCE_CRDS if n.startswith("inferencepools.")]
    if not any(state.get(n) == "Established" for n in pools):
        out.append(
            "no InferencePool CRD is Established ("
            + ", ".join(f"{n}: {state.get(n, 'absent')}" for n in pools)
            + ")"
        )
    objective = INFERENCE_CRDS[2]
    if state.get(objective) != "Established":
        out.append(f"{objective} is {state.get(objective, 'absent')}")
    return out


def condition(obj: Obj | None, kind: str) -> Obj | None:
    """The status condition ``kind`` of ``obj`` (None when absent).

    ``obj`` is an object (conditions under ``status``) or one entry of a route's
    ``status.parents`` (conditions at its top).
    """
    found = (obj or {}).get("conditions") or ((obj or {}).get("status") or {}).get("conditions")
    for c in found or []:
        if c.get("type") == kind:
            return dict(c)
    return None


def describe(c: Obj | None, kind: str) -> str:
    """``Accepted=False (Reason: message)``, or ``no Accepted condition``."""
    if c is None:
        return f"no {kind} condition"
    why = c.get("reason") or ""
    if c.get("message"):
        why += f": {c['message']}" if why else str(c["message"])
    return f"{kind}={c.get('status')}" + (f" ({why})" if why else "")


def is_true(c: Obj | None) -> bool:
    """The condition is there and True."""
    return c is not None and c.get("status") == "True"


def ref(obj: Obj) -> str:
    """``namespace/name`` (or ``name`` for a cluster-scoped object)."""
    meta = obj.get("metadata") or {}
    return f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else str(meta["name"])


# ---- discovery ------------------------------------------------------------------------


def choose_gateway(
    gateways: list[Obj], named: str | None, gateway_class: str | None
) -> tuple[Obj | None, str]:
    """The Gateway to judge and why it was chosen, or None and what was missing.

    ``named`` (``namespace/name``) wins; else those of ``gateway_class``; among
    several, the first Programmed one with an address, in namespace/name order.
    """
    pool = sorted(gateways, key=ref)
    if named:
        found = next((g for g in pool if ref(g) == named), None)
        return found, "named by params.gateway" if found else f"Gateway {named} not found"
    if gateway_class:
        pool = [g for g in pool if (g.get("spec") or {}).get("gatewayClassName") == gateway_class]
        if not pool:
            return None, f"no Gateway of GatewayClass {gateway_class}"
    if not pool:
        return None, "no Gateway in the cluster"
    ready = [g for g in pool if is_true(condition(g, "Programmed")) and addresses(g)]
    chosen = (ready or pool)[0]
    why = f"the only Gateway{' of class ' + gateway_class if gateway_class else ''}"
    if len(pool) > 1:
        why = f"first Programmed of {len(pool)}: " + ", ".join(ref(g) for g in pool)
    return chosen, why


def addresses(gateway: Obj) -> list[str]:
    """The Gateway's published addresses (``status.addresses[].value``)."""
    return [
        str(a["value"])
        for a in (gateway.get("status") or {}).get("addresses") or []
        if a.get("value")
    ]


@dataclass(frozen=True)
class RouteSource:
    """Where the check's HTTPRoute lives: its namespace and that namespace's labels."""

    namespace: str
    labels: dict[str, str]


def refusal(listener: Obj, gateway: Obj, source: RouteSource) -> str | None:
    """Why ``listener`` would not take the check's HTTPRoute, or None when it would.

    Gateway API: only a plain ``HTTP`` listener (the client speaks HTTP, no TLS);
    ``allowedRoutes.kinds`` must admit HTTPRoute when set; ``allowedRoutes.namespaces.from``
    defaults to ``Same`` (routes of the Gateway's own namespace only), ``All`` admits
    every namespace and ``Selector`` those whose labels match its selector.
    """
    if listener.get("protocol") != "HTTP":
        return f"protocol {listener.get('protocol')}, not plain HTTP"
    allowed = listener.get("allowedRoutes") or {}
    kinds = allowed.get("kinds")
    if kinds and not any(
        (k.get("group") or GROUP) == GROUP and k.get("kind") == "HTTPRoute" for k in kinds
    ):
        return "allowedRoutes.kinds admits no HTTPRoute"
    namespaces = allowed.get("namespaces") or {}
    origin = namespaces.get("from") or "Same"
    own = gateway["metadata"]["namespace"]
    if origin == "All":
        return None
    if origin == "Same":
        if source.namespace == own:
            return None
        return (
            f"admits routes from its own namespace {own} only (allowedRoutes.namespaces.from Same)"
        )
    if origin == "Selector":
        selector = namespaces.get("selector") or {}
        if selectors.matches(selector, source.labels):
            return None
        return (
            f"admits routes from namespaces matching {selectors.describe(selector)}, "
            f"which {source.namespace} does not"
        )
    return f"allowedRoutes.namespaces.from {origin!r} is not All, Same or Selector"


def http_listener(gateway: Obj, source: RouteSource) -> Obj | None:
    """The first plain HTTP listener that takes an HTTPRoute from ``source``'s namespace."""
    for listener in (gateway.get("spec") or {}).get("listeners") or []:
        if refusal(listener, gateway, source) is None:
            return dict(listener)
    return None


def listener_refusals(gateway: Obj, source: RouteSource) -> str:
    """Each listener and why it would not take the route: ``http: ...; https: ...``."""
    listeners = (gateway.get("spec") or {}).get("listeners") or []
    return (
        "; ".join(f"listener {ls.get('name')}: {refusal(ls, gateway, source)}" for ls in listeners)
        or "no listeners"
    )


def judge_class(gateway_class: Obj | None, name: str) -> str | None:
    """Why the GatewayClass fails (None when it is Accepted)."""
    if gateway_class is None:
        return f"GatewayClass {name} not found"
    accepted = condition(gateway_class, "Accepted")
    if is_true(accepted):
        return None
    return f"not accepted by its controller: {describe(accepted, 'Accepted')}"


def judge_gateway(gateway: Obj, source: RouteSource) -> str | None:
    """Why the Gateway cannot carry the traffic phase (None when it can)."""
    programmed = condition(gateway, "Programmed")
    if not is_true(programmed):
        return f"not programmed: {describe(programmed, 'Programmed')}"
    if not addresses(gateway):
        return "programmed but publishes no address (status.addresses is empty)"
    if http_listener(gateway, source) is None:
        return (
            f"no plain HTTP listener takes an HTTPRoute from namespace {source.namespace}: "
            + listener_refusals(gateway, source)
        )
    return None


def gateway_url(gateway: Obj, source: RouteSource) -> str:
    """``http://<first address>:<port of the listener the route uses>`` (IPv6 bracketed)."""
    address = addresses(gateway)[0]
    host = f"[{address}]" if ":" in address else address
    listener = http_listener(gateway, source) or {}
    return f"http://{host}:{listener.get('port', 80)}"


def listener_host(gateway: Obj, source: RouteSource) -> str | None:
    """The Host header the route's listener's hostname needs (a wildcard filled in), or None."""
    hostname = (http_listener(gateway, source) or {}).get("hostname")
    return str(hostname).replace("*", "aicr-canary", 1) if hostname else None


def parent_matches(parent_ref: Obj, route_namespace: str, gateway: Obj) -> bool:
    """A parentRef names ``gateway`` by namespace and name (namespace defaulting to the route's)."""
    meta = gateway["metadata"]
    return (
        (parent_ref.get("group") or GROUP) == GROUP
        and (parent_ref.get("kind") or "Gateway") == "Gateway"
        and parent_ref.get("name") == meta["name"]
        and (parent_ref.get("namespace") or route_namespace) == meta["namespace"]
    )


def attachment(route: Obj, gateway: Obj) -> Obj | None:
    """The route's status entry for ``gateway`` (matched by namespace and name), or None."""
    namespace = route["metadata"]["namespace"]
    for parent in (route.get("status") or {}).get("parents") or []:
        if parent_matches(parent.get("parentRef") or {}, namespace, gateway):
            return dict(parent)
    return None


def attached(routes: list[Obj], gateway: Obj) -> list[str]:
    """``namespace/name`` of every HTTPRoute the Gateway accepted, counted by namespace AND name.

    A route whose parentRef names a same-named Gateway of another namespace is
    not attached to this one.
    """
    return sorted(ref(r) for r in routes if is_true(condition(attachment(r, gateway), "Accepted")))


def judge_attached(route: Obj | None, gateway: Obj) -> str | None:
    """Why the check's route is not attached (None when Accepted and its refs resolved)."""
    entry = attachment(route, gateway) if route else None
    if entry is None:
        return "the Gateway's controller reported no status for it"
    for kind in ("Accepted", "ResolvedRefs"):
        c = condition(entry, kind)
        if not is_true(c):
            return describe(c, kind)
    return None


# ---- workloads ------------------------------------------------------------------------


def is_ready(pod: Obj) -> bool:
    """The pod's Ready condition is True."""
    return is_true(condition(pod, "Ready"))


def client_done(pod: Obj) -> bool:
    """The client pod has ended (its counts are in its log); the echo pods never end."""
    if pod["metadata"]["name"] != CLIENT:
        return True
    return pod_status.finished(pod)


def _program(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def _pod_ip_env() -> Obj:
    return {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}


def backend(name: str, image: str) -> list[Obj]:
    """An echo pod ``name`` answering with its name on :8080, and its Service."""
    labels = {"app.kubernetes.io/name": "aicr-echo", "aicr.dev/backend": name}
    container = {
        "name": "echo",
        "image": image,
        "command": ["python3", "-c", _program("echo_server.py"), name, str(PORT)],
        "env": [_pod_ip_env()],
        "ports": [{"name": "http", "containerPort": PORT}],
        "readinessProbe": {"tcpSocket": {"port": PORT}, "periodSeconds": 1},
        "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "64Mi"}},
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"echo-{name}", "labels": dict(labels)},
        "spec": restricted_pod_spec([container]),
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {"selector": labels, "ports": [{"name": "http", "port": PORT, "targetPort": PORT}]},
    }
    return [pod, service]


def path_prefix(run_id: str) -> str:
    """The run's own path on the Gateway, so the route cannot capture anyone's traffic."""
    return f"/aicr-{run_id}"


def route(gateway: Obj, listener: str, run_id: str, weights: tuple[int, int]) -> Obj:
    """The HTTPRoute on ``listener``: the canary header to canary; the rest split by ``weights``.

    Its parentRef names the listener (``sectionName``) that admits it, so a Gateway's other
    listeners (HTTPS, or ones closed to this namespace) never take it.
    """
    meta = gateway["metadata"]
    path = {"type": "PathPrefix", "value": path_prefix(run_id)}
    header = {"type": "Exact", "name": CANARY_HEADER, "value": CANARY_VALUE}
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": ROUTE},
        "spec": {
            "parentRefs": [
                {
                    "group": GROUP,
                    "kind": "Gateway",
                    "name": meta["name"],
                    "namespace": meta["namespace"],
                    "sectionName": listener,
                }
            ],
            "rules": [
                {
                    "matches": [{"path": path, "headers": [header]}],
                    "backendRefs": [{"name": CANARY, "port": PORT}],
                },
                {
                    "matches": [{"path": path}],
                    "backendRefs": [
                        {"name": STABLE, "port": PORT, "weight": weights[0]},
                        {"name": CANARY, "port": PORT, "weight": weights[1]},
                    ],
                },
            ],
        },
    }


def key_secret(value: str) -> Obj:
    """The API key's header value, copied for the client pod (never in its spec)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": KEY_SECRET},
        "type": "Opaque",
        "stringData": {"value": value},
    }


@dataclass(frozen=True)
class Probe:
    """One kind of request the client sends ``count`` times, and what must come back."""

    name: str
    count: int
    key: str | None = None  # "valid", "bogus" or None (no key header)
    headers: tuple[tuple[str, str], ...] = ()
    body: str | None = None
    denied: bool = False  # must be refused (401/403) rather than served
    lands_on: tuple[str, ...] = ()  # the backends it must reach (waited for before counting)

    def request(self, run_id: str) -> Obj:
        """The probe as the client's plan entry."""
        path = path_prefix(run_id) + ("/v1/chat/completions" if self.body else "/")
        return {
            "name": self.name,
            "count": self.count,
            "key": self.key,
            "headers": dict(self.headers),
            "body": self.body,
            "path": path,
            "method": "POST" if self.body else "GET",
        }


SPLIT, HEADER = "weighted split", "header rule"
MODEL_BODY = json.dumps(
    {"model": "aicr-conformance", "messages": [{"role": "user", "content": "ping"}]}
)


def probes(requests: int, header_requests: int, with_key: bool) -> list[Probe]:
    """The traffic probes, then (with an API key) the security probes; the split comes first."""
    key = "valid" if with_key else None
    out = [
        Probe(SPLIT, requests, key, lands_on=(STABLE, CANARY)),
        Probe(HEADER, header_requests, key, ((CANARY_HEADER, CANARY_VALUE),), lands_on=(CANARY,)),
    ]
    if with_key:
        out += [
            Probe("valid key", 1, "valid"),
            Probe("no key", 1, denied=True),
            Probe("bogus key", 1, "bogus", denied=True),
            Probe(
                "model only in body",
                1,
                body=MODEL_BODY,
                denied=True,
                headers=(("Content-Type", "application/json"),),
            ),
        ]
    return out


def client_pod(image: str, plan: Obj, key_header: str | None) -> Obj:
    """The pod that sends the plan's requests from inside the cluster and prints the counts."""
    env: list[Obj] = [
        {"name": "PLAN", "value": json.dumps(plan, sort_keys=True)},
        {"name": "BOGUS", "value": BOGUS_KEY},
    ]
    if key_header:
        env.append(
            {"name": "KEY", "valueFrom": {"secretKeyRef": {"name": KEY_SECRET, "key": "value"}}}
        )
    container = {
        "name": "client",
        "image": image,
        "command": ["python3", "-c", _program("traffic_client.py")],
        "env": env,
        "resources": {"requests": {"cpu": "50m", "memory": "32Mi"}, "limits": {"memory": "64Mi"}},
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": CLIENT},
        "spec": restricted_pod_spec([container]),
    }


def plan(
    url: str,
    host: str | None,
    probe_list: list[Probe],
    run_id: str,
    key_header: str | None,
    warmup_seconds: float,
    timeout_seconds: float,
) -> Obj:
    """The client's plan (no secret in it: the key comes from the Secret)."""
    return {
        "url": url,
        "host": host,
        "keyHeader": key_header,
        "warmupSeconds": warmup_seconds,
        "timeoutSeconds": timeout_seconds,
        "warmup": {p.name: list(p.lands_on) for p in probe_list if p.lands_on},
        "probes": [p.request(run_id) for p in probe_list],
    }


def parse_result(log: str) -> Obj:
    """The client's counts from its log's result line; ValueError when there is none."""
    for line in reversed(log.splitlines()):
        if line.startswith(RESULT):
            data = json.loads(line.removeprefix(RESULT))
            if isinstance(data, dict) and isinstance(data.get("probes"), dict):
                return data
    raise ValueError("the traffic client printed no result line")


# ---- verdicts -------------------------------------------------------------------------


def counts(result: Obj, name: str) -> tuple[dict[str, int], dict[str, int]]:
    """(status -> count, backend -> count) of probe ``name``; KeyError when it is missing."""
    probe = result["probes"][name]
    return dict(probe.get("statuses") or {}), dict(probe.get("backends") or {})


def show(counted: dict[str, int]) -> str:
    """``200x498, 503x2``."""
    return ", ".join(f"{k}x{v}" for k, v in sorted(counted.items())) or "nothing"


def _not_served(statuses: dict[str, int], sent: int) -> str | None:
    ok = statuses.get("200", 0)
    if ok == sent:
        return None
    return f"{sent - ok}/{sent} requests not served ({show(statuses)}; 0 is no answer)"


def judge_header(statuses: dict[str, int], backends: dict[str, int], sent: int) -> str | None:
    """Every header-matched request must be served by canary."""
    problem = _not_served(statuses, sent)
    if problem:
        return problem
    elsewhere = sent - backends.get(CANARY, 0)
    if elsewhere:
        return (
            f"{elsewhere}/{sent} requests with {CANARY_HEADER}: {CANARY_VALUE} landed "
            f"elsewhere ({show(backends)}); every one must reach {CANARY}"
        )
    return None


def judge_split(statuses: dict[str, int], backends: dict[str, int], b: Bound) -> str | None:
    """Every request served by stable or canary, stable's count inside the bound."""
    problem = _not_served(statuses, b.requests)
    if problem:
        return problem
    stable, canary = backends.get(STABLE, 0), backends.get(CANARY, 0)
    if stable + canary != b.requests:
        return f"answers from unknown backends: {show(backends)}"
    if not b.holds(stable):
        return (
            f"{STABLE}/{CANARY} {stable}/{canary} ({stable / b.requests:.1%} to {STABLE}) "
            f"outside {b}"
        )
    return None


def judge_probe(probe: Probe, statuses: dict[str, int]) -> str | None:
    """A denied probe: every answer 401/403 (a 200 names the bypass); else every answer 200."""
    if not probe.denied:
        return _not_served(statuses, probe.count)
    if statuses.get("200"):
        return f"served without a valid key (200): the gateway lets `{probe.name}` through"
    other = {k: v for k, v in statuses.items() if k not in DENIED}
    if other:
        return f"answered {show(other)}, not 401/403"
    return None
