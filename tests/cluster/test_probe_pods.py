"""Probe pods of ordinary images run for real: env, volumes, logs, exit codes, probes, isolation."""

from __future__ import annotations

import json
from typing import Any

from harness import SimCluster
from manifests import dial_apiserver_loopback, pod

RUN = {"aicr.dev/run-id": "r0123abcd"}  # the label every pod a check creates carries
UBUNTU = "ubuntu:22.04"
BUSYBOX = "docker.io/library/busybox:1.36"


def probe(name: str, image: str, script: str, **spec: Any) -> dict[str, Any]:
    return pod(name, image=image, command=["sh", "-c", script], labels={**RUN, "app": name},
               **spec)  # fmt: skip


def _cs(p: dict[str, Any]) -> dict[str, Any]:
    return dict(((p.get("status") or {}).get("containerStatuses") or [{}])[0])


def test_an_ubuntu_probe_runs_with_the_downward_api_and_its_exit_code(
    cluster: SimCluster, namespace: str
) -> None:
    script = ('echo "$POD_IP $NODE $NS $NAME $APP"; hostname; cat /etc/podinfo/labels; '
              'echo oops >&2; exit 3')  # fmt: skip
    fields = {"POD_IP": "status.podIP", "NODE": "spec.nodeName", "NS": "metadata.namespace",
              "NAME": "metadata.name", "APP": "metadata.labels['app']"}  # fmt: skip
    body = probe(
        "ubuntu", UBUNTU, script,
        env=[{"name": k, "valueFrom": {"fieldRef": {"fieldPath": v}}} for k, v in fields.items()],
        volumeMounts=[{"name": "podinfo", "mountPath": "/etc/podinfo"}],
        volumes=[{"name": "podinfo", "downwardAPI": {"items": [
            {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]}}],
    )  # fmt: skip
    cluster.apply(body, namespace)
    p = cluster.wait_for_phase(namespace, "ubuntu", "Failed", timeout=60)
    term = _cs(p)["state"]["terminated"]
    assert (term["exitCode"], term["reason"]) == (3, "Error")
    log = cluster.core().read_namespaced_pod_log("ubuntu", namespace).splitlines()
    # stdout and stderr are copied into the log by one reader each (as containerd's
    # are), so the stderr line may land anywhere among the stdout lines: pick it out.
    assert log.count("oops") == 1
    stdout = [line for line in log if line != "oops"]
    node = p["spec"]["nodeName"]
    assert stdout[0] == f"{p['status']['podIP']} {node} {namespace} ubuntu ubuntu"
    assert stdout[1] == "ubuntu"  # the pod's own hostname
    labels = [f'{k}="{v}"' for k, v in sorted(p["metadata"]["labels"].items())]
    assert 'app="ubuntu"' in labels
    assert sorted(stdout[2:]) == labels  # the downward API file's lines, in any order


def test_a_probe_pod_has_a_network_of_its_own_and_not_the_clusters_loopback(
    cluster: SimCluster, namespace: str
) -> None:
    # Only local facts are read: no address outside the pod is ever dialled, except
    # the API server's port on loopback, which must be unreachable from here: the
    # pod's loopback is its own (its eth0 and routes: test_pod_network.py).
    script = ("tail -n +3 /proc/net/dev | cut -d: -f1; echo routes $(tail -n +2 /proc/net/route"
              f" | wc -l); {dial_apiserver_loopback(cluster.sim.server)}")  # fmt: skip
    cluster.apply(probe("isolated", BUSYBOX, script), namespace)
    cluster.wait_for_phase(namespace, "isolated", "Succeeded", timeout=60)
    log = cluster.core().read_namespaced_pod_log("isolated", namespace).split()
    assert log == ["lo", "eth0", "routes", "2", "111"]  # ECONNREFUSED: not the cluster's lo


def test_readiness_follows_an_exec_probe(cluster: SimCluster, namespace: str) -> None:
    body = probe(
        "warming", BUSYBOX, "sleep 3; touch /work/ready; exec sleep 300",
        volumeMounts=[{"name": "work", "mountPath": "/work"}],
        volumes=[{"name": "work", "emptyDir": {}}],
        restart_policy="Always",
    )
    body["spec"]["containers"][0]["readinessProbe"] = {
        "exec": {"command": ["test", "-f", "/work/ready"]}, "periodSeconds": 1}
    cluster.apply(body, namespace)
    p = cluster.wait_for_phase(namespace, "warming", "Running")
    assert _cs(p)["ready"] is False
    p = cluster.wait_for_pod(namespace, "warming", lambda p: _cs(p).get("ready"), timeout=30)
    ready = next(c for c in p["status"]["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "True"


def test_an_http_probe_dials_the_pod_ip_from_inside_the_pod(
    cluster: SimCluster, namespace: str
) -> None:
    # Bound to the pod IP only: a probe dialling loopback would never see it ready.
    body = probe("web", UBUNTU, 'exec python3 -m http.server 8080 --bind "$POD_IP"',
                 restart_policy="Always",
                 env=[{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}],
                 )  # fmt: skip
    body["spec"]["containers"][0]["ports"] = [{"name": "http", "containerPort": 8080}]
    body["spec"]["containers"][0]["readinessProbe"] = {
        "httpGet": {"path": "/", "port": "http"}, "periodSeconds": 1}
    cluster.apply(body, namespace)
    cluster.wait_for_pod(namespace, "web", lambda p: _cs(p).get("ready"), timeout=30)


def test_a_failing_liveness_probe_restarts_the_container(
    cluster: SimCluster, namespace: str
) -> None:
    body = probe("dying", BUSYBOX, "exec sleep 300", restart_policy="Always")
    body["spec"]["terminationGracePeriodSeconds"] = 1
    body["spec"]["containers"][0]["livenessProbe"] = {
        "exec": {"command": ["false"]}, "periodSeconds": 1, "failureThreshold": 2}
    cluster.apply(body, namespace)
    p = cluster.wait_for_pod(
        namespace, "dying", lambda p: _cs(p).get("restartCount", 0) >= 1, timeout=30
    )
    last = _cs(p)["lastState"]["terminated"]
    assert last["exitCode"] in (137, 143), json.dumps(last)
