"""Pods have networks of their own: pod IPs on the cluster's bridge, Services' endpoints, webhooks.

Every connection here is made by a pod or by the API server, inside the
cluster's network namespace; the test process only reads the API.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import subprocess
from pathlib import Path
from typing import Any

from harness import SimCluster
from kubernetes import client
from kubernetes.client.rest import ApiException
from manifests import dial_apiserver_loopback
from simcluster.net.addresses import RUNTIME_POD_CIDR

RUN = {"aicr.dev/run-id": "r0123abcd"}  # makes a pod runtime-owned, as a check's pods are
UBUNTU = "ubuntu:22.04"
POD_IP_ENV = {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}
# What the pod itself sees on eth0, next to what the downward API told it.
SHOW_ADDRESS = "echo \"addr $POD_IP $(ip -4 -o addr show dev eth0 | awk '{print $4}')\"; "


def _pod(
    name: str, script: str, node: str | None = None, app: str = "", **container: Any
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [{"name": "main", "image": UBUNTU, "command": ["sh", "-c", script],
                        "env": [POD_IP_ENV], **container}],
    }  # fmt: skip
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "spec": spec,
            "metadata": {"name": name, "labels": {**RUN, "app": app or name}}}  # fmt: skip


def _service(name: str, port: int, target: int) -> dict[str, Any]:
    ports = [{"port": port, "targetPort": target}]
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"selector": {"app": name}, "ports": ports}}  # fmt: skip


def _ready(p: dict[str, Any]) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True"
               for c in (p.get("status") or {}).get("conditions") or [])  # fmt: skip


def _endpoints(cluster: SimCluster, namespace: str, service: str, count: int) -> set[str]:
    """The ready addresses of the Service's EndpointSlices, once there are `count`."""
    discovery = client.DiscoveryV1Api(cluster.api())

    def ready() -> set[str] | None:
        slices = discovery.list_namespaced_endpoint_slice(
            namespace, label_selector=f"kubernetes.io/service-name={service}"
        ).items
        found = {a for s in slices for e in s.endpoints or [] if e.conditions.ready
                 for a in e.addresses}  # fmt: skip
        return found if len(found) == count else None

    return cluster.wait_for(ready, timeout=30, message=f"{count} ready endpoints of {service}")


def _log(cluster: SimCluster, namespace: str, name: str) -> str:
    return str(cluster.core().read_namespaced_pod_log(name, namespace))


def test_two_pods_serve_one_port_on_one_node_and_reach_each_other_by_pod_ip(
    cluster: SimCluster, namespace: str
) -> None:
    node = cluster.core().list_node().items[0].metadata.name
    serve = SHOW_ADDRESS + "mkdir -p /www && echo $NAME > /www/who && cd /www && " \
        "exec python3 -m http.server 8080"  # fmt: skip
    probe = {"httpGet": {"path": "/who", "port": 8080}, "periodSeconds": 1}
    for name in ("weba", "webb"):
        body = _pod(name, serve, node, "web", readinessProbe=probe,
                    volumeMounts=[{"name": "www", "mountPath": "/www"}])  # fmt: skip
        body["spec"]["containers"][0]["env"].append({"name": "NAME", "value": name})
        body["spec"]["volumes"] = [{"name": "www", "emptyDir": {}}]
        cluster.apply(body, namespace)
    cluster.apply(_service("web", 80, 8080), namespace)
    pods = {n: cluster.wait_for_pod(namespace, n, _ready, timeout=60) for n in ("weba", "webb")}
    ips = {n: p["status"]["podIP"] for n, p in pods.items()}
    assert len(set(ips.values())) == 2
    assert all(ipaddress.ip_address(ip) in ipaddress.ip_network(RUNTIME_POD_CIDR)
               for ip in ips.values())  # fmt: skip
    for name, ip in ips.items():  # status, downward API and the pod's own eth0 agree
        prefix = RUNTIME_POD_CIDR.split("/")[1]
        assert _log(cluster, namespace, name).splitlines()[0] == f"addr {ip} {ip}/{prefix}"
    assert _endpoints(cluster, namespace, "web", 2) == set(ips.values())

    # weba fetches from webb's pod IP and from every endpoint of the Service.
    fetch = ("import urllib.request as u, sys\n"
             "o = u.build_opener(u.ProxyHandler({}))\n"
             "for url in sys.argv[1:]:\n"
             "    print(url, o.open(url, timeout=5).read().decode().strip())")  # fmt: skip
    urls = [f"http://{ip}:8080/who" for ip in (ips["webb"], *sorted(ips.values()))]
    client_pod = _pod("clienta", SHOW_ADDRESS + 'exec python3 -c "$0" "$@"', node)
    client_pod["spec"]["containers"][0]["args"] = [fetch, *urls]
    cluster.apply(client_pod, namespace)
    done = cluster.wait_for_phase(namespace, "clienta", "Succeeded", timeout=60)
    lines = _log(cluster, namespace, "clienta").splitlines()
    mine = done["status"]["podIP"]
    assert lines[0].split()[1] == mine and mine not in ips.values()
    by_ip = {ip: name for name, ip in ips.items()}
    assert lines[1:] == [f"{url} {by_ip[url.split('/')[2].split(':')[0]]}" for url in urls]
    # The servers saw the client's own pod IP: no address translation on the way.
    assert f"{mine} - -" in _log(cluster, namespace, "webb")


