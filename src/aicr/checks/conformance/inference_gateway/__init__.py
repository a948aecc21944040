"""inference-gateway: the recipe's Gateway routes real requests by header and by weight.

What it proves:
- the Gateway (``params.gateway``, else those of ``params.gatewayClass``, else
  any; no implementation is assumed) and its GatewayClass are ready: the class
  Accepted by its controller, the Gateway Programmed with a published address
  (``status.addresses``) and an HTTP listener; the HTTPRoutes attached to it
  are counted by parent namespace and name;
- the Gateway API Inference Extension's CRDs (InferencePool,
  InferenceObjective) are reported, and required Established when
  ``params.inferenceExtension`` is true;
- traffic: two CPU echo backends and an HTTPRoute the check creates are
  attached; a client pod inside the cluster sends requests to the Gateway's
  published address: every request carrying ``OpenAI-Project:
  ai-conformance-canary`` lands on canary, and 500 others split 70/30 within
  5 percentage points (evidence: counts, the bound, and the chance that a
  random balancer with exactly those weights misses it);
- with ``params.apiKey`` (a Secret holding the key's header value, and the
  header's name): the valid key is served (positive control), and requests
  with no key, a bogus key, or the model only in a JSON body are each refused
  with 401/403.

What it does not: route to an InferencePool (endpoint picking is the
extension's implementation's business), judge TLS listeners, or measure
latency.

How it fails: no Gateway, a GatewayClass not Accepted, a Gateway not
Programmed or without an address, the check's route not attached within
``routeSeconds`` (the controller's condition), requests not served, a canary
request elsewhere, a split outside the bound, any security probe served
(named), or a client pod that does not finish with its counts.
"""

from __future__ import annotations

import base64

from aicr.checks import CheckContext
from aicr.checks.conformance.inference_gateway import build, split
from aicr.checks.conformance.inference_gateway.params import Params as Params
from aicr.checks.workload_images import workload_image
from aicr.ctrf import Status
from aicr.result import CheckResult

INFERENCE_COMPONENT_HINT = "inference-extension"  # recipe components whose name contains it


def route_source(ctx: CheckContext) -> build.RouteSource:
    """The namespace the check's HTTPRoute goes in (its workload namespace) and its labels."""
    ns = ctx.workload_namespace
    obj = ctx.kube.get("Namespace", ns) or {}
    labels = (obj.get("metadata") or {}).get("labels") or {}
    # the API server sets kubernetes.io/metadata.name on every namespace
    return build.RouteSource(ns, {"kubernetes.io/metadata.name": ns, **labels})


def _class_and_gateway(ctx: CheckContext, source: build.RouteSource) -> build.Obj | None:
    """The Gateway ready for traffic (its class Accepted), or None; records both steps."""
    p = ctx.params
    gateways = ctx.kube.list("Gateway")
    gateway, why = build.choose_gateway(gateways, p.gateway, p.gateway_class)
    if gateway is None:
        with ctx.step("Gateway") as step:
            step.asked = "Gateways " + (
                f"{p.gateway}"
                if p.gateway
                else f"of class {p.gateway_class}"
                if p.gateway_class
                else "in every namespace"
            )
            step.answer = ", ".join(build.ref(g) for g in gateways) or "none"
            step.failed(why)
        return None
    class_name = str((gateway.get("spec") or {}).get("gatewayClassName"))
    gateway_class = ctx.kube.get("GatewayClass", class_name)
    with ctx.step(f"GatewayClass {class_name}") as step:
        step.asked = f"GatewayClass {class_name}: its controller and Accepted condition"
        controller = ((gateway_class or {}).get("spec") or {}).get("controllerName")
        step.answer = (
            f"controller {controller}: "
            f"{build.describe(build.condition(gateway_class, 'Accepted'), 'Accepted')}"
            if gateway_class
            else "not found"
        )
        class_problem = build.judge_class(gateway_class, class_name)
        if class_problem:
            step.failed(class_problem)
        else:
            step.passed(f"Accepted by {controller}")
    with ctx.step(f"Gateway {build.ref(gateway)}") as step:
        step.asked = f"Gateway {build.ref(gateway)} ({why}): Programmed, addresses, listeners"
        step.answer = (
            f"{build.describe(build.condition(gateway, 'Programmed'), 'Programmed')}; "
            f"addresses {build.addresses(gateway) or 'none'}; HTTP listener for routes "
            f"from {source.namespace}: {build.http_listener(gateway, source) or 'none'}"
        )
        problem = build.judge_gateway(gateway, source)
        if problem:
            step.failed(problem)
        else:
            step.passed(f"Programmed at {build.gateway_url(gateway, source)}")
    return None if problem or class_problem else gateway


