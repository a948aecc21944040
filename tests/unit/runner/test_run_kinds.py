"""Run cleanup deletes every kind a catalog rule lets a check create, by REST path."""

from __future__ import annotations

import ssl

import httpx
import pytest

from aicr.catalog import load_catalog, parse_catalog
from aicr.kube import names
from aicr.kube.rest import Credentials, KubeApi
from aicr.runner import cleanup, run_kinds

HEAD = "apiVersion: aicr.nvidia.com/v1alpha1\nkind: Catalog\nimage: x\nchecks:\n"


def catalog(rules: str, where: str = "workloadAccess") -> str:
    return (HEAD + "  - {name: c, phase: conformance, description: d, timeout: 1m,\n"
            f"     {where}: [{rules}]}}\n")  # fmt: skip


def test_every_kind_the_shipped_catalog_lets_a_check_create_is_known_and_cleaned() -> None:
    made = run_kinds.created_by_checks(load_catalog())  # raises UnknownKind for an unknown one
    refs = [k.ref for k in made]
    assert {"Pod", "ResourceClaim", "RayCluster", "PodGroup", "PodGroup.scheduling.run.ai",
            "HorizontalPodAutoscaler"} <= set(refs)  # fmt: skip
    order = [k.ref for k in run_kinds.cleanup_order()]
    assert set(refs) <= set(order) and order[-1] == "Namespace"
    # a check's kinds go before the runner's: a Deployment goes before the pods it owns
    assert order.index("Deployment") < order.index("Pod")


def test_cluster_scoped_custom_resources_a_check_creates_are_cleaned_too() -> None:
    rule = "{apiGroups: [kueue.x-k8s.io], resources: [clusterqueues, resourceflavors], " \
           "verbs: [create, delete]}"
    made = run_kinds.created_by_checks(parse_catalog(catalog(rule, "access")))
    assert [(k.name, k.namespaced) for k in made] == [
        ("ClusterQueue", False), ("ResourceFlavor", False)]


@pytest.mark.parametrize(
    ("rule", "ok"),
    [
        ("{apiGroups: [''], resources: [pods/exec], verbs: [create]}", True),
        ("{apiGroups: [example.com], resources: [gadgets], verbs: [get, list]}", True),
        ("{apiGroups: [example.com], resources: [gadgets], verbs: [create]}", False),
        ("{apiGroups: [example.com], resources: ['*'], verbs: ['*']}", False),
    ],
    ids=["subresource", "read-only", "unknown-create", "wildcard"],
)
def test_a_rule_creating_a_kind_the_table_does_not_know_is_refused(rule: str, ok: bool) -> None:
    parsed = parse_catalog(catalog(rule))
    if ok:
        assert run_kinds.created_by_checks(parsed) == ()
        return
    with pytest.raises(run_kinds.UnknownKind, match=r"catalog check c may create .* in API group "
                       r"'example\.com', which aicr\.kube\.kinds does not know"):  # fmt: skip
        run_kinds.created_by_checks(parsed)


def test_cleanup_deletes_custom_resources_by_rest_path_and_skips_unserved_apis() -> None:
    ray = "/apis/ray.io/v1/rayclusters"
    item = {"metadata": {"name": "rc", "namespace": "w"}}
    listed: dict[str, list[object]] = {ray: [item]}
    seen: list[tuple[str, str]] = []
    selectors: set[str] = set()

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append((request.method, request.url.path))
        if request.url.path == "/apis/resource.k8s.io":  # discovery: DRA served at v1
            return httpx.Response(200, json={"versions": [{"version": "v1"}]})
        if request.method == "GET":
            selectors.add(request.url.params.get("labelSelector", ""))
        if request.method == "DELETE":
            listed[ray] = []
            return httpx.Response(200, json={})
        if request.url.path in listed:
            return httpx.Response(200, json={"items": listed[request.url.path]})
        if request.url.path.startswith("/apis/") and "k8s.io" not in request.url.path:
            return httpx.Response(404, json={"message": "the server could not find it"})
        return httpx.Response(200, json={"items": []})

    creds = Credentials("https://api.test", lambda: None, ssl.create_default_context())
    with KubeApi(creds, transport=httpx.MockTransport(handler)) as api:
        assert cleanup.cleanup_with(api, "r1", timeout=1) == []
    assert ("DELETE", "/apis/ray.io/v1/namespaces/w/rayclusters/rc") in seen
    lists = [p for m, p in seen if m == "GET"]
    assert "/api/v1/pods" in lists and "/apis/kueue.x-k8s.io/v1beta1/clusterqueues" in lists
    assert "/apis/resource.k8s.io/v1/resourceclaims" in lists
    assert selectors == {names.run_selector("r1")}
