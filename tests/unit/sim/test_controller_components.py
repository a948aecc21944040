"""The controller components' installs: what they create, how they bind, what they may do."""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from simcluster.components import coscheduling, karpenter, kueue, pod_ip_config
from simcluster.components.base import Context

CTX = Context(selected=frozenset({"kueue", "coscheduling", "karpenter"}))


def hook(name: str, group: str, resource: str) -> dict[str, Any]:
    return {
        "name": name,
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "failurePolicy": "Fail",
        "clientConfig": {"service": {"name": "webhook-service", "namespace": "system",
                                     "path": f"/mutate-{resource}"}},
        "rules": [{"apiGroups": [group], "apiVersions": ["v1"], "operations": ["CREATE"],
                   "resources": [resource]}],
    }  # fmt: skip


@pytest.fixture
def kueue_release(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A miniature of the release files the build copies beside the binary."""
    (tmp_path / "bases").mkdir()
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "clusterqueues.kueue.x-k8s.io"}, "spec": {}}  # fmt: skip
    (tmp_path / "bases" / "kueue.x-k8s.io_clusterqueues.yaml").write_text(yaml.safe_dump(crd))
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "manager-role"},
            "rules": [{"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads"],
                       "verbs": ["get"]}]}  # fmt: skip
    (tmp_path / "role.yaml").write_text("---\n" + yaml.safe_dump(role))
    secrets = {**role, "kind": "Role", "metadata": {"name": "manager-secrets-role"}}
    (tmp_path / "manager_secrets_role.yaml").write_text(yaml.safe_dump(secrets))
    hooks = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "mutating-webhook-configuration"},
        "webhooks": [
            hook("mclusterqueue.kb.io", "kueue.x-k8s.io", "clusterqueues"),
            hook("mjob.kb.io", "batch", "jobs"),
            hook("mpod.kb.io", "", "pods"),
            hook("mappwrapper.kb.io", "workload.codeflare.dev", "appwrappers"),
        ],
    }
    (tmp_path / "manifests.yaml").write_text(yaml.safe_dump(hooks))  # fmt: skip
    monkeypatch.setattr(kueue, "upstream", lambda: tmp_path)
    return tmp_path


def by_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def test_kueue_registers_only_the_webhooks_it_serves(kueue_release: Path) -> None:
    docs = kueue.manifests(CTX)
    (config,) = by_kind(docs, "MutatingWebhookConfiguration")
    assert [h["name"] for h in config["webhooks"]] == ["mclusterqueue.kb.io", "mjob.kb.io"]
    assert config["metadata"]["name"] == "kueue-mutating-webhook-configuration"
    for h in config["webhooks"]:
        service = h["clientConfig"]["service"]
        assert (service["name"], service["namespace"]) == (kueue.SERVICE, kueue.NAMESPACE)
        assert service["path"].startswith("/mutate-")


def test_kueues_webhook_certificate_is_for_its_service_and_signed_by_the_bundle(
    kueue_release: Path, tmp_path: Path
) -> None:
    docs = kueue.manifests(CTX)
    (secret,) = by_kind(docs, "Secret")
    (config,) = by_kind(docs, "MutatingWebhookConfiguration")
    ca = tmp_path / "ca.crt"
    ca.write_bytes(base64.b64decode(config["webhooks"][0]["clientConfig"]["caBundle"]))
    cert = tmp_path / "tls.crt"
    cert.write_bytes(base64.b64decode(secret["data"]["tls.crt"]))
    host = f"{kueue.SERVICE}.{kueue.NAMESPACE}.svc"
    ok = subprocess.run(["openssl", "verify", "-CAfile", str(ca), "-verify_hostname", host,
                         str(cert)], capture_output=True, text=True)  # fmt: skip
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = subprocess.run(["openssl", "verify", "-CAfile", str(ca), "-verify_hostname",
                          "other.kueue-system.svc", str(cert)], capture_output=True)  # fmt: skip
    assert bad.returncode != 0


def test_kueue_listens_on_its_pod_ip_only() -> None:
    cfg = yaml.safe_load(kueue.config_text())
    ip = pod_ip_config.PLACEHOLDER
    assert cfg["health"]["healthProbeBindAddress"] == f"{ip}:8081"
    assert cfg["metrics"]["bindAddress"] == f"{ip}:8443"
    assert cfg["webhook"]["host"] == ip
    assert cfg["internalCertManagement"] == {"enable": False}
    assert cfg["integrations"]["frameworks"] == ["batch/job"]


def test_kueues_second_configuration_differs_only_in_leaving_batch_job_out(
    kueue_release: Path,
) -> None:
    (cm,) = [d for d in by_kind(kueue.manifests(CTX), "ConfigMap") if d["metadata"]["name"]
             == kueue.CONFIG]  # fmt: skip
    used, no_jobs = (yaml.safe_load(cm["data"][f]) for f in (kueue.CONFIG_FILE, kueue.NO_JOBS_FILE))
    assert no_jobs["integrations"] == {"frameworks": ["jobset.x-k8s.io/jobset"]}
    assert {**no_jobs, "integrations": used["integrations"]} == used
    (dep,) = by_kind(kueue.manifests(CTX), "Deployment")
    (init,) = dep["spec"]["template"]["spec"]["initContainers"]
    files = (kueue.CONFIG_FILE, kueue.NO_JOBS_FILE)
    assert all(f"/config/{f}" in init["command"][2] for f in files)


def test_kueue_mounts_the_certificate_where_it_reads_it(kueue_release: Path) -> None:
    (dep,) = by_kind(kueue.manifests(CTX), "Deployment")
    spec = dep["spec"]["template"]["spec"]
    mounts = {m["mountPath"] for m in spec["containers"][0]["volumeMounts"]}
    assert {"/tmp/k8s-webhook-server/serving-certs", "/etc/kueue/metrics/certs"} <= mounts
    assert spec["initContainers"][0]["image"] == pod_ip_config.BUSYBOX


def test_the_rendered_configs_replace_the_placeholder(tmp_path: Path) -> None:
    init = pod_ip_config.init_container("c.yaml", "d.yaml")
    (tmp_path / "template").mkdir()
    (tmp_path / "config").mkdir()
    for name in ("c.yaml", "d.yaml"):
        (tmp_path / "template" / name).write_text(f"{name}: {pod_ip_config.PLACEHOLDER}:1\n")
    script = init["command"][2].replace("/template/", f"{tmp_path}/template/").replace(
        "/config/", f"{tmp_path}/config/")  # fmt: skip
    subprocess.run(["sh", "-c", script], env={"POD_IP": "10.244.1.7"}, check=True)
    assert (tmp_path / "config" / "c.yaml").read_text() == "c.yaml: 10.244.1.7:1\n"
    assert (tmp_path / "config" / "d.yaml").read_text() == "d.yaml: 10.244.1.7:1\n"


def test_coscheduling_runs_one_gang_profile_with_short_windows() -> None:
    cfg = yaml.safe_load(coscheduling.config_text())
    (profile,) = cfg["profiles"]
    assert profile["schedulerName"] == coscheduling.SCHEDULER_NAME
    assert profile["plugins"]["multiPoint"]["enabled"] == [{"name": "Coscheduling"}]
    (args,) = profile["pluginConfig"]
    assert args["args"]["permitWaitingTimeSeconds"] == coscheduling.PERMIT_WAITING_SECONDS
    assert cfg["leaderElection"] == {"leaderElect": False}
    container = coscheduling.deployment()["spec"]["template"]["spec"]["containers"][0]
    assert "--bind-address=$(POD_IP)" in container["args"]


def test_coscheduling_may_update_podgroups_but_not_create_them() -> None:
    (role,) = [d for d in coscheduling.rbac() if d["kind"] == "ClusterRole"]
    verbs = {v for r in role["rules"] for v in r["verbs"]}
    assert "create" not in verbs and "delete" not in verbs and "*" not in verbs


def test_the_podgroup_controller_listens_on_its_pod_ip_only() -> None:
    (container,) = coscheduling.controller_deployment()["spec"]["template"]["spec"]["containers"]
    # its defaults would be :8080 (metrics) and :8081 (probes), every address
    assert container["args"] == ["--metricsAddr=0", "--probeAddr=$(POD_IP):8081"]
    assert container["readinessProbe"]["httpGet"]["port"] == coscheduling.PROBE_PORT
    assert "--enableLeaderElection" not in container["args"]


def test_the_podgroup_controller_patches_status_and_creates_nothing_of_the_groups() -> None:
    (role,) = [d for d in coscheduling.controller_rbac() if d["kind"] == "ClusterRole"]
    grants = {(g, r, v) for rule in role["rules"] for g in rule["apiGroups"]
              for r in rule["resources"] for v in rule["verbs"]}  # fmt: skip
    assert ("scheduling.x-k8s.io", "podgroups/status", "patch") in grants
    assert {r for g, r, _ in grants if g == "coordination.k8s.io" or r == "nodes"} == set()
    assert {v for g, _, v in grants if g == "scheduling.x-k8s.io"} == {
        "get", "list", "watch", "patch"}  # fmt: skip
    assert {(r, v) for g, r, v in grants if g == ""} == {
        ("pods", "get"), ("pods", "list"), ("pods", "watch"),
        ("events", "create"), ("events", "patch"), ("events", "update")}  # fmt: skip


def test_coscheduling_installs_the_crds_the_controller_watches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, kind in (("crd.yaml", "podgroups"), ("elasticquota-crd.yaml", "elasticquotas")):
        crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
               "metadata": {"name": f"{kind}.scheduling.x-k8s.io"}}  # fmt: skip
        (tmp_path / name).write_text(yaml.safe_dump(crd))
    monkeypatch.setattr(coscheduling, "upstream", lambda: tmp_path)
    docs = coscheduling.manifests(CTX)
    assert [d["metadata"]["name"] for d in by_kind(docs, "CustomResourceDefinition")] == [
        "podgroups.scheduling.x-k8s.io", "elasticquotas.scheduling.x-k8s.io"]  # fmt: skip
    assert [d["metadata"]["name"] for d in by_kind(docs, "Deployment")] == [
        coscheduling.NAME, coscheduling.CONTROLLER]  # fmt: skip


def test_karpenters_instance_type_is_the_sims_gpu_node() -> None:
    (it,) = karpenter.instance_types()
    assert it["name"] == "p5.48xlarge"
    assert it["resources"]["nvidia.com/gpu"] == "8"
    zones = sorted(o["Requirements"][1]["values"][0] for o in it["offerings"])
    assert zones == ["us-east-1a", "us-east-1b"]


def test_karpenters_nodepool_is_bounded_and_consolidates_quickly() -> None:
    pool = next(d for d in karpenter.node_pool() if d["kind"] == "NodePool")
    assert pool["spec"]["limits"] == {"nvidia.com/gpu": "16"}
    assert pool["spec"]["disruption"]["consolidateAfter"] == karpenter.CONSOLIDATE_AFTER
    assert pool["spec"]["template"]["spec"]["taints"] == [
        {"key": "nvidia.com/gpu", "effect": "NoSchedule"}]  # fmt: skip


def test_no_rbac_rule_of_the_controllers_is_a_wildcard(kueue_release: Path) -> None:
    docs = [*coscheduling.rbac(), *coscheduling.controller_rbac(), *karpenter.rbac(),
            *by_kind(kueue.manifests(CTX), "ClusterRole")]  # fmt: skip
    for doc in docs:
        for rule in doc.get("rules") or []:
            assert "*" not in rule["verbs"], doc["metadata"]["name"]
            assert "*" not in rule.get("resources", []), doc["metadata"]["name"]


def test_every_recipe_keys_its_cache_folder_as_the_component_does() -> None:
    from simcluster.cluster import paths
    from simcluster.components import registry

    for c in (c for c in registry.COMPONENTS if c.pin):
        recipe = paths.SIM_ROOT / "simcluster/components" / c.name.replace("-", "_") / "build.sh"
        script = f'source "{paths.SIM_ROOT}/pins.env"; source "{recipe}"; echo "$version"'
        got = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
        assert got.stdout.strip() == c.version, c.name


def test_component_images_are_distinct_and_not_generic_names() -> None:
    from simcluster.components import registry

    repos = registry.image_repos()
    assert len(repos) == len(set(repos))
    # The runtime owns every pod of such an image, whoever made it.
    assert not {"operator", "controller", "manager", "server"} & set(repos)


def test_traefik_never_calls_home_and_asks_for_the_key() -> None:
    from simcluster.components import gateway

    args = gateway.args()
    assert "--global.checkNewVersion=false" in args
    assert "--global.sendAnonymousUsage=false" in args
    assert f"--entryPoints.web.http.middlewares={gateway.MIDDLEWARE}" in args
    assert not any(gateway.MIDDLEWARE in a for a in gateway.args(auth=False))
    users = yaml.safe_load(gateway.dynamic_config())["http"]["middlewares"]["api-key"]
    assert users["basicAuth"]["users"][0].startswith(f"{gateway.USER}:{{SHA}}")