def _routes_before(ctx: CheckContext, gateway: build.Obj) -> None:
    with ctx.step("HTTPRoutes attached") as step:
        step.asked = f"HTTPRoutes in every namespace whose parentRef is {build.ref(gateway)}"
        names = build.attached(ctx.kube.list("HTTPRoute"), gateway)
        listeners = {
            str(ls.get("name")): ls.get("attachedRoutes")
            for ls in (gateway.get("status") or {}).get("listeners") or []
        }
        step.answer = (
            f"{len(names)} attached: {', '.join(names) or 'none'}; the listeners "
            f"report attachedRoutes {listeners or 'nothing'}"
        )
        step.info("counted by parent namespace and name, before the check's own route")


def _inference_extension(ctx: CheckContext) -> None:
    wanted = ctx.params.inference_extension
    if wanted is None:
        wanted = any(INFERENCE_COMPONENT_HINT in c.name for c in ctx.recipe.component_refs)
    with ctx.step("Inference Extension") as step:
        step.asked = "CRDs " + ", ".join(build.INFERENCE_CRDS)
        found = {n: ctx.kube.get("CustomResourceDefinition", n) for n in build.INFERENCE_CRDS}
        state = {
            n: (
                "absent"
                if c is None
                else "Established"
                if build.is_true(build.condition(c, "Established"))
                else "not Established"
            )
            for n, c in found.items()
        }
        step.answer = "; ".join(f"{n}: {s}" for n, s in state.items())
        missing = build.extension_missing(state)
        if not wanted:
            step.info("reported only: the recipe does not use the Inference Extension")
        elif missing:
            step.failed("the recipe uses the Inference Extension, but " + "; ".join(missing))
        else:
            step.passed("InferencePool and InferenceObjective CRDs are Established")


def _key_value(ctx: CheckContext) -> str | None:
    key = ctx.params.api_key
    if key is None:
        return None
    ref = key.secret_ref
    secret = ctx.kube.get("Secret", ref.name, ref.namespace)
    if secret is None:
        raise LookupError(f"params.apiKey.secretRef: Secret {ref.namespace}/{ref.name} not found")
    data = (secret.get("data") or {}).get(ref.key)
    if not data:
        raise LookupError(
            f"params.apiKey.secretRef: Secret {ref.namespace}/{ref.name} has no key {ref.key}"
        )
    return base64.b64decode(data).decode()


def _deploy(ctx: CheckContext, gateway: build.Obj, source: build.RouteSource, image: str) -> bool:
    """Backends, their Services and the route; True once the route is attached."""
    for name in (build.STABLE, build.CANARY):
        for obj in build.backend(name, image):
            ctx.probes.create(obj)
    listener = build.http_listener(gateway, source) or {}
    ctx.probes.create(
        build.route(gateway, str(listener.get("name")), ctx.run_id, ctx.params.weights)
    )
    ns = ctx.workload_namespace
    with ctx.step(f"route {ns}/{build.ROUTE} attached") as step:
        step.asked = (
            f"HTTPRoute {ns}/{build.ROUTE} (prefix {build.path_prefix(ctx.run_id)}: "
            f"{build.CANARY_HEADER}: {build.CANARY_VALUE} -> {build.CANARY}; else "
            f"{build.STABLE}/{build.CANARY} {ctx.params.weights[0]}/"
            f"{ctx.params.weights[1]}) on {build.ref(gateway)}; echo pods "
            "ready"
        )
        waited = ctx.probes.wait(
            "HTTPRoute",
            lambda r: build.judge_attached(r, gateway) is None,
            budget=ctx.params.route_seconds,
        )
        last = waited.objects.get(build.ROUTE)
        if not waited.done:
            step.answer = str(((last or {}).get("status") or {}).get("parents") or "no status")
            step.failed(
                f"not attached to {build.ref(gateway)} within "
                f"{ctx.params.route_seconds:g}s: "
                f"{build.judge_attached(last, gateway)}"
            )
            return False
        names = build.attached(ctx.kube.list("HTTPRoute"), gateway)
        pods = ctx.probes.wait("Pod", build.is_ready, budget=ctx.params.route_seconds)
        step.answer = (
            f"Accepted and ResolvedRefs; now {len(names)} attached routes by namespace and name"
        )
        if not pods.done:
            step.failed(
                "echo pods not ready: " + "; ".join(f"{k}: {v}" for k, v in pods.pending.items())
            )
            return False
        if f"{ns}/{build.ROUTE}" not in names:
            step.failed("Accepted, yet not counted among the Gateway's routes")
            return False
        step.passed(f"attached to {build.ref(gateway)}")
    return True