def test_a_pod_reaches_nothing_outside_and_kwok_pod_ips_answer_nothing(
    cluster: SimCluster, namespace: str
) -> None:
    # 198.51.100.1 (TEST-NET-2) is never routed; 10.244.0.9 is in KWOK's half of the pod CIDR.
    dial = ("import socket\n"
            "for a in ('198.51.100.1', '10.244.0.9'):\n"
            "    s = socket.socket(); s.settimeout(3)\n"
            "    try: s.connect((a, 80)); print(a, 'connected')\n"
            "    except OSError as e: print(a, e.strerror)")  # fmt: skip
    body = _pod("lonely", 'ip route; exec python3 -c "$0"')
    body["spec"]["containers"][0]["args"] = [dial]
    cluster.apply(body, namespace)
    cluster.wait_for_phase(namespace, "lonely", "Succeeded", timeout=60)
    lines = _log(cluster, namespace, "lonely").splitlines()
    assert lines[0].startswith("default via 10.244.128.1 dev eth0")
    assert lines[-2:] == ["198.51.100.1 Network is unreachable", "10.244.0.9 No route to host"]


def _tls(tmp: Path, host: str) -> tuple[bytes, bytes]:
    key, crt = tmp / "tls.key", tmp / "tls.crt"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(key), "-out", str(crt), "-days", "1", "-subj", f"/CN={host}",
         "-addext", f"subjectAltName=DNS:{host}"],
        check=True, capture_output=True, timeout=30,
    )  # fmt: skip
    return crt.read_bytes(), key.read_bytes()


WEBHOOK_SERVER = """\
import json, os, ssl
from http.server import BaseHTTPRequestHandler, HTTPServer

class Hook(BaseHTTPRequestHandler):
    def reply(self, data):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # the aggregated API's discovery (and the readiness probe)
        self.reply(json.dumps({"kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": "sim.aicr.dev/v1", "resources": [],
            "servedBy": os.environ["POD_IP"]}).encode())

    def do_POST(self):
        review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        message = "denied by the webhook pod at " + os.environ["POD_IP"]
        self.reply(json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "response": {"uid": review["request"]["uid"], "allowed": False,
                         "status": {"code": 403, "message": message}}}).encode())

server = HTTPServer(("0.0.0.0", 8443), Hook)
tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
tls.load_cert_chain("/tls/tls.crt", "/tls/tls.key")
server.socket = tls.wrap_socket(server.socket, server_side=True)
server.serve_forever()
"""


def _aggregated(cluster: SimCluster, namespace: str) -> str:
    """Register the hook pod as the aggregated API sim.aicr.dev/v1; what a GET through it says."""
    registration = client.ApiregistrationV1Api(cluster.api())
    registration.create_api_service({
        "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": {"name": "v1.sim.aicr.dev"},
        "spec": {"group": "sim.aicr.dev", "version": "v1", "groupPriorityMinimum": 10,
                 "versionPriority": 10, "insecureSkipTLSVerify": True,
                 "service": {"namespace": namespace, "name": "hook", "port": 443}},
    })  # fmt: skip
    try:
        def available() -> bool:
            svc = registration.read_api_service("v1.sim.aicr.dev")
            return any(c.type == "Available" and c.status == "True"
                       for c in svc.status.conditions or [])  # fmt: skip

        cluster.wait_for(available, timeout=30, message="the APIService to be Available")
        api = cluster.api()
        method, url, headers, _, _ = api.param_serialize(
            "GET", "/apis/sim.aicr.dev/v1", header_params={"Accept": "application/json"},
            auth_settings=["BearerToken"])  # fmt: skip
        response = api.call_api(method, url, headers)
        response.read()
        return str(json.loads(response.data).get("servedBy"))
    finally:
        registration.delete_api_service("v1.sim.aicr.dev")


