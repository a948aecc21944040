"""Every manifest a run renders: golden files (reviewed; refresh with AICR_UPDATE_GOLDEN=1)
plus the properties reviewers care about, asserted directly."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from runctx import make_ctx, planned

from aicr.catalog import parse_catalog
from aicr.errors import SchemaError
from aicr.kube import names
from aicr.kube.placement import Placement, Toleration
from aicr.plan import Plan
from aicr.runner import manifests
from aicr.runner.context import RunContext
from aicr.runner.manifests import PrometheusTarget

GOLDEN = Path(__file__).resolve().parents[2] / "data" / "golden"


def golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("AICR_UPDATE_GOLDEN") == "1" or not path.exists():
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{name} differs; review and refresh"


def by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def test_render_run_golden(sample_plan: Plan, ctx: RunContext) -> None:
    golden("run-r0123abcd.yaml", manifests.to_yaml(manifests.render_run(sample_plan, ctx)))


def test_apply_order_puts_identity_before_jobs(sample_plan: Plan, ctx: RunContext) -> None:
    kinds = [o["kind"] for o in manifests.render_run(sample_plan, ctx)]
    assert kinds[:2] == ["Namespace", "ConfigMap"]
    for i, kind in enumerate(kinds):
        if kind == "Job":
            assert "ServiceAccount" in kinds[:i]


def test_every_object_carries_the_run_labels(sample_plan: Plan, ctx: RunContext) -> None:
    for obj in manifests.render_run(sample_plan, ctx):
        labels = obj["metadata"]["labels"]
        assert labels["app.kubernetes.io/managed-by"] == "aicr"
        if obj["kind"] == "Lease":  # shared by every run in the namespace
            continue
        assert labels["aicr.dev/run-id"] == "r0123abcd"
        # the run namespace keeps the user's name; the GPU Lease is shared by every run
        if obj["metadata"]["name"] not in (ctx.namespace, manifests.GPU_LEASE_NAME):
            assert obj["metadata"]["name"].startswith("aicr-r0123abcd")


def test_the_shared_lease_comes_once_with_each_gpu_checks_need(
    sample_plan: Plan, ctx: RunContext
) -> None:
    objects = manifests.render_run(sample_plan, ctx)
    gpu_checks = {c.name: str(c.gpus) for c in sample_plan.checks
                  if c.gpus and c.skip_reason is None}  # fmt: skip
    assert gpu_checks  # the sample plan has some, or this test proves nothing
    (lease,) = by_kind(objects, "Lease")
    entries = json.loads(lease["metadata"]["annotations"]["aicr.dev/gpu-reservations"])
    assert entries == {f"r0123abcd/{name}": {"need": need} for name, need in gpu_checks.items()}
    first_job = next(o for o in objects if o["kind"] == "Job")
    assert objects.index(lease) < objects.index(first_job)
    assert lease["metadata"]["namespace"] == ctx.namespace
    assert "aicr.dev/run-id" not in lease["metadata"]["labels"]  # no run's cleanup owns it


def test_nothing_is_bound_to_cluster_admin(sample_plan: Plan, ctx: RunContext) -> None:
    for obj in manifests.render_run(sample_plan, ctx):
        if obj["kind"].endswith("Binding"):
            assert obj["roleRef"]["name"].startswith("aicr-r0123abcd-")
        for rule in obj.get("rules", []):
            assert "*" not in rule["verbs"]
            assert not {"escalate", "bind", "impersonate"} & set(rule["verbs"])


def test_cluster_role_holds_exactly_the_catalog_access(ctx: RunContext) -> None:
    check = planned("platform-health")
    role = by_kind(manifests.check_objects(ctx, check), "ClusterRole")[0]
    assert role["rules"] == [
        {"apiGroups": r.api_groups, "resources": r.resources, "verbs": r.verbs}
        for r in check.spec.access
    ]


def test_gang_scheduling_may_delete_only_its_own_cluster_scoped_quota(ctx: RunContext) -> None:
    """Its ClusterQueue and ResourceFlavor are named after its workload namespace, which the
    run knows when it renders the role: delete is pinned to that name, create is not."""
    role = by_kind(manifests.check_objects(ctx, planned("gang-scheduling")), "ClusterRole")[0]
    kueue = [r for r in role["rules"] if r["apiGroups"] == ["kueue.x-k8s.io"]]
    assert kueue == [
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["resourceflavors", "clusterqueues"],
         "verbs": ["create", "list"]},
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["resourceflavors", "clusterqueues"],
         "verbs": ["delete"], "resourceNames": [names.workload_namespace(ctx.run_id,
                                                                          "gang-scheduling")]},
    ]  # fmt: skip
    assert kueue[1]["resourceNames"] == ["aicr-r0123abcd-gang-scheduling-w"]


@pytest.mark.parametrize(
    ("extra", "error"),
    [("verbs: [create, delete], ownName: true", "ownName cannot restrict create: RBAC has no "
      "object name to match for them"),
     ("verbs: [delete], ownName: true, resourceNames: [x]", "give resourceNames or ownName")],
)  # fmt: skip
def test_an_own_name_rule_that_rbac_cannot_honour_is_refused(extra: str, error: str) -> None:
    text = (
        "apiVersion: aicr.nvidia.com/v1alpha1\nkind: Catalog\nimage: x\nchecks:\n"
        "  - {name: c, phase: conformance, description: d, timeout: 1m, access: "
        f"[{{apiGroups: [kueue.x-k8s.io], resources: [clusterqueues], {extra}}}]}}\n"
    )
    with pytest.raises(SchemaError, match=error):
        parse_catalog(text)


def test_result_role_is_pinned_to_its_own_configmap(ctx: RunContext) -> None:
    objs = manifests.check_objects(ctx, planned("platform-health"))
    role = next(o for o in by_kind(objs, "Role") if o["metadata"]["namespace"] == ctx.namespace)
    assert role["rules"] == [
        {
            "apiGroups": [""],
            "resources": ["configmaps"],
            "resourceNames": ["aicr-r0123abcd-platform-health-result"],
            "verbs": ["get", "patch", "update"],
        }
    ]


def test_a_param_secret_gets_a_role_on_exactly_that_secret_in_its_namespace() -> None:
    from aicr.config import parse_config

    check = planned("inference-gateway")
    bare = [o["metadata"]["namespace"] for o in by_kind(
        manifests.check_objects(make_ctx(), check), "Role")]  # fmt: skip
    config = parse_config(
        "{kind: ValidateConfig, apiVersion: aicr.nvidia.com/v1alpha1, spec: {validate: {checks: "
        "{inference-gateway: {params: {apiKey: {header: Authorization, secretRef: "
        "{namespace: gw, name: key, key: value}}}}}}}}", "config.yaml")  # fmt: skip
    objs = manifests.check_objects(make_ctx(config=config), check)
    role = next(o for o in by_kind(objs, "Role") if o["metadata"]["namespace"] == "gw")
    binding = next(o for o in by_kind(objs, "RoleBinding") if o["metadata"]["namespace"] == "gw")
    assert "gw" not in bare
    assert role["metadata"]["name"] == "aicr-r0123abcd-inference-gateway-apikey"
    assert role["rules"] == [{"apiGroups": [""], "resources": ["secrets"],
                              "resourceNames": ["key"], "verbs": ["get"]}]  # fmt: skip
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"][0]["name"] == "aicr-r0123abcd-inference-gateway"
    assert role["metadata"]["labels"]["aicr.dev/run-id"] == "r0123abcd"


def test_job_spec_contract(ctx: RunContext) -> None:
    from datetime import timedelta

    job = manifests.job(ctx, planned("platform-health", timedelta(minutes=7)), None)
    spec = job["spec"]
    pod = spec["template"]["spec"]
    container = pod["containers"][0]
    assert spec["backoffLimit"] == 0
    assert spec["activeDeadlineSeconds"] == 420
    assert spec["ttlSecondsAfterFinished"] >= 3600
    assert container["command"] == ["aicr", "check", "run", "platform-health"]
    assert container["resources"]["limits"] == {"cpu": "100m", "memory": "256Mi"}
    sc = container["securityContext"]
    assert sc["runAsNonRoot"] and sc["readOnlyRootFilesystem"]
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"] == {"drop": ["ALL"]}
    assert sc["seccompProfile"] == {"type": "RuntimeDefault"}
    assert pod["restartPolicy"] == "Never"
    assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"]
    assert pod["tolerations"] == [{"key": "", "operator": "Exists"}]  # tolerate all by default
    assert "affinity" not in pod


def test_orchestrator_flags_replace_the_default_placement() -> None:
    ctx = make_ctx(
        orchestrator=Placement(
            node_selector={"aicr.dev/node-group": "system"},
            tolerations=(Toleration(key="dedicated", value="system", effect="NoSchedule"),),
        ),
        image_pull_secrets=("regcred",),
    )
    pod = manifests.job(ctx, planned("platform-health"), None)["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"aicr.dev/node-group": "system"}
    assert pod["tolerations"] == [
        {"key": "dedicated", "operator": "Equal", "value": "system", "effect": "NoSchedule"}
    ]
    assert pod["imagePullSecrets"] == [{"name": "regcred"}]


@pytest.mark.parametrize(
    ("target", "pinned", "kind"),
    [
        (PrometheusTarget("monitoring", 1), False, "required"),
        (PrometheusTarget("monitoring", None), False, "required"),
        (PrometheusTarget("monitoring", 2), False, "preferred"),
        (PrometheusTarget("monitoring", 0), False, "preferred"),
        (PrometheusTarget(None, None), False, "preferred"),
        (PrometheusTarget("monitoring", 1), True, "preferred"),
    ],
    ids=["one-replica", "dry-run", "two-replicas", "not-found", "no-component", "user-pinned"],
)
def test_prometheus_affinity(target: PrometheusTarget, pinned: bool, kind: str) -> None:
    affinity = manifests.prometheus_affinity(target, pinned)["podAffinity"]
    key = f"{kind}DuringSchedulingIgnoredDuringExecution"
    assert list(affinity) == [key]
    term = affinity[key][0] if kind == "required" else affinity[key][0]["podAffinityTerm"]
    assert term["labelSelector"] == {"matchLabels": {"app.kubernetes.io/name": "prometheus"}}
    assert term["topologyKey"] == "kubernetes.io/hostname"
    if target.namespace:
        assert term["namespaces"] == [target.namespace]
    else:
        assert term["namespaceSelector"] == {}


def test_prometheus_checks_get_affinity_in_the_recipes_namespace(ctx: RunContext) -> None:
    pod = manifests.job(ctx, planned("ai-service-metrics"), None)["spec"]["template"]["spec"]
    term = pod["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert term["namespaces"] == ["monitoring"]


def test_workload_namespace_has_rules_only_inside(ctx: RunContext) -> None:
    check = planned("check-nvidia-smi")
    objs = manifests.workload_objects(ctx, check)
    ns, role, binding = objs
    assert ns["metadata"]["name"] == "aicr-r0123abcd-check-nvidia-smi-w"
    assert ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "baseline"
    assert (
        role["metadata"]["namespace"] == binding["metadata"]["namespace"] == ns["metadata"]["name"]
    )
    assert binding["subjects"][0]["namespace"] == ctx.namespace
    assert manifests.workload_objects(ctx, planned("platform-health")) == []


def test_inputs_configmap_round_trips(ctx: RunContext, tmp_path: Path) -> None:
    from aicr.checks import load_inputs

    cm = manifests.inputs_configmap(ctx)
    for key, value in cm["data"].items():
        (tmp_path / key).write_text(value)
    inputs = load_inputs(tmp_path)
    assert inputs.recipe == ctx.recipe
    assert inputs.snapshot == ctx.snapshot
    assert inputs.config == ctx.config
    assert inputs.workloads == ctx.workloads
    assert (inputs.run_id, inputs.namespace) == (ctx.run_id, ctx.namespace)


def test_run_namespace_is_restricted(ctx: RunContext) -> None:
    ns = manifests.run_objects(ctx)[0]
    assert ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