def _traffic(
    ctx: CheckContext, gateway: build.Obj, source: build.RouteSource, image: str, key: str | None
) -> None:
    p = ctx.params
    probes = build.probes(p.requests, p.header_requests, key is not None)
    header = p.api_key.header if p.api_key else None
    if key is not None:
        ctx.probes.create(build.key_secret(key))
    url = build.gateway_url(gateway, source)
    plan = build.plan(
        url,
        build.listener_host(gateway, source),
        probes,
        ctx.run_id,
        header,
        p.route_seconds,
        p.request_seconds,
    )
    ctx.probes.create(build.client_pod(image, plan, header))
    total = sum(pr.count for pr in probes)
    with ctx.step("traffic client") as step:
        step.asked = (
            f"pod {ctx.workload_namespace}/{build.CLIENT} sends {total} requests to "
            f"{url} (the Gateway's published address)"
        )
        budget = p.route_seconds + total * p.request_seconds
        done = ctx.probes.wait("Pod", build.client_done, budget=budget)
        if build.CLIENT in done.pending:
            step.failed(f"did not finish: {done.pending[build.CLIENT]}")
            return
        result = build.parse_result(ctx.probes.logs(build.CLIENT))
        warm = result.get("warmup") or {}
        step.answer = (
            f"warm-up: {warm.get('tries')} requests until the split had reached "
            f"{build.STABLE} and {build.CANARY} and the header rule {build.CANARY} "
            f"(last status {warm.get('lastStatus')})"
        )
        if not warm.get("ready"):
            left = (warm.get("waiting") or {}).items()
            waiting = "; ".join(f"{name} never reached {', '.join(b)}" for name, b in left)
            step.failed(
                f"not every backend answered within {p.route_seconds:g}s: {waiting} "
                f"(last status {warm.get('lastStatus')}; 0 is no answer)"
            )
            return
        step.passed("every backend answered through the Gateway, from inside the cluster")
    _judge(ctx, probes, result)


def _judge(ctx: CheckContext, probes: list[build.Probe], result: build.Obj) -> None:
    p = ctx.params
    b = split.bound(p.requests, p.weights, p.tolerance_points)
    for probe in probes:
        with ctx.step(probe.name) as step:
            statuses, backends = build.counts(result, probe.name)
            step.asked = _asked(probe)
            step.answer = f"statuses {build.show(statuses)}; backends {build.show(backends)}"
            if probe.name == build.SPLIT:
                step.answer += (
                    f"; bound {b}; chance a random {p.weights[0]}/{p.weights[1]} "
                    f"balancer misses it: {split.false_failure(b):.2%}"
                )
                problem = build.judge_split(statuses, backends, b)
                ok = f"{backends.get(build.STABLE, 0)}/{backends.get(build.CANARY, 0)} within {b}"
            elif probe.name == build.HEADER:
                problem = build.judge_header(statuses, backends, probe.count)
                ok = f"all {probe.count} reached {build.CANARY}"
            else:
                problem = build.judge_probe(probe, statuses)
                ok = "refused (" + build.show(statuses) + ")" if probe.denied else "served (200)"
            if problem:
                step.failed(problem)
            else:
                step.passed(ok)


def _asked(probe: build.Probe) -> str:
    what = {"valid": "the valid key", "bogus": f"the bogus key {build.BOGUS_KEY}", None: "no key"}[
        probe.key
    ]
    extra = f", header {dict(probe.headers)}" if probe.headers and not probe.body else ""
    body = f", POST body {probe.body} (no x-ai-eg-* headers)" if probe.body else ""
    return f"{probe.count} request(s) with {what}{extra}{body}"


def run(ctx: CheckContext) -> CheckResult:
    """Discover and judge the Gateway, then send the traffic and security probes through it."""
    source = route_source(ctx)
    gateway = _class_and_gateway(ctx, source)
    if gateway is not None:
        _routes_before(ctx, gateway)
    _inference_extension(ctx)
    if gateway is not None:
        key = _key_value(ctx)
        image = workload_image(build.IMAGE, check=ctx.name, config=ctx.config)
        if _deploy(ctx, gateway, source, image):
            _traffic(ctx, gateway, source, image, key)
    result = ctx.conclude("inference gateway steps")
    if result.status != Status.PASSED or gateway is None:
        return result
    p = ctx.params
    security = " API key enforced on 3 probes;" if p.api_key else " no API key configured;"
    return ctx.passed(
        f"Gateway {build.ref(gateway)} Programmed at {build.gateway_url(gateway, source)};"
        f"{security} {p.header_requests}/{p.header_requests} canary-header "
        f"requests to canary; {p.weights[0]}/{p.weights[1]} split within "
        f"{p.tolerance_points:g} points over {p.requests} requests"
    )
