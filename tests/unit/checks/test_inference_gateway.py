"""inference-gateway: the split's bound, route counting, verdicts, the programs, run() on fakes."""

from __future__ import annotations

import base64
import json
import sys
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from fake_clock import Clock

sys.path.insert(0, str(Path(__file__).parent))
from fakes import FakeKube

from aicr.checks import RunInputs, entrypoint
from aicr.checks.conformance.inference_gateway import build, echo_server, split, traffic_client
from aicr.config import parse_config
from aicr.ctrf import Status
from aicr.kube.names import workload_namespace
from aicr.recipe.load import parse_recipe

Obj = dict[str, Any]
CHECK = "inference-gateway"
RUN = "r0123abcd"
WNS = workload_namespace(RUN, CHECK)


# ---- the split's bound -----------------------------------------------------------------


def test_the_upstream_figures_give_325_to_375_of_500() -> None:
    b = split.bound(500, (70, 30), 5)
    assert (b.low, b.high, str(b)) == (325, 375, "70% ± 5 points: 325..375 of 500")
    assert b.holds(325) and b.holds(375) and not b.holds(324) and not b.holds(376)


def test_a_random_balancer_misses_the_bound_about_one_run_in_78() -> None:
    # the exact tail, summed in rationals: 1 - sum(C(500,k) .7^k .3^(500-k), k=325..375)
    assert split.false_failure(split.bound(500, (70, 30), 5)) == pytest.approx(0.0127451264, 1e-8)
    assert split.false_failure(split.bound(500, (50, 50), 50)) == 0.0  # everything inside
    assert split.false_failure(split.bound(5000, (70, 30), 5)) < 1e-12


@pytest.mark.parametrize(("requests", "weights"), [(0, (70, 30)), (10, (0, 0))])
def test_no_split_of_nothing(requests: int, weights: tuple[int, int]) -> None:
    with pytest.raises(ValueError, match="no split"):
        split.bound(requests, weights, 5)


# ---- discovery and counting ------------------------------------------------------------


def cond(kind: str, status: str = "True", reason: str = "", message: str = "") -> Obj:
    return {"type": kind, "status": status, "reason": reason, "message": message}


ALL = {"namespaces": {"from": "All"}}  # AICR's kgateway inference-gateway listener


def listener(name: str = "web", protocol: str = "HTTP", port: int = 8000,
             allowed: Obj | None = None) -> Obj:  # fmt: skip
    out: Obj = {"name": name, "protocol": protocol, "port": port}
    if allowed is not None:
        out["allowedRoutes"] = allowed
    return out


def gateway(ns: str = "gw", name: str = "inference", programmed: str = "True",
            address: str | None = "10.244.1.5", cls: str = "traefik",
            listeners: list[Obj] | None = None) -> Obj:  # fmt: skip
    status: Obj = {"conditions": [cond("Programmed", programmed, "Programmed")]}
    if address:
        status["addresses"] = [{"type": "IPAddress", "value": address}]
    return {"kind": "Gateway", "metadata": {"name": name, "namespace": ns},
            "spec": {"gatewayClassName": cls,
                     "listeners": listeners or [listener(allowed=ALL)]},
            "status": status}  # fmt: skip


SOURCE = build.RouteSource(WNS, {"kubernetes.io/metadata.name": WNS, "team": "ml"})


def gateway_class(name: str = "traefik", accepted: str = "True") -> Obj:
    return {"kind": "GatewayClass", "metadata": {"name": name},
            "spec": {"controllerName": "traefik.io/gateway-controller"},
            "status": {"conditions": [cond("Accepted", accepted, "Accepted" if accepted == "True"
                                           else "Pending", "Waiting for controller")]}}  # fmt: skip


def route(ns: str, name: str, parent: Obj, accepted: str = "True") -> Obj:
    return {"kind": "HTTPRoute", "metadata": {"name": name, "namespace": ns},
            "status": {"parents": [{"parentRef": parent,
                                    "conditions": [cond("Accepted", accepted),
                                                   cond("ResolvedRefs")]}]}}  # fmt: skip


