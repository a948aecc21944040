"""inference-gateway on the simulated cluster: the real Gateway API CRDs and Traefik as data plane.

Healthy, then the broken scenarios: a GatewayClass no controller accepts, the
Gateway's listener refusing routes of other namespaces (fault
`gateway-routes-same-namespace`), a controller that drops the route's weights
(played by this test rewriting them while the check runs), and the API key
left out (fault `gateway-auth-open`). Each runs `aicr validate` with the config
`hack/sim/sim config` prints (the Gateway's name and the API key's Secret).
The check finds the gateway's address where it would on any cluster: the
Gateway's status.addresses, which Traefik fills in.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from component_logs import logs_on_failure
from deployhelp import run_check
from harness import SimCluster
from kubernetes import client
from simcluster.components import gateway

pytestmark = pytest.mark.components("gateway")
logged = logs_on_failure(gateway.NAMESPACE, "app.kubernetes.io/name=traefik")
CHECK = "inference-gateway"
GROUP, VERSION = "gateway.networking.k8s.io", "v1"
RUN_LABEL = "aicr.dev/run-id"
OURS = f"aicr.dev/check={CHECK}"  # every object a run makes for this check carries it
COMPONENTS = "- name: traefik\n  namespace: traefik\n"
GW = f"{gateway.NAMESPACE}/{gateway.GATEWAY}"


def _objects(cluster: SimCluster) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(cluster.api())


def _gateway_serving(cluster: SimCluster) -> None:
    """Wait until the Gateway publishes the ready Traefik pod's IP, and Traefik answers there
    (404: no route matches /, before any key is asked for)."""

    def ready() -> bool:
        url = gateway.address(cluster.api())
        gw = _objects(cluster).get_namespaced_custom_object(
            GROUP, VERSION, gateway.NAMESPACE, "gateways", gateway.GATEWAY)  # fmt: skip
        published = [a["value"] for a in (gw.get("status") or {}).get("addresses") or []]
        return bool(url and published and url == f"http://{published[0]}:{gateway.WEB_PORT}"
                    and cluster.http_get(url, timeout=3)[0] != 0)  # fmt: skip

    cluster.wait_for(ready, timeout=90, message="the Gateway to publish Traefik's address")


@pytest.fixture
def cluster(cluster: SimCluster) -> Iterator[SimCluster]:
    _gateway_serving(cluster)
    yield cluster


def _validate(cluster: SimCluster, tmp_path: Path, **params: Any) -> dict[str, Any]:
    config = cluster.validate_config()
    settings = config["spec"]["validate"]["checks"][CHECK]["params"]
    settings.update({"routeSeconds": 30, **params})
    settings = {k: v for k, v in settings.items() if v is not None}
    config["spec"]["validate"]["checks"][CHECK]["params"] = settings
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    test = run_check(cluster, tmp_path, CHECK, COMPONENTS, phase="conformance", config=str(path))
    _nothing_left(cluster)
    return test


def _nothing_left(cluster: SimCluster) -> None:
    """No route, pod, Secret, Role or namespace of this check is left (the key's Role too)."""
    routes = _objects(cluster).list_cluster_custom_object(GROUP, VERSION, "httproutes",
                                                          label_selector=OURS)  # fmt: skip
    core, rbac = cluster.core(), client.RbacAuthorizationV1Api(cluster.api())
    left = [r["metadata"]["name"] for r in routes["items"]]
    left += [p.metadata.name for p in core.list_pod_for_all_namespaces(
        label_selector=OURS).items]  # fmt: skip
    left += [s.metadata.name for s in core.list_secret_for_all_namespaces(
        label_selector=OURS).items]  # fmt: skip
    left += [r.metadata.name for r in rbac.list_role_for_all_namespaces(
        label_selector=OURS).items]  # fmt: skip
    left += [n.metadata.name for n in core.list_namespace(label_selector=OURS).items
             if n.status.phase != "Terminating"]  # fmt: skip
    assert left == []


@logged
def test_healthy_gateway_routes_by_header_and_weight_and_enforces_the_key(
    cluster: SimCluster, tmp_path: Path
) -> None:
    test = _validate(cluster, tmp_path)
    assert (test["status"], test["message"]) == ("passed", (
        f"Gateway {GW} Programmed at " + str(gateway.address(cluster.api())) + "; API key "
        "enforced on 3 probes; 50/50 canary-header requests to canary; 70/30 split within 5 "
        "points over 500 requests"))  # fmt: skip
    sections = {e["title"]: e for e in test["extra"]["evidence"]}
    for title in ("weighted split", "header rule", "no key", "bogus key", "model only in body"):
        print(f"{title}: {sections[title]['answer']}")  # the figures, for the record (-s)
    assert "bound 70% ± 5 points: 325..375 of 500; chance a random 70/30 balancer misses it: " \
        "1.27%" in sections["weighted split"]["answer"]  # fmt: skip
    assert sections["no key"]["answer"].startswith("statuses 401x1")


@logged
def test_a_gateway_class_no_controller_accepts_fails(cluster: SimCluster, tmp_path: Path,
                                                      namespace: str) -> None:  # fmt: skip
    unclaimed = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "GatewayClass",
                 "metadata": {"name": "aicr-unclaimed"},
                 "spec": {"controllerName": "example.com/no-such-controller"}}  # fmt: skip
    gw = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Gateway", "metadata": {"name": "orphan"},
          "spec": {"gatewayClassName": "aicr-unclaimed", "listeners": gateway.listeners("All")}}
    cluster.apply(unclaimed)
    try:
        cluster.apply(gw, namespace)
        test = _validate(cluster, tmp_path, gateway=f"{namespace}/orphan", apiKey=None)
    finally:
        _objects(cluster).delete_cluster_custom_object(GROUP, VERSION, "gatewayclasses",
                                                       "aicr-unclaimed")  # fmt: skip
    waiting = "Unknown (Pending: Waiting for controller)"
    assert (test["status"], test["message"]) == ("failed", (
        "2/2 inference gateway steps failed: GatewayClass aicr-unclaimed: not accepted by its "
        f"controller: Accepted={waiting} | Gateway {namespace}/orphan: not programmed: "
        f"Programmed={waiting}"))  # fmt: skip


