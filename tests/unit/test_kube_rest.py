"""The checks' REST client: paths, credentials, errors, the reader on top of it."""

from __future__ import annotations

import json
import ssl
import subprocess
from pathlib import Path

import httpx
import pytest
import yaml

from aicr.kube import rest as kubeapi
from aicr.kube.dicts import NotSupported, RestKube
from aicr.kube.kinds import KINDS
from aicr.kube.rest import Credentials, KubeApi, KubeApiError, credentials
from aicr.kube.target import KubeTarget


@pytest.mark.parametrize(
    ("kind", "namespace", "name", "path"),
    [
        ("Pod", "ns", None, "/api/v1/namespaces/ns/pods"),
        ("Pod", None, None, "/api/v1/pods"),
        ("Node", "ignored", "n1", "/api/v1/nodes/n1"),
        ("Deployment", "gpu-operator", "d", "/apis/apps/v1/namespaces/gpu-operator/deployments/d"),
        (
            "ClusterPolicy",
            None,
            "cluster-policy",
            "/apis/nvidia.com/v1/clusterpolicies/cluster-policy",
        ),
        ("ResourceClaim", "w", None, "/apis/resource.k8s.io/v1/namespaces/w/resourceclaims"),
        ("ConfigMap", "ns", "a/b", "/api/v1/namespaces/ns/configmaps/a%2Fb"),
    ],
)
def test_kind_paths(kind: str, namespace: str | None, name: str | None, path: str) -> None:
    assert KINDS[kind].path(namespace, name) == path


class Server:
    """A fake API server answering from a dict of (method, path) -> (status, body)."""

    def __init__(self, routes: dict[tuple[str, str], tuple[int, object]]) -> None:
        self.routes = routes
        self.seen: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        status, body = self.routes.get((request.method, request.url.path), (404, _status(404)))
        return httpx.Response(status, json=body)


def _status(code: int, message: str = "not found") -> dict[str, object]:
    return {"kind": "Status", "status": "Failure", "message": message, "code": code}


def _api(server: Server, tokens: list[str]) -> KubeApi:
    creds = Credentials("https://api.test:6443", lambda: tokens[0], ssl.create_default_context())
    return KubeApi(creds, transport=httpx.MockTransport(server))


def test_requests_carry_the_current_token_and_json() -> None:
    server = Server({("GET", "/api/v1/nodes"): (200, {"items": [{"metadata": {"name": "n"}}]})})
    tokens = ["first"]
    with _api(server, tokens) as api:
        api.get("/api/v1/nodes")
        tokens[0] = "rotated"  # a projected token is re-read on every request
        api.get("/api/v1/nodes", {"labelSelector": "a=b"})
    auth = [r.headers["Authorization"] for r in server.seen]
    assert auth == ["Bearer first", "Bearer rotated"]
    assert server.seen[1].url.params["labelSelector"] == "a=b"


def test_merge_patch_sends_the_merge_patch_content_type() -> None:
    path = "/api/v1/namespaces/ns/configmaps/res"
    server = Server({("PATCH", path): (200, {"data": {"k": "v"}})})
    with _api(server, ["t"]) as api:
        api.merge_patch(path, {"data": {"k": "v"}})
    (request,) = server.seen
    assert request.headers["Content-Type"] == "application/merge-patch+json"
    assert json.loads(request.content) == {"data": {"k": "v"}}


def test_errors_carry_status_reason_and_the_servers_message() -> None:
    message = 'namespaces "x" is forbidden: User "system:serviceaccount:a:b" cannot get'
    server = Server({("GET", "/api/v1/namespaces/x"): (403, _status(403, message))})
    with _api(server, ["t"]) as api, pytest.raises(KubeApiError) as caught:
        api.get("/api/v1/namespaces/x")
    assert (caught.value.status, caught.value.reason) == (403, "Forbidden")
    assert str(caught.value) == f"HTTP 403 Forbidden: {message}"


def test_reader_maps_404s_and_copies_the_kind() -> None:
    server = Server(
        {
            ("GET", "/apis/apps/v1/namespaces/ns/daemonsets"): (200, {"items": [{"metadata": {}}]}),
            ("GET", "/api/v1/namespaces/gone"): (404, _status(404)),
            ("GET", "/api/v1/namespaces/denied"): (403, _status(403, "forbidden")),
        }
    )
    reader = RestKube(_api(server, ["t"]))
    assert reader.list("DaemonSet", "ns") == [{"metadata": {}, "kind": "DaemonSet"}]
    assert reader.get("Namespace", "gone") is None
    # a collection that is not served (the CRD is not installed) has no objects
    assert reader.list("ClusterPolicy") == []
    with pytest.raises(KubeApiError):
        reader.get("Namespace", "denied")  # never mistaken for "absent"
    with pytest.raises(NotSupported):
        reader.list("Gadget")


def test_create_posts_and_delete_accepts_404() -> None:
    pods = "/api/v1/namespaces/ns/pods"
    server = Server({
        ("POST", pods): (201, {"metadata": {"name": "p", "resourceVersion": "7"}}),
        ("DELETE", f"{pods}/p"): (200, _status(200, "")),
        ("DELETE", f"{pods}/gone"): (404, _status(404)),
        ("DELETE", f"{pods}/denied"): (403, _status(403, "forbidden")),
    })  # fmt: skip
    with _api(server, ["t"]) as api:
        assert api.create(pods, {"metadata": {"name": "p"}})["metadata"]["resourceVersion"] == "7"
        api.delete(f"{pods}/p", grace_seconds=0)
        api.delete(f"{pods}/gone")  # already gone is what we wanted
        with pytest.raises(KubeApiError):
            api.delete(f"{pods}/denied")
    assert json.loads(server.seen[0].content) == {"metadata": {"name": "p"}}
    assert json.loads(server.seen[1].content) == {
        "kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background",
        "gracePeriodSeconds": 0}  # fmt: skip