def test_routes_are_counted_by_parent_namespace_and_name() -> None:
    gw = gateway()
    routes = [
        route("apps", "chat", {"name": "inference", "namespace": "gw"}),
        route("gw", "local", {"name": "inference"}),  # namespace defaults to the route's
        route("other", "lookalike", {"name": "inference"}),  # other/inference: not this one
        route("apps", "refused", {"name": "inference", "namespace": "gw"}, accepted="False"),
        route("apps", "to-a-service", {"name": "inference", "namespace": "gw", "kind": "Service",
                                       "group": ""}),
    ]  # fmt: skip
    assert build.attached(routes, gw) == ["apps/chat", "gw/local"]


def test_a_route_not_attached_names_the_controllers_condition() -> None:
    gw = gateway()
    r = route("apps", "chat", {"name": "inference", "namespace": "gw"}, accepted="False")
    r["status"]["parents"][0]["conditions"][0].update(reason="NotAllowedByListeners",
                                                      message="no listener admits it")  # fmt: skip
    assert build.judge_attached(r, gw) == (
        "Accepted=False (NotAllowedByListeners: no listener admits it)")
    assert build.judge_attached({"metadata": {"namespace": "apps"}}, gw) == (
        "the Gateway's controller reported no status for it")
    assert build.judge_attached(route("apps", "chat", {"name": "inference", "namespace": "gw"}),
                                gw) is None  # fmt: skip


def test_the_gateway_is_chosen_by_name_then_class_then_readiness() -> None:
    a, b = gateway("a", "one", programmed="False"), gateway("b", "two", cls="envoy")
    assert build.choose_gateway([a, b], "b/two", None)[0] is b
    assert build.choose_gateway([a, b], "c/three", None) == (None, "Gateway c/three not found")
    assert build.choose_gateway([a, b], None, "envoy")[0] is b
    assert build.choose_gateway([a, b], None, "nginx") == (None, "no Gateway of GatewayClass nginx")
    chosen, why = build.choose_gateway([a, b], None, None)
    assert (chosen, why) == (b, "first Programmed of 2: a/one, b/two")
    assert build.choose_gateway([], None, None) == (None, "no Gateway in the cluster")


@pytest.mark.parametrize(("gw", "problem"), [
    (gateway(), None),
    (gateway(programmed="False"), "not programmed: Programmed=False (Programmed)"),
    (gateway(address=None), "programmed but publishes no address (status.addresses is empty)"),
])  # fmt: skip
def test_judge_gateway(gw: Obj, problem: str | None) -> None:
    assert build.judge_gateway(gw, SOURCE) == problem


SELECT_ML = {"namespaces": {"from": "Selector", "selector": {"matchLabels": {"team": "ml"}}}}
SELECT_WEB = {"namespaces": {"from": "Selector", "selector": {"matchExpressions": [
    {"key": "team", "operator": "In", "values": ["web"]}]}}}  # fmt: skip


@pytest.mark.parametrize(("listeners", "chosen", "refusals"), [
    ([listener()], None,
     "listener web: admits routes from its own namespace gw only "
     "(allowedRoutes.namespaces.from Same)"),
    ([listener("tls", "HTTPS", 443, ALL), listener("web", allowed=ALL)], "web", ""),
    ([listener("tls", "HTTPS", 443, ALL)], None, "listener tls: protocol HTTPS, not plain HTTP"),
    ([listener(allowed=SELECT_ML)], "web", ""),
    ([listener(allowed=SELECT_WEB)], None,
     f"listener web: admits routes from namespaces matching team in (web), which {WNS} does not"),
    ([listener(allowed={**ALL, "kinds": [{"kind": "GRPCRoute"}]})], None,
     "listener web: allowedRoutes.kinds admits no HTTPRoute"),
], ids=["same-by-default", "https-skipped", "https-only", "selector-matches", "selector-misses",
        "kinds"])  # fmt: skip