@logged
def test_a_listener_refusing_other_namespaces_is_named_before_any_route(
    cluster: SimCluster, tmp_path: Path
) -> None:
    cluster.fault("gateway-routes-same-namespace")
    test = _validate(cluster, tmp_path, routeSeconds=10)
    assert test["status"] == "failed", test["message"]
    assert f"Gateway {GW}: no plain HTTP listener takes an HTTPRoute from namespace " in (
        test["message"])  # fmt: skip
    assert "(allowedRoutes.namespaces.from Same)" in test["message"]


def _drop_weights(cluster: SimCluster, stop: threading.Event) -> None:
    """Play a controller that ignores weights: every run's route gets equal ones, at once."""
    api = _objects(cluster)
    while not stop.wait(0.1):
        for route in api.list_cluster_custom_object(GROUP, VERSION, "httproutes",
                                                    label_selector=RUN_LABEL)["items"]:  # fmt: skip
            rules = route["spec"]["rules"]
            refs = [b for rule in rules for b in rule.get("backendRefs") or []]
            if all(b.get("weight", 1) == 1 for b in refs):
                continue
            for b in refs:
                b["weight"] = 1
            meta = route["metadata"]
            api.patch_namespaced_custom_object(GROUP, VERSION, meta["namespace"], "httproutes",
                                               meta["name"], {"spec": {"rules": rules}})


@logged
def test_a_weight_ignored_fails_the_split(cluster: SimCluster, tmp_path: Path) -> None:
    stop = threading.Event()
    rewriter = threading.Thread(target=_drop_weights, args=(cluster, stop), daemon=True)
    rewriter.start()
    try:
        test = _validate(cluster, tmp_path)
    finally:
        stop.set()
        rewriter.join(10)
    # Equal weights: a round-robin data plane answers 250/250 (the counts are in evidence).
    assert test["status"] == "failed", test["message"]
    assert test["message"].startswith(
        "1/10 inference gateway steps failed: weighted split: stable/canary "), test["message"]
    assert test["message"].endswith("outside 70% ± 5 points: 325..375 of 500"), test["message"]


@logged
def test_an_open_gateway_fails_naming_each_bypass(cluster: SimCluster, tmp_path: Path) -> None:
    cluster.fault("gateway-auth-open")
    _gateway_serving(cluster)
    test = _validate(cluster, tmp_path)
    served = "served without a valid key (200): the gateway lets `{}` through"
    assert (test["status"], test["message"]) == ("failed", (
        "3/10 inference gateway steps failed: " + " | ".join(
            f"{p}: " + served.format(p) for p in ("no key", "bogus key", "model only in body"))))
    cluster.heal()
    _gateway_serving(cluster)
