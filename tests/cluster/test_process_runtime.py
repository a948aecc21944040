"""Validator-image pods run as local processes, as a kubelet would run them."""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path
from typing import Any

from harness import SimCluster
from kubernetes import client
from manifests import job, validator_pod
from simcluster.net.addresses import GATEWAY

PROBE = textwrap.dedent(
    """
    import json, os, ssl, sys, urllib.error, urllib.request
    sa = "/var/run/secrets/kubernetes.io/serviceaccount"
    token = open(sa + "/token").read()
    ns = open(sa + "/namespace").read()
    ctx = ssl.create_default_context(cafile=sa + "/ca.crt")
    base = "https://%s:%s" % (os.environ["KUBERNETES_SERVICE_HOST"],
                              os.environ["KUBERNETES_SERVICE_PORT"])
    def status(path):
        req = urllib.request.Request(base + path, headers={"Authorization": "Bearer " + token})
        try:
            return urllib.request.urlopen(req, context=ctx).status
        except urllib.error.HTTPError as e:
            return e.code
    report = {
        "env": dict(os.environ),
        "config": open("/etc/probe/config.yaml").read(),
        "secret": open("/etc/probe-secret/password").read(),
        "namespace": ns,
        "configmaps": status("/api/v1/namespaces/%s/configmaps" % ns),
        "secrets": status("/api/v1/namespaces/%s/secrets" % ns),
    }
    print("probe report follows", flush=True)
    print(json.dumps(report), flush=True)
    print("to stderr", file=sys.stderr)
    open("/dev/termination-log", "w").write("probe finished: exit 7")
    sys.exit(7)
    """
)

RBAC = """
apiVersion: v1
kind: ServiceAccount
metadata: {name: probe}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: probe}
rules:
- {apiGroups: [""], resources: [configmaps], verbs: [list]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: probe}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: probe}
subjects: [{kind: ServiceAccount, name: probe}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: probe-config}
data: {config.yaml: "checks: [platform-health]\\n"}
---
apiVersion: v1
kind: Secret
metadata: {name: probe-secret}
stringData: {password: s3cret}
"""


def _terminated(p: dict[str, Any]) -> dict[str, Any] | None:
    statuses = p.get("status", {}).get("containerStatuses") or []
    return statuses[0]["state"].get("terminated") if statuses else None