def test_only_a_plain_http_listener_open_to_the_run_namespace_takes_the_route(
    listeners: list[Obj], chosen: str | None, refusals: str
) -> None:
    gw = gateway(listeners=listeners)
    found = build.http_listener(gw, SOURCE)
    assert (found or {}).get("name") == chosen
    if chosen is None:
        assert build.judge_gateway(gw, SOURCE) == (
            f"no plain HTTP listener takes an HTTPRoute from namespace {WNS}: {refusals}")


def test_a_same_namespace_listener_takes_a_route_of_its_own_namespace() -> None:
    gw = gateway(ns=WNS, listeners=[listener()])
    assert build.judge_gateway(gw, SOURCE) is None


def test_judge_class_and_the_url() -> None:
    assert build.judge_class(gateway_class(), "traefik") is None
    assert build.judge_class(gateway_class(accepted="Unknown"), "traefik") == (
        "not accepted by its controller: Accepted=Unknown (Pending: Waiting for controller)")
    assert build.judge_class(None, "x") == "GatewayClass x not found"
    assert build.gateway_url(gateway(), SOURCE) == "http://10.244.1.5:8000"
    assert build.gateway_url(gateway(address="fd00::5"), SOURCE) == "http://[fd00::5]:8000"
    tls_first = gateway(listeners=[listener("tls", "HTTPS", 443, ALL), listener(port=80,
                                                                              allowed=ALL)])
    assert build.gateway_url(tls_first, SOURCE) == "http://10.244.1.5:80"  # fmt: skip


def test_the_extension_needs_an_inference_pool_and_objective() -> None:
    ok = {"inferencepools.inference.networking.k8s.io": "Established",
          "inferenceobjectives.inference.networking.x-k8s.io": "Established"}  # fmt: skip
    assert build.extension_missing(ok) == []
    assert build.extension_missing({}) == [
        "no InferencePool CRD is Established (inferencepools.inference.networking.k8s.io: "
        "absent, inferencepools.inference.networking.x-k8s.io: absent)",
        "inferenceobjectives.inference.networking.x-k8s.io is absent"]  # fmt: skip


# ---- traffic verdicts ------------------------------------------------------------------

B = split.bound(500, (70, 30), 5)


@pytest.mark.parametrize(("statuses", "backends", "problem"), [
    ({"200": 500}, {"stable": 350, "canary": 150}, None),
    ({"200": 500}, {"stable": 325, "canary": 175}, None),
    ({"200": 500}, {"stable": 250, "canary": 250},
     "stable/canary 250/250 (50.0% to stable) outside 70% ± 5 points: 325..375 of 500"),
    ({"200": 498, "503": 2}, {"stable": 350, "canary": 148},
     "2/500 requests not served (200x498, 503x2; 0 is no answer)"),
    ({"200": 500}, {"stable": 350, "(unknown)": 150}, "answers from unknown backends: "
     "(unknown)x150, stablex350"),
])  # fmt: skip
def test_judge_split(statuses: dict[str, int], backends: dict[str, int], problem: str | None
                     ) -> None:  # fmt: skip
    assert build.judge_split(statuses, backends, B) == problem


def test_every_canary_header_request_must_land_on_canary() -> None:
    assert build.judge_header({"200": 50}, {"canary": 50}, 50) is None
    assert build.judge_header({"200": 50}, {"canary": 49, "stable": 1}, 50) == (
        "1/50 requests with OpenAI-Project: ai-conformance-canary landed elsewhere "
        "(canaryx49, stablex1); every one must reach canary")  # fmt: skip


