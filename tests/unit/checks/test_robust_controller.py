"""robust-controller: verdicts as tables, and run() for KubeRay, Dynamo and Trainer on a fake API.

The fake operators answer as the real ones do: the API server's wording of a
webhook denial and of an unreachable webhook, the status each operator writes
(KubeRay's ``state``, Dynamo's ``Ready`` and Trainer's ``Complete``
conditions, from their published types) and the children each labels with the
resource's name; deleting the resource garbage-collects them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fakes import FakeKube

from aicr.checks import RunInputs, entrypoint
from aicr.checks.conformance import robust_controller
from aicr.checks.conformance.robust_controller import build
from aicr.checks.conformance.robust_controller.operators import (
    DYNAMO,
    KUBERAY,
    TRAINER,
    VALID,
    Operator,
    Workload,
    last_status,
)
from aicr.config import parse_config
from aicr.ctrf import Status
from aicr.kube import names
from aicr.kube.placement import Placement, Toleration
from aicr.kube.rest import KubeApiError
from aicr.recipe.load import parse_recipe
from aicr.result import CheckResult

Obj = dict[str, Any]
RUN = "r0123abcd"
NS = names.workload_namespace(RUN, "robust-controller")
WORK = Workload("img", {"run": "r"})


def denied(op: Operator, why: str) -> KubeApiError:
    return KubeApiError(422, "Unprocessable Entity",
                        f'admission webhook "{op.webhook}" denied the request: {why}')  # fmt: skip


UNREACHABLE = KubeApiError(
    500,
    "Internal Server Error",
    (
        'Internal error occurred: failed calling webhook "vraycluster.kb.io": failed to call '
        'webhook: Post "https://kuberay-webhook-service.ray-system.svc:443/validate-ray-io-v1-'
        'raycluster?timeout=10s": no endpoints available for service "kuberay-webhook-service"'
    ),
)
SCHEMA = KubeApiError(
    422,
    "Unprocessable Entity",
    ('RayCluster.ray.io "aicr-invalid" is invalid: spec.headGroupSpec: Required value'),
)


def hook(op: Operator, policy: str = "Fail") -> build.Hook:
    return build.Hook("cfg", {"name": op.webhook, "failurePolicy": policy})


@pytest.mark.parametrize(
    ("error", "policy", "ok", "reason"),
    [
        (denied(KUBERAY, "worker group names must be unique"), "Fail", True,
         "refused by vraycluster.kb.io, not by schema validation"),
        (UNREACHABLE, "Fail", False, f"webhook unreachable: {UNREACHABLE}"),
        (SCHEMA, "Fail", False, "refused before any webhook (schema or API validation), not by "
         f"vraycluster.kb.io: {SCHEMA}"),
        (KubeApiError(403, "Forbidden", 'admission webhook "other.io" denied the request: no'),
         "Fail", False, 'refused by another webhook, not vraycluster.kb.io: HTTP 403 Forbidden: '
         'admission webhook "other.io" denied the request: no'),
        (None, "Ignore", False, "invalid RayCluster accepted without webhook review "
         "(vraycluster.kb.io has failurePolicy Ignore)"),
        (None, "Fail", False, "invalid RayCluster accepted: vraycluster.kb.io did not refuse it"),
    ],
    ids=["denied", "unreachable", "schema", "other-webhook", "fail-open", "allowed"],
)  # fmt: skip
def test_refusal(error: KubeApiError | None, policy: str, ok: bool, reason: str) -> None:
    v = build.refusal(KUBERAY, "RayCluster", str(error) if error else None, hook(KUBERAY, policy))
    assert (v.ok, v.reason) == (ok, reason)


def deployment(want: int = 1, have: int = 1, available: str = "True") -> Obj:
    return {"kind": "Deployment", "metadata": {"name": KUBERAY.deployment,
                                               "namespace": KUBERAY.namespace},
            "spec": {"replicas": want},
            "status": {"availableReplicas": have,
                       "conditions": [{"type": "Available", "status": available}]}}  # fmt: skip


@pytest.mark.parametrize(
    ("dep", "ok", "reason"),
    [
        (deployment(), True, "ns/d is available"),
        (deployment(have=0, available="False"), False, "ns/d: 0/1 replicas available"),
        (deployment(want=0, have=0), False, "ns/d: 0/0 replicas available"),
        (None, False, "no Deployment ns/d"),
    ],
)
def test_deployment(dep: Obj | None, ok: bool, reason: str) -> None:
    v = build.deployment(dep, "ns/d")
    assert (v.ok, v.reason) == (ok, reason)


def crd(name: str, established: str = "True") -> Obj:
    return {"kind": "CustomResourceDefinition", "metadata": {"name": name},
            "status": {"conditions": [{"type": "Established", "status": established}]}}  # fmt: skip


def test_crds_name_each_one_absent_or_not_established() -> None:
    v = build.crds({"a.io": crd("a.io"), "b.io": crd("b.io", "False"), "c.io": None})
    assert (v.ok, v.reason) == (False, "not established: b.io (Established=False), c.io (absent)")
    assert build.crds({"a.io": crd("a.io")}).ok


def test_last_status_says_how_far_it_got() -> None:
    assert last_status(None) == "the resource is gone"
    assert last_status({"status": {}}) == "no status (never reconciled)"
    obj = {
        "status": {
            "state": "failed",
            "conditions": [
                {"type": "HeadPodReady", "status": "False", "reason": "HeadPodNotFound"}
            ],
        }
    }
    assert last_status(obj) == "state failed, HeadPodReady=False (HeadPodNotFound)"


@pytest.mark.parametrize("op", [KUBERAY, DYNAMO, TRAINER], ids=lambda o: o.key)
def test_every_pod_template_passes_restricted_pod_security(op: Operator) -> None:
    """The workload namespace enforces restricted: every template the operator copies complies."""
    templates = []
    for obj in [op.invalid(WORK), *op.valid(WORK)]:
        spec = obj["spec"]
        if obj["kind"] == "RayCluster":
            templates += [spec["headGroupSpec"]["template"]["spec"]]
            templates += [g["template"]["spec"] for g in spec["workerGroupSpecs"]]
        elif obj["kind"] == "DynamoGraphDeployment":
            templates += [{**s["extraPodSpec"], "containers": [s["extraPodSpec"]["mainContainer"]]}
                          for s in spec["services"].values()]  # fmt: skip
        elif obj["kind"] == "TrainingRuntime":
            templates += [j["template"]["spec"]["template"]["spec"]
                          for j in spec["template"]["spec"]["replicatedJobs"]]  # fmt: skip
    assert templates or op is DYNAMO  # the invalid Dynamo graph has no services at all
    for spec in templates:
        assert spec["securityContext"]["runAsNonRoot"] is True
        assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        for c in spec["containers"]:
            assert c["securityContext"] == {"allowPrivilegeEscalation": False,
                                            "capabilities": {"drop": ["ALL"]}}  # fmt: skip
            assert "nvidia.com/gpu" not in str(c["resources"])


@pytest.mark.parametrize("op", [KUBERAY, DYNAMO, TRAINER], ids=lambda o: o.key)
def test_the_workload_placement_reaches_every_pod_template(op: Operator) -> None:
    placement = Placement(
        node_selector={"pool": "cpu"}, tolerations=(Toleration("k", "NoSchedule"),)
    )
    text = str(op.valid(Workload("img", {}, placement)))
    assert "'nodeSelector': {'pool': 'cpu'}" in text
    assert "'tolerations': [{'key': 'k', 'operator': 'Equal', 'effect': 'NoSchedule'}]" in text


class Operated(FakeKube):
    """The API server plus one operator: webhook answers, reconcile, garbage collection."""

    def __init__(self, op: Operator, objects: list[Obj], reconciles: bool = True) -> None:
        super().__init__(objects)
        self.op = op
        subject = op.valid(WORK)[-1]["kind"]
        if reconciles:
            self.script[subject] = lambda made: [ready(op, made), *children(op)]

    def delete(self, kind: str, name: str, namespace: str | None = None) -> None:
        super().delete(kind, name, namespace)
        if name == VALID:  # the garbage collector follows the owner references
            self.objects = [o for o in self.objects if (o["metadata"].get("labels") or {}).get(
                self.op.child_label) != VALID]  # fmt: skip


def ready(op: Operator, made: Obj) -> Obj:
    status = {
        "RayCluster": {"state": "ready"},
        "DynamoGraphDeployment": {"state": "successful",
                                  "conditions": [{"type": "Ready", "status": "True"}]},
        "TrainJob": {"conditions": [{"type": "Complete", "status": "True"}]},
    }[made["kind"]]  # fmt: skip
    return {**made, "status": status}


def children(op: Operator) -> list[Obj]:
    owner = [{"kind": op.valid(WORK)[-1]["kind"], "name": VALID}]
    return [{"kind": kind, "metadata": {"name": f"{VALID}-{kind.lower()}", "namespace": NS,
                                        "labels": {op.child_label: VALID},
                                        "ownerReferences": owner},
             "status": {"phase": "Running"} if kind == "Pod" else {}}
            for kind in op.child_kinds]  # fmt: skip


def healthy(op: Operator, namespace: str | None = None) -> list[Obj]:
    ns = namespace or op.namespace
    dep = deployment()
    dep["metadata"].update(name=op.deployment, namespace=ns)
    config = {
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "cfg"},
        "webhooks": [
            {
                "name": op.webhook,
                "failurePolicy": "Fail",
                "clientConfig": {
                    "service": {"namespace": ns, "name": "svc", "path": "/validate"},
                    "caBundle": "Q0E=",
                },
                "rules": [{"operations": ["CREATE", "UPDATE"], "resources": ["x"]}],
            }
        ],
    }
    return [dep, config, *(crd(n) for n in op.crds)]  # fmt: skip


def run(kube: FakeKube, components: str, params: str = "{}") -> CheckResult:
    config = ("kind: ValidateConfig\napiVersion: aicr.nvidia.com/v1alpha1\nspec:\n  validate:\n"
              f"    checks:\n      robust-controller:\n        params: {params}\n")  # fmt: skip
    recipe = parse_recipe(f"componentRefs:\n{components}")
    inputs = RunInputs(RUN, "aicr-validation", recipe, parse_config(config, "cfg.yaml"))
    return entrypoint.run_check("robust-controller", inputs, kube=kube)


def steps(result: CheckResult) -> list[tuple[str, str]]:
    return [(s.title, s.status.value) for s in result.evidence]


@pytest.fixture(autouse=True)
def _fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(robust_controller, "POLL_SECONDS", 0.01)


CASES = [
    (KUBERAY, "- name: kuberay-operator\n  namespace: ray-system\n", "RayCluster",
     "worker group names must be unique"),
    (DYNAMO, "- name: dynamo-platform\n  namespace: dynamo\n", "DynamoGraphDeployment",
     "spec.services must have at least one service"),
    (TRAINER, "- name: kubeflow-trainer\n  namespace: kubeflow\n", "TrainJob",
     "spec.template.spec.replicatedJobs[0].replicas: Invalid value: 2: always must be 1"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("op", "components", "kind", "why"), CASES, ids=lambda c: getattr(c, "key", "")
)
def test_a_healthy_operator_passes_and_nothing_is_left(
    op: Operator, components: str, kind: str, why: str
) -> None:
    ns = components.split("namespace: ")[1].strip()
    kube = Operated(op, healthy(op, ns))
    kube.fail["dry-run"] = denied(op, why)
    result = run(kube, components)
    assert (result.status, result.message) == (Status.PASSED, (
        f"{op.title}: controller available, CRDs established, {op.webhook} refused the invalid "
        "resource, a valid one reconciled and its children were garbage-collected"))  # fmt: skip
    invalid = op.invalid(WORK)["kind"]
    assert steps(result) == [
        ("operator", "informational"),
        (f"controller Deployment {ns}/{op.deployment}", "passed"),
        ("CRDs established", "passed"),
        (f"webhook {op.webhook} registered", "passed"),
        (f"invalid {invalid} refused by the webhook", "passed"),
        (f"valid {kind} reconciled", "passed"),
        (f"{kind} deleted, children garbage-collected", "passed"),
        ("workloads", "passed"),
    ]
    assert ("dry-run", invalid, NS, "aicr-invalid") in kube.calls
    assert not [o for o in kube.objects if o["metadata"].get("namespace") == NS]
    made = result.evidence[5]
    assert made.answer.endswith(build.children(children(op), kind)), made.answer


def test_params_operator_chooses_among_several() -> None:
    both = ("- name: kuberay-operator\n  namespace: ray-system\n"
            "- name: kubeflow-trainer\n  namespace: kubeflow\n")  # fmt: skip
    kube = Operated(TRAINER, healthy(TRAINER, "kubeflow"))
    kube.fail["dry-run"] = denied(TRAINER, "always must be 1")
    result = run(kube, both, "{operator: trainer}")
    assert result.status == Status.PASSED, result.message
    assert result.evidence[0].answer == "params.operator is trainer"
    first = run(Operated(KUBERAY, healthy(KUBERAY)), both)
    assert first.evidence[0].answer == (
        "the recipe deploys kuberay-operator (also kubeflow-trainer; params.operator chooses "
        "another)"
    )


def test_several_in_the_recipe_the_first_one_up_is_judged() -> None:
    # CNCF asks for at least one: KubeRay first in the recipe but not running, Trainer up.
    both = ("- name: kuberay-operator\n  namespace: ray-system\n"
            "- name: kubeflow-trainer\n  namespace: kubeflow\n")  # fmt: skip
    kube = Operated(TRAINER, healthy(TRAINER, "kubeflow"))
    kube.fail["dry-run"] = denied(TRAINER, "always must be 1")
    result = run(kube, both)
    assert result.status == Status.PASSED, result.message
    assert result.evidence[0].answer == (
        "the recipe deploys kubeflow-trainer (also kuberay-operator; passed over: "
        "kuberay-operator: no Deployment ray-system/kuberay-operator; params.operator chooses "
        "another)")  # fmt: skip


def test_without_one_in_the_recipe_an_installed_operator_is_found() -> None:
    kube = Operated(DYNAMO, healthy(DYNAMO))
    kube.fail["dry-run"] = denied(DYNAMO, "spec.services must have at least one service")
    result = run(kube, "- name: gpu-operator\n  namespace: gpu-operator\n")
    assert result.status == Status.PASSED, result.message
    assert result.evidence[0].answer == (
        "the recipe deploys none of them; the CRD dynamographdeployments.nvidia.com is installed"
    )


def test_no_operator_at_all_fails() -> None:
    result = run(FakeKube(), "- name: gpu-operator\n  namespace: gpu-operator\n")
    assert (result.status, result.message) == (Status.FAILED, (
        "no AI operator found: the recipe deploys none of kuberay-operator, dynamo-platform, "
        "kubeflow-trainer and none of their CRDs is installed"))  # fmt: skip


RAY = "- name: kuberay-operator\n  namespace: ray-system\n"


def test_an_unreachable_webhook_fails_with_the_api_servers_error() -> None:
    kube = Operated(KUBERAY, healthy(KUBERAY))
    kube.fail["dry-run"] = UNREACHABLE
    result = run(kube, RAY)
    assert (result.status, result.message) == (Status.FAILED, (
        "1/4 robust controller steps failed: invalid RayCluster refused by the webhook: "
        f"webhook unreachable: {UNREACHABLE}"))  # fmt: skip
    assert ("valid resource", "informational") in steps(result)
    assert not [c for c in kube.calls if c[0] == "create"]  # nothing was made


def test_a_webhook_failing_open_fails_and_nothing_is_made() -> None:
    objects = healthy(KUBERAY)
    objects[1]["webhooks"][0]["failurePolicy"] = "Ignore"
    kube = Operated(KUBERAY, objects)
    result = run(kube, RAY)
    assert (result.status, result.message) == (Status.FAILED, (
        "1/4 robust controller steps failed: invalid RayCluster refused by the webhook: invalid "
        "RayCluster accepted without webhook review (vraycluster.kb.io has failurePolicy "
        "Ignore)"))  # fmt: skip
    assert not [c for c in kube.calls if c[0] == "create"]


def test_a_controller_that_never_reconciles_fails_at_the_bound_and_cleans_up() -> None:
    kube = Operated(KUBERAY, healthy(KUBERAY), reconciles=False)
    kube.fail["dry-run"] = denied(KUBERAY, "worker group names must be unique")
    result = run(kube, RAY, "{reconcileSeconds: 0.3}")
    assert (result.status, result.message) == (Status.FAILED, (
        f"1/5 robust controller steps failed: valid RayCluster reconciled: RayCluster {NS}/"
        "aicr-valid not reconciled within 0.3s beyond its image pulls (image pulls took 0s, "
        "bound 1200s); last status: no status (never reconciled)"
    ))  # fmt: skip
    assert steps(result)[-1] == ("workloads", "passed")
    assert ("delete", "RayCluster", NS, VALID) in kube.calls
    assert not [o for o in kube.objects if o["metadata"].get("namespace") == NS]


def test_children_left_after_the_delete_fail() -> None:
    kube = Operated(KUBERAY, healthy(KUBERAY))
    kube.fail["dry-run"] = denied(KUBERAY, "worker group names must be unique")
    kube.delete = FakeKube.delete.__get__(kube)  # type: ignore[method-assign]  # no collector
    result = run(kube, RAY, "{gcSeconds: 0.2}")
    assert result.status == Status.FAILED
    assert result.message == (
        "1/6 robust controller steps failed: RayCluster deleted, children garbage-collected: not "
        "garbage-collected within 0.2s: children: Pod aicr-valid-pod (Running) owned by "
        "RayCluster/aicr-valid; Service aicr-valid-service owned by RayCluster/aicr-valid"
    )


def test_an_unavailable_controller_and_missing_crd_are_named() -> None:
    objects = healthy(KUBERAY)
    objects[0]["status"] = {"availableReplicas": 0}
    objects = [o for o in objects if o["metadata"]["name"] != "rayservices.ray.io"]
    kube = Operated(KUBERAY, objects)
    kube.fail["dry-run"] = denied(KUBERAY, "worker group names must be unique")
    result = run(kube, RAY)
    assert result.message == (
        "2/6 robust controller steps failed: controller Deployment ray-system/kuberay-operator: "
        "ray-system/kuberay-operator: 0/1 replicas available | CRDs established: not "
        "established: rayservices.ray.io (absent)"
    )