def test_the_api_server_calls_a_webhook_and_an_aggregated_api_at_a_pods_endpoint(
    cluster: SimCluster, namespace: str, tmp_path: Path
) -> None:
    crt, key = _tls(tmp_path, f"hook.{namespace}.svc")
    tls = {"tls.crt": base64.b64encode(crt).decode(), "tls.key": base64.b64encode(key).decode()}
    cluster.apply([
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "hook-tls"}, "type": "Opaque",
         "data": tls},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "hook-server"},
         "data": {"server.py": WEBHOOK_SERVER}},
        _service("hook", 443, 8443),
    ], namespace)  # fmt: skip
    body = _pod("hook", "exec python3 /srv/server.py",
                readinessProbe={"httpGet": {"path": "/", "port": 8443, "scheme": "HTTPS"},
                                "periodSeconds": 1},
                volumeMounts=[{"name": "tls", "mountPath": "/tls"},
                              {"name": "code", "mountPath": "/srv"}])  # fmt: skip
    body["spec"]["volumes"] = [{"name": "tls", "secret": {"secretName": "hook-tls"}},
                               {"name": "code", "configMap": {"name": "hook-server"}}]  # fmt: skip
    cluster.apply(body, namespace)
    ip = cluster.wait_for_pod(namespace, "hook", _ready, timeout=60)["status"]["podIP"]
    assert _endpoints(cluster, namespace, "hook", 1) == {ip}
    admission = client.AdmissionregistrationV1Api(cluster.api())
    name = f"sim-net-{namespace}"
    admission.create_validating_webhook_configuration({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [{
            "name": "deny.sim.aicr.dev", "sideEffects": "None", "failurePolicy": "Fail",
            "admissionReviewVersions": ["v1"], "timeoutSeconds": 5,
            "clientConfig": {"service": {"namespace": namespace, "name": "hook", "port": 443},
                             "caBundle": base64.b64encode(crt).decode()},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                       "resources": ["configmaps"]}],
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
            "objectSelector": {"matchLabels": {"hooked": "yes"}},
        }],
    })  # fmt: skip
    try:
        hooked = {"metadata": {"name": "hooked", "labels": {"hooked": "yes"}}}

        def refused() -> str | None:  # the configuration takes a moment to reach the API server
            try:
                cluster.core().create_namespaced_config_map(namespace, hooked)
            except ApiException as e:
                return f"{e.status} {e.body}"
            cluster.core().delete_namespaced_config_map("hooked", namespace)
            return None

        why = cluster.wait_for(refused, timeout=30, message="the webhook to be called")
        assert why.startswith("403 ") and f"denied by the webhook pod at {ip}" in why, why
        cluster.core().create_namespaced_config_map(namespace, {"metadata": {"name": "plain"}})
    finally:
        admission.delete_validating_webhook_configuration(name)
    # The same pod as an aggregated API: the API server proxies to its endpoint.
    assert _aggregated(cluster, namespace) == ip


def test_a_host_network_pod_shares_the_clusters_namespace_and_loopback(
    cluster: SimCluster, namespace: str
) -> None:
    dial = dial_apiserver_loopback(cluster.sim.server)
    script = ("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | grep -x cni0; "
              f'echo "$KUBERNETES_SERVICE_HOST"; {dial}')  # fmt: skip
    body = _pod("hostnet", script)
    body["spec"]["hostNetwork"] = True
    cluster.apply(body, namespace)
    p = cluster.wait_for_phase(namespace, "hostnet", "Succeeded", timeout=60)
    assert p["status"]["podIP"] == "127.0.0.1"
    # The cluster's bridge is its own link, the API server its loopback (0: connected).
    assert [s.strip() for s in _log(cluster, namespace, "hostnet").splitlines()] == [
        "cni0", "127.0.0.1", "0"]  # fmt: skip


def _links() -> set[str]:
    lines = Path("/proc/self/net/dev").read_text().splitlines()[2:]  # this session's namespace
    return {line.split(":")[0].strip() for line in lines}


def test_a_deleted_pods_sandbox_and_its_veth_go_with_it(
    cluster: SimCluster, namespace: str
) -> None:
    cluster.apply(_pod("brief", "exec sleep 300"), namespace)
    ip = cluster.wait_for_phase(namespace, "brief", "Running", timeout=60)["status"]["podIP"]
    veth = "veth" + "".join(f"{int(o):02x}" for o in ip.split(".")[2:])  # the sandbox's naming
    assert veth in _links()
    cluster.core().delete_namespaced_pod("brief", namespace, grace_period_seconds=1)
    cluster.wait_for(lambda: veth not in _links(), timeout=30, message=f"{veth} to go")