@pytest.mark.parametrize(("statuses", "problem"), [
    ({"401": 1}, None),
    ({"403": 1}, None),
    ({"200": 1}, "served without a valid key (200): the gateway lets `no key` through"),
    ({"404": 1}, "answered 404x1, not 401/403"),
    ({"0": 1}, "answered 0x1, not 401/403"),
])  # fmt: skip
def test_a_denied_probe_must_be_refused(statuses: dict[str, int], problem: str | None) -> None:
    assert build.judge_probe(build.Probe("no key", 1, denied=True), statuses) == problem


def test_the_valid_key_is_the_positive_control() -> None:
    assert build.judge_probe(build.Probe("valid key", 1, "valid"), {"200": 1}) is None
    assert build.judge_probe(build.Probe("valid key", 1, "valid"), {"401": 1}) == (
        "1/1 requests not served (401x1; 0 is no answer)")


def test_the_client_result_line_is_required() -> None:
    with pytest.raises(ValueError, match="no result line"):
        build.parse_result("Traceback ...\n")
    assert build.parse_result('noise\nAICR-RESULT {"probes": {}}\n') == {"probes": {}}


def test_the_plan_holds_no_secret_and_the_client_reads_the_key_from_its_secret() -> None:
    probes = build.probes(500, 50, with_key=True)
    assert [p.name for p in probes] == ["weighted split", "header rule", "valid key", "no key",
                                        "bogus key", "model only in body"]  # fmt: skip
    plan = build.plan("http://10.0.0.1:80", None, probes, RUN, "Authorization", 30, 5)
    pod = build.client_pod("img", plan, "Authorization")
    env = {e["name"]: e for e in pod["spec"]["containers"][0]["env"]}
    assert env["KEY"]["valueFrom"] == {"secretKeyRef": {"name": "gateway-key", "key": "value"}}
    assert "sim-gateway-key" not in json.dumps(pod)
    assert pod["spec"]["securityContext"]["runAsNonRoot"] is True


def test_the_route_splits_by_weight_and_sends_the_canary_header_to_canary() -> None:
    r = build.route(gateway(), "web", RUN, (70, 30))
    assert r["spec"]["parentRefs"] == [{"group": "gateway.networking.k8s.io", "kind": "Gateway",
                                        "name": "inference", "namespace": "gw",
                                        "sectionName": "web"}]  # fmt: skip
    header, rest = r["spec"]["rules"]
    assert header["matches"][0]["headers"] == [{"type": "Exact", "name": "OpenAI-Project",
                                                "value": "ai-conformance-canary"}]  # fmt: skip
    assert [(b["name"], b["weight"]) for b in rest["backendRefs"]] == [("stable", 70),
                                                                       ("canary", 30)]  # fmt: skip
    assert rest["matches"][0]["path"] == {"type": "PathPrefix", "value": f"/aicr-{RUN}"}


# ---- the two programs, against each other on loopback ---------------------------------


@pytest.fixture
def echoes() -> Iterator[dict[str, int]]:
    servers = {n: ThreadingHTTPServer(("127.0.0.1", 0), echo_server.handler(n))
               for n in ("stable", "canary")}  # fmt: skip
    for s in servers.values():
        threading.Thread(target=s.serve_forever, daemon=True).start()
    yield {n: s.server_address[1] for n, s in servers.items()}
    for s in servers.values():
        s.shutdown()