def _run_probe(cluster: SimCluster, ns: str) -> tuple[dict[str, Any], dict[str, Any]]:
    cluster.apply(RBAC, ns)
    manifest = validator_pod(
        "probe",
        ["python3", "-c", PROBE],
        serviceAccountName="probe",
        env=[
            {"name": "MY_POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "MY_NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
            {"name": "GREETING", "value": "hello $(MY_POD)"},
        ],
        volumeMounts=[
            {"name": "config", "mountPath": "/etc/probe"},
            {"name": "secret", "mountPath": "/etc/probe-secret"},
        ],
        volumes=[
            {"name": "config", "configMap": {"name": "probe-config"}},
            {"name": "secret", "secret": {"secretName": "probe-secret"}},
        ],
    )
    cluster.apply(manifest, ns)
    done = cluster.wait_for_phase(ns, "probe", "Failed", timeout=60)
    logs = cluster.core().read_namespaced_pod_log("probe", ns)
    # stdout and stderr are separate pipes, as in a real container: no order across them.
    report = json.loads(next(line for line in logs.splitlines() if line.startswith("{")))
    return done, report


def test_validator_pod_runs_as_a_process_with_the_pods_view(
    cluster: SimCluster, namespace: str, monkeypatch: Any
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(cluster.kubeconfig))
    pod, report = _run_probe(cluster, namespace)
    env = report["env"]
    # Only what the pod declares plus what a kubelet injects; nothing of any shell.
    assert env["MY_POD"] == "probe"
    assert env["MY_NODE"] == pod["spec"]["nodeName"]
    assert env["GREETING"] == "hello probe"
    assert env["KUBERNETES_SERVICE_HOST"] == GATEWAY  # the API server, as the pod reaches it
    assert env["KUBERNETES_SERVICE_PORT"] == cluster.sim.server.rsplit(":", 1)[1]
    assert "KUBECONFIG" not in env
    kubelet_injected = {
        "PATH",
        "HOSTNAME",
        "HOME",
        "KUBERNETES_SERVICE_HOST",
        "KUBERNETES_SERVICE_PORT",
        "KUBERNETES_SERVICE_PORT_HTTPS",
        "KUBERNETES_PORT",
    }
    interpreter = {"PWD", "LC_CTYPE"}  # set by the shell-less exec / Python itself
    assert set(env) - interpreter == kubelet_injected | {"MY_POD", "MY_NODE", "GREETING"}
    aicr = shutil.which("aicr")
    if aicr:
        assert str(Path(aicr).parent) in env["PATH"].split(":")
    # Mounted files at the pod's own paths, and the token bound to the pod.
    assert report["config"] == "checks: [platform-health]\n"
    assert report["secret"] == "s3cret"
    assert report["namespace"] == namespace
    # Exactly the pod's RBAC: its Role allows listing configmaps, not secrets.
    assert report["configmaps"] == 200
    assert report["secrets"] == 403


def test_exit_code_termination_message_and_logs(cluster: SimCluster, namespace: str) -> None:
    pod, _ = _run_probe(cluster, namespace)
    term = _terminated(pod)
    assert term is not None
    assert term["exitCode"] == 7
    assert term["reason"] == "Error"
    assert term["message"] == "probe finished: exit 7"
    assert pod["status"]["containerStatuses"][0]["containerID"].startswith("containerd://")
    core = cluster.core()
    logs = core.read_namespaced_pod_log("probe", namespace, container="main")
    lines = logs.splitlines(keepends=True)
    assert "probe report follows\n" in lines and "to stderr\n" in lines and len(lines) == 3
    assert core.read_namespaced_pod_log("probe", namespace, tail_lines=1) == lines[-1]
    stamped = core.read_namespaced_pod_log("probe", namespace, timestamps=True, tail_lines=1)
    assert stamped.endswith(" " + lines[-1]) and stamped[:4].isdigit()
    assert core.read_namespaced_pod_log("probe", namespace, limit_bytes=5) == logs[:5]


def test_successful_validator_job_completes(cluster: SimCluster, namespace: str) -> None:
    spec = validator_pod("x", ["sh", "-c", "echo ok; echo all-good > /dev/termination-log"])
    cluster.apply(job("passes", spec["spec"]), namespace)
    batch = client.BatchV1Api(cluster.api())

    def finished() -> str | None:
        conds = batch.read_namespaced_job("passes", namespace).status.conditions or []
        return next(
            (c.type for c in conds if c.status == "True" and c.type in ("Complete", "Failed")), None
        )

    assert cluster.wait_for(finished, timeout=60) == "Complete"
    pods = cluster.core().list_namespaced_pod(namespace, label_selector="job-name=passes").items
    term = pods[0].status.container_statuses[0].state.terminated
    assert (term.exit_code, term.reason, term.message) == (0, "Completed", "all-good\n")


def test_failing_validator_job_fails(cluster: SimCluster, namespace: str) -> None:
    spec = validator_pod("x", ["sh", "-c", "exit 3"])
    cluster.apply(job("fails", spec["spec"]), namespace)
    batch = client.BatchV1Api(cluster.api())

    def failed() -> bool:
        conds = batch.read_namespaced_job("fails", namespace).status.conditions or []
        return any(c.type == "Failed" and c.status == "True" for c in conds)

    cluster.wait_for(failed, timeout=60, message="Job Failed")


def test_missing_command_is_a_start_error(cluster: SimCluster, namespace: str) -> None:
    manifest = validator_pod("nocmd", ["placeholder"])
    del manifest["spec"]["containers"][0]["command"]
    cluster.apply(manifest, namespace)
    term = _terminated(cluster.wait_for_phase(namespace, "nocmd", "Failed"))
    assert term is not None and term["reason"] == "StartError" and term["exitCode"] == 128
    assert "command" in term["message"]


def test_fallback_to_logs_on_error(cluster: SimCluster, namespace: str) -> None:
    manifest = validator_pod(
        "fallback",
        ["sh", "-c", "echo first; echo last words; exit 2"],
        terminationMessagePolicy="FallbackToLogsOnError",
    )
    cluster.apply(manifest, namespace)
    term = _terminated(cluster.wait_for_phase(namespace, "fallback", "Failed"))
    assert term is not None and term["message"] == "first\nlast words\n"


def test_deleting_a_running_validator_pod_stops_its_process(
    cluster: SimCluster, namespace: str
) -> None:
    marker = f"299.{int(cluster.run_id, 16)}"  # a sleep length no other process uses
    manifest = validator_pod("sleeper", ["sh", "-c", f"exec sleep {marker}"])
    manifest["spec"]["terminationGracePeriodSeconds"] = 2
    cluster.apply(manifest, namespace)
    cluster.wait_for_phase(namespace, "sleeper", "Running")
    cluster.wait_for(lambda: _pids_named(marker), message="process started")
    cluster.core().delete_namespaced_pod("sleeper", namespace)
    cluster.wait_for(
        lambda: (
            not any(
                p.metadata.name == "sleeper"
                for p in cluster.core().list_namespaced_pod(namespace).items
            )
        ),
        message="pod gone",
    )
    cluster.wait_for(lambda: not _pids_named(marker), timeout=10, message="process stopped")


def _pids_named(marker: str) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if marker.encode() in (d / "cmdline").read_bytes():
                    out.append(int(d.name))
            except OSError:
                continue
    return [p for p in out if p != os.getpid()]


def test_mounts_are_private_to_the_pod_and_leave_no_trace(
    cluster: SimCluster, namespace: str
) -> None:
    root = Path(f"/etc/aicr-sim-test-{cluster.run_id}")
    cluster.apply(RBAC, namespace)
    manifest = validator_pod(
        "mounts",
        ["sh", "-c", f"cat {root}/cfg/config.yaml; grep -c {root} /proc/self/mountinfo"],
        volumeMounts=[{"name": "config", "mountPath": f"{root}/cfg"}],
        volumes=[{"name": "config", "configMap": {"name": "probe-config"}}],
    )
    cluster.apply(manifest, namespace)
    cluster.wait_for_phase(namespace, "mounts", "Succeeded")
    assert cluster.core().read_namespaced_pod_log("mounts", namespace) == (
        "checks: [platform-health]\n1\n"
    )
    assert not root.exists()
    assert str(root) not in Path("/proc/self/mountinfo").read_text()


def test_init_container_and_empty_dir(cluster: SimCluster, namespace: str) -> None:
    manifest = validator_pod(
        "init",
        ["sh", "-c", "cat /work/greeting"],
        volumeMounts=[{"name": "work", "mountPath": "/work"}],
        volumes=[{"name": "work", "emptyDir": {}}],
    )
    manifest["spec"]["initContainers"] = [
        {
            "name": "prepare",
            "image": cluster.validator_image,
            "command": ["sh", "-c", "echo prepared > /work/greeting"],
            "volumeMounts": [{"name": "work", "mountPath": "/work"}],
        }
    ]
    cluster.apply(manifest, namespace)
    p = cluster.wait_for_phase(namespace, "init", "Succeeded")
    init = p["status"]["initContainerStatuses"][0]["state"]["terminated"]
    assert init["exitCode"] == 0 and init["reason"] == "Completed"
    assert cluster.core().read_namespaced_pod_log("init", namespace) == "prepared\n"


def test_on_failure_restarts_with_back_off_and_previous_logs(
    cluster: SimCluster, namespace: str
) -> None:
    manifest = validator_pod("flaky", ["sh", "-c", "echo run; exit 4"], restart_policy="OnFailure")
    cluster.apply(manifest, namespace)

    def backing_off(p: dict[str, Any]) -> bool:
        cs = (p.get("status", {}).get("containerStatuses") or [{}])[0]
        return cs.get("state", {}).get("waiting", {}).get("reason") == "CrashLoopBackOff"

    p = cluster.wait_for_pod(namespace, "flaky", backing_off)
    cs = p["status"]["containerStatuses"][0]
    assert cs["restartCount"] == 1
    assert cs["lastState"]["terminated"]["exitCode"] == 4
    assert p["status"]["phase"] == "Running"
    core = cluster.core()
    assert core.read_namespaced_pod_log("flaky", namespace, previous=True) == "run\n"


def test_follow_streams_logs_until_the_container_ends(cluster: SimCluster, namespace: str) -> None:
    manifest = validator_pod("talker", ["sh", "-c", "for i in 1 2 3; do echo $i; sleep 0.5; done"])
    cluster.apply(manifest, namespace)
    cluster.wait_for_phase(namespace, "talker", "Running", "Succeeded")
    stream = cluster.core().read_namespaced_pod_log(
        "talker", namespace, follow=True, _preload_content=False
    )
    assert stream.data.decode() == "1\n2\n3\n"


def test_overlapping_containers_keep_their_termination_messages(
    cluster: SimCluster, namespace: str
) -> None:
    """The pod that created a mount point ending must not take it from one still running.

    Removing a host mount point detaches the bind mounts on it in every namespace;
    the later pod's message would then land in the host's /dev/termination-log.
    """
    host_file = Path("/dev/termination-log")
    existed = host_file.exists()
    first = validator_pod("first", ["sh", "-c", "sleep 3; echo first-done > /dev/termination-log"])
    second = validator_pod("second", ["sh", "-c", "sleep 7; echo second > /dev/termination-log"])
    cluster.apply(first, namespace)
    cluster.wait_for_phase(namespace, "first", "Running")
    cluster.apply(second, namespace)
    cluster.wait_for_phase(namespace, "second", "Running")
    messages = {}
    for name in ("first", "second"):
        term = _terminated(cluster.wait_for_phase(namespace, name, "Succeeded"))
        assert term is not None
        messages[name] = term.get("message")
    assert messages == {"first": "first-done\n", "second": "second\n"}
    assert host_file.exists() == existed  # nothing created on, or left behind by, the host