def test_a_dry_run_create_asks_for_every_admission_stage_and_stores_nothing() -> None:
    path = "/apis/ray.io/v1/namespaces/ns/rayclusters"
    server = Server({("POST", path): (201, {"metadata": {"name": "rc"}})})
    with _api(server, ["t"]) as api:
        api.create(path, {"metadata": {"name": "rc"}}, dry_run=True)
        api.create(path, {"metadata": {"name": "rc"}})
    assert [dict(r.url.params) for r in server.seen] == [{"dryRun": "All"}, {}]


def test_watch_streams_events_with_the_server_timeout_below_the_read_timeout() -> None:
    events = [{"type": "ADDED", "object": {"metadata": {"name": "a"}}},
              {"type": "MODIFIED", "object": {"metadata": {"name": "a"}}}]  # fmt: skip
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        body = b"".join(json.dumps(e).encode() + b"\n" for e in events)
        return httpx.Response(200, stream=httpx.ByteStream(body))

    creds = Credentials("https://api.test:6443", lambda: "t", ssl.create_default_context())
    with KubeApi(creds, transport=httpx.MockTransport(handler)) as api:
        got = list(api.watch("/api/v1/namespaces/ns/pods", "41", 20, {"labelSelector": "a=b"}))
    assert got == events
    params = seen[0].url.params
    assert (params["watch"], params["resourceVersion"], params["timeoutSeconds"],
            params["labelSelector"]) == ("true", "41", "20", "a=b")  # fmt: skip
    read = seen[0].extensions["timeout"]["read"]
    assert read > 20  # the server ends the stream first; a read timeout means a dead link


def test_watch_and_logs_raise_api_errors_and_logs_are_text() -> None:
    log = "/api/v1/namespaces/ns/pods/p/log"

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == log:
            return httpx.Response(200, text="line 1\nline 2\n")
        return httpx.Response(403, json=_status(403, "cannot watch"))

    creds = Credentials("https://api.test:6443", lambda: "t", ssl.create_default_context())
    with KubeApi(creds, transport=httpx.MockTransport(handler)) as api:
        kube = RestKube(api)
        assert kube.logs("p", "ns", "c") == "line 1\nline 2\n"
        with pytest.raises(KubeApiError, match="cannot watch"):
            list(kube.watch("Pod", "ns", None, "1", 5))


def _service_account(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host: str) -> Path:
    sa = tmp_path / "sa"
    sa.mkdir()
    (sa / "token").write_text("pod-token\n")
    # a throwaway self-signed CA, as the service-account volume holds one
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-nodes", "-keyout", str(tmp_path / "ca.key"), "-out", str(sa / "ca.crt"),
         "-subj", "/CN=test-ca", "-days", "1"],
        check=True, capture_output=True,
    )  # fmt: skip
    monkeypatch.setattr(kubeapi, "SERVICE_ACCOUNT_DIR", sa)
    monkeypatch.setattr(kubeapi, "DEFAULT_KUBECONFIG", tmp_path / "absent")
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", host)
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    return sa


def test_in_cluster_credentials_come_from_the_service_account(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sa = _service_account(tmp_path, monkeypatch, "fd00::1")
    creds = credentials(KubeTarget())
    assert creds.server == "https://[fd00::1]:443"
    assert creds.token() == "pod-token"
    (sa / "token").write_text("rotated")
    assert creds.token() == "rotated"


def test_a_kubeconfig_wins_over_the_service_account(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _service_account(tmp_path, monkeypatch, "127.0.0.1")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: k, cluster: {server: 'https://127.0.0.1:7443', "
        "insecure-skip-tls-verify: true}}]\n"
        "users: [{name: u, user: {token: from-kubeconfig}}]\n"
        "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
    )
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    creds = credentials(KubeTarget())
    assert (creds.server, creds.token()) == ("https://127.0.0.1:7443", "from-kubeconfig")
    assert creds.tls.verify_mode == ssl.CERT_NONE


def test_the_local_executors_kubeconfig_keeps_tls_name_proxy_and_ca(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the user's kubeconfig says about reaching the server survives into the check's."""
    from kubernetes import client

    from aicr.runner.local import token_kubeconfig

    ca = _service_account(tmp_path, monkeypatch, "127.0.0.1") / "ca.crt"
    conf = client.Configuration()
    conf.host, conf.ssl_ca_cert = "https://127.0.0.1:7443", str(ca)
    conf.tls_server_name, conf.proxy = "api.internal", "http://127.0.0.1:3128"
    path = tmp_path / "check-kubeconfig"
    path.write_text(yaml.safe_dump(token_kubeconfig(client.ApiClient(conf), "check-token")))
    creds = credentials(KubeTarget(str(path)))
    assert (creds.server, creds.token()) == ("https://127.0.0.1:7443", "check-token")
    assert (creds.server_name, creds.proxy) == ("api.internal", "http://127.0.0.1:3128")
    assert creds.tls.verify_mode == ssl.CERT_REQUIRED