def test_the_client_counts_where_each_request_landed(
    echoes: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEY", "Basic abc")
    monkeypatch.setenv("BOGUS", build.BOGUS_KEY)
    probes = [build.Probe("a", 3, "valid", lands_on=("canary",)),
              build.Probe("b", 2, body=build.MODEL_BODY)]  # fmt: skip
    plan = build.plan(f"http://127.0.0.1:{echoes['canary']}", None, probes, RUN,
                      "Authorization", 5, 5)  # fmt: skip
    result = traffic_client.run(plan)
    assert result["warmup"] == {"ready": True, "tries": 1, "lastStatus": 200, "waiting": {}}
    assert result["probes"] == {"a": {"statuses": {"200": 3}, "backends": {"canary": 3}},
                                "b": {"statuses": {"200": 2}, "backends": {"canary": 2}}}


def test_the_warm_up_waits_for_every_backend_a_probe_must_reach(
    echoes: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(traffic_client, "time", Clock())
    probes = [build.Probe("a", 1, lands_on=("stable", "canary"))]
    plan = build.plan(f"http://127.0.0.1:{echoes['canary']}", None, probes, RUN, None, 1.2, 1)
    warm = traffic_client.run(plan)["warmup"]
    # at 0 s canary answers, so it asks again at once; then after each 0.5 s pause
    # (0.5, 1.0, 1.5 s) until an answer comes once the 1.2 s are spent
    assert warm.pop("tries") == 5
    assert warm == {"ready": False, "lastStatus": 200, "waiting": {"a": ["stable"]}}
    closed = build.plan("http://127.0.0.1:9", None, probes, RUN, None, 0, 1)
    assert traffic_client.run(closed)["probes"]["a"] == {"statuses": {"0": 1}, "backends": {}}


# ---- run() on fakes --------------------------------------------------------------------

KEY_VALUE = "Basic " + base64.b64encode(b"aicr:k").decode()


def fake(result: Obj | None = None, cls: Obj | None = None) -> FakeKube:
    secret = {"kind": "Secret", "metadata": {"name": "key", "namespace": "gw"},
              "data": {"authorization": base64.b64encode(KEY_VALUE.encode()).decode()}}
    kube = FakeKube([gateway(), cls or gateway_class(), secret])

    def controller(r: Obj) -> list[Obj]:
        parent = r["spec"]["parentRefs"][0]
        return [{**r, "status": {"parents": [{"parentRef": parent, "conditions": [
            cond("Accepted"), cond("ResolvedRefs")]}]}}]  # fmt: skip

    def kubelet(pod: Obj) -> list[Obj]:
        done = pod["metadata"]["name"] == build.CLIENT
        return [{**pod, "status": {"phase": "Succeeded" if done else "Running",
                                   "conditions": [cond("Ready")]}}]  # fmt: skip

    kube.script["HTTPRoute"], kube.script["Pod"] = controller, kubelet
    kube.logs_of[build.CLIENT] = "AICR-RESULT " + json.dumps(result or healthy_counts())
    return kube


def healthy_counts(**changes: Obj) -> Obj:
    probes = {"weighted split": {"statuses": {"200": 500},
                                 "backends": {"stable": 350, "canary": 150}},
              "header rule": {"statuses": {"200": 50}, "backends": {"canary": 50}},
              "valid key": {"statuses": {"200": 1}, "backends": {"stable": 1}},
              "no key": {"statuses": {"401": 1}}, "bogus key": {"statuses": {"401": 1}},
              "model only in body": {"statuses": {"401": 1}}}  # fmt: skip
    return {"warmup": {"ready": True, "tries": 3, "lastStatus": 200}, "probes": {**probes,
                                                                               **changes}}


PARAMS = ("{gateway: gw/inference, apiKey: {header: Authorization, "
          "secretRef: {namespace: gw, name: key, key: authorization}}}")  # fmt: skip


def run(kube: FakeKube, params: str = PARAMS) -> Any:
    config = parse_config(
        "{kind: ValidateConfig, apiVersion: aicr.nvidia.com/v1alpha1, spec: {validate: "
        f"{{checks: {{{CHECK}: {{params: {params}}}}}}}}}}}", "config.yaml")  # fmt: skip
    inputs = RunInputs(RUN, "aicr-validation", parse_recipe("componentRefs: []\n"), config)
    return entrypoint.run_check(CHECK, inputs, kube=kube)


def steps(result: Any) -> list[tuple[str, str]]:
    return [(s.title, s.status.value) for s in result.evidence]


def test_a_healthy_gateway_passes_and_everything_is_removed() -> None:
    kube = fake()
    result = run(kube)
    assert (result.status, result.message) == (Status.PASSED, (
        "Gateway gw/inference Programmed at http://10.244.1.5:8000; API key enforced on 3 "
        "probes; 50/50 canary-header requests to canary; 70/30 split within 5 points over 500 "
        "requests"))  # fmt: skip
    assert [t for t, _ in steps(result)] == [
        "GatewayClass traefik", "Gateway gw/inference", "HTTPRoutes attached",
        "Inference Extension", f"route {WNS}/inference-canary attached", "traffic client",
        "weighted split", "header rule", "valid key", "no key", "bogus key",
        "model only in body", "workloads"]  # fmt: skip
    split_step = next(s for s in result.evidence if s.title == "weighted split")
    assert "bound 70% ± 5 points: 325..375 of 500; chance a random 70/30 balancer misses it: " \
        "1.27%" in split_step.answer  # fmt: skip
    made = [c[3] for c in kube.calls if c[0] == "create"]
    assert made == ["echo-stable", "stable", "echo-canary", "canary", "inference-canary",
                    "gateway-key", "traffic-client"]  # fmt: skip
    assert sorted(c[3] for c in kube.calls if c[0] == "delete") == sorted(made)
    key = next(o for o in kube.calls if o[:2] == ("create", "Secret"))
    assert key[2] == WNS


def test_an_unaccepted_class_fails_before_any_workload() -> None:
    kube = fake(cls=gateway_class(accepted="Unknown"))
    result = run(kube)
    assert (result.status, result.message) == (Status.FAILED, (
        "1/2 inference gateway steps failed: GatewayClass traefik: not accepted by its "
        "controller: Accepted=Unknown (Pending: Waiting for controller)"))  # fmt: skip
    assert not [c for c in kube.calls if c[0] == "create"]


def test_a_gateway_closed_to_the_run_namespace_fails_before_any_workload() -> None:
    # Gateway API's default allowedRoutes is Same: a route from the run's namespace would
    # never attach, so the check says so instead of waiting for a route that cannot be.
    kube = fake()
    kube.objects[0] = gateway(listeners=[listener()])
    result = run(kube)
    assert (result.status, result.message) == (Status.FAILED, (
        "1/2 inference gateway steps failed: Gateway gw/inference: no plain HTTP listener "
        f"takes an HTTPRoute from namespace {WNS}: listener web: admits routes from its own "
        "namespace gw only (allowedRoutes.namespaces.from Same)"))  # fmt: skip
    assert not [c for c in kube.calls if c[0] == "create"]


def test_a_keyless_200_fails_naming_the_probe() -> None:
    open_ = healthy_counts(**{"no key": {"statuses": {"200": 1}, "backends": {"stable": 1}}})
    result = run(fake(open_))
    assert (result.status, result.message) == (Status.FAILED, (
        "1/10 inference gateway steps failed: no key: served without a valid key (200): the "
        "gateway lets `no key` through"))  # fmt: skip


def test_a_backend_the_data_plane_never_reaches_fails_the_warm_up() -> None:
    counts = healthy_counts()
    counts["warmup"] = {"ready": False, "tries": 60, "lastStatus": 503,
                        "waiting": {"weighted split": ["canary"], "header rule": ["canary"]}}
    result = run(fake(counts))
    assert (result.status, result.message) == (Status.FAILED, (
        "1/4 inference gateway steps failed: traffic client: not every backend answered within "
        "60s: weighted split never reached canary; header rule never reached canary (last "
        "status 503; 0 is no answer)"))  # fmt: skip


def test_without_an_api_key_no_security_probe_runs() -> None:
    result = run(fake(), "{gateway: gw/inference}")
    assert result.status == Status.PASSED, result.message
    assert "no API key configured" in result.message
    assert "no key" not in [t for t, _ in steps(result)]
