"""robust-controller: an AI operator's webhook refuses a bad resource; its controller reconciles.

What it proves, for the operator the recipe deploys (KubeRay, Dynamo or
Kubeflow Trainer; when the recipe has several, the first in recipe order that
is up, or the one ``params.operator`` chooses; with none in the recipe, the
first whose CRDs are installed):
- its controller Deployment is available and its CRDs are Established;
- its validating webhook is registered, and the API server reaches it: a
  server-side dry run (``dryRun=All``, nothing stored) of an object the CRD
  schema accepts but the webhook's own rule forbids is denied, and the denial
  names that webhook (``admission webhook "<name>" denied the request``), which
  tells it apart from schema validation;
- a valid CPU-only custom resource created in the check's workload namespace
  reaches its ready (or complete) state within ``reconcileSeconds`` plus the
  time its pods spent pulling images (the kubelet's events; bounded by
  ``pullSeconds``), and the
  pods (and Services) the operator makes for it, labelled with its name, exist;
- once it is deleted, those children are garbage-collected within ``gcSeconds``.

What it does not: run GPU work through the operator, or judge its other
webhooks and kinds.

How it fails: a missing or unavailable Deployment, a CRD absent or not
Established, the webhook not registered, the webhook unreachable (the API
server's error), the invalid object refused by something else or accepted
without review (a ``failurePolicy: Ignore`` webhook that is down), the valid
resource not ready at the bound (its last status named), no children, or
children left after the delete.
"""

from __future__ import annotations

import time

from aicr.checks import CheckContext
from aicr.checks.conformance.robust_controller import build
from aicr.checks.conformance.robust_controller.operators import (
    BY_KEY,
    INVALID,
    OPERATORS,
    VALID,
    Operator,
    Workload,
    last_status,
)
from aicr.checks.conformance.robust_controller.params import Params as Params
from aicr.checks.probes import Waited
from aicr.checks.workload_images import workload_image
from aicr.ctrf import Status
from aicr.kube import image_pulls
from aicr.kube.rest import KubeApiError
from aicr.result import CheckResult, StepStatus

POLL_SECONDS = 1.0


def _choose(ctx: CheckContext) -> tuple[Operator | None, str]:
    """The operator to judge and why it was chosen."""
    if ctx.params.operator:
        return BY_KEY[ctx.params.operator], f"params.operator is {ctx.params.operator}"
    names = [c.name for c in ctx.recipe.component_refs if c.is_enabled]
    deployed = [o for name in names for o in OPERATORS if o.component == name]
    if len(deployed) > 1:
        # CNCF asks for at least one working operator: take the first in recipe order
        # that is up (controller available, CRDs established, webhook registered), and
        # say why the ones before it were passed over.
        passed_over: list[str] = []
        for op in deployed:
            down = _not_up(ctx, op)
            if down is None:
                others = [o.component for o in deployed if o is not op]
                why = f"the recipe deploys {op.component} (also {', '.join(others)}"
                skipped = "; ".join(passed_over)
                return op, why + (f"; passed over: {skipped}" if skipped else "") + (
                    "; params.operator chooses another)"
                )
            passed_over.append(f"{op.component}: {down}")
    if deployed:
        others = [o.component for o in deployed[1:]]
        also = f" (also {', '.join(others)}; params.operator chooses another)" if others else ""
        return deployed[0], f"the recipe deploys {deployed[0].component}{also}"
    for op in OPERATORS:
        if ctx.kube.get("CustomResourceDefinition", op.crds[0]) is not None:
            return op, f"the recipe deploys none of them; the CRD {op.crds[0]} is installed"
    return None, ""


def _not_up(ctx: CheckContext, op: Operator) -> str | None:
    """Why ``op`` is not up to be judged (read only), or None when it is."""
    ns = _namespace(ctx, op)
    name = ctx.params.deployment or op.deployment
    dep = build.deployment(ctx.kube.get("Deployment", name, ns), f"{ns}/{name}")
    crds = build.crds({n: ctx.kube.get("CustomResourceDefinition", n) for n in op.crds})
    for v in (dep, crds):
        if not v.ok:
            return v.reason
    if build.find_hook(ctx.kube.list("ValidatingWebhookConfiguration"), op.webhook) is None:
        return f"no validating webhook {op.webhook} is registered"
    return None


def _namespace(ctx: CheckContext, op: Operator) -> str:
    if ctx.params.operator_namespace:
        return str(ctx.params.operator_namespace)
    component = ctx.recipe.component(op.component)
    return component.namespace if component and component.namespace else op.namespace


def _workload(ctx: CheckContext, op: Operator) -> Workload:
    """The pinned image (or its params override) and the run's labels."""
    image = workload_image(op.image, check=ctx.name, config=ctx.config)
    return Workload(image=image, labels=ctx.workload_labels(), placement=ctx.workloads)


def _controller(ctx: CheckContext, op: Operator, namespace: str) -> None:
    name = ctx.params.deployment or op.deployment
    with ctx.step(f"controller Deployment {namespace}/{name}") as step:
        step.asked = f"GET Deployment {namespace}/{name}"
        v = build.deployment(ctx.kube.get("Deployment", name, namespace), f"{namespace}/{name}")
        step.answer = v.answer
        (step.passed if v.ok else step.failed)(v.reason)


def _crds(ctx: CheckContext, op: Operator) -> None:
    with ctx.step("CRDs established") as step:
        step.asked = "GET CustomResourceDefinition " + ", ".join(op.crds)
        v = build.crds({n: ctx.kube.get("CustomResourceDefinition", n) for n in op.crds})
        step.answer = v.answer
        (step.passed if v.ok else step.failed)(v.reason)


def _webhook(ctx: CheckContext, op: Operator) -> build.Hook | None:
    with ctx.step(f"webhook {op.webhook} registered") as step:
        step.asked = "LIST ValidatingWebhookConfiguration"
        hook = build.find_hook(ctx.kube.list("ValidatingWebhookConfiguration"), op.webhook)
        if hook is None:
            step.answer = "no such webhook in any configuration"
            step.failed(f"no validating webhook {op.webhook} is registered")
        else:
            step.answer = hook.describe()
            step.passed(f"{op.webhook} is registered")
        return hook
    return None  # the step raised: recorded as other


def _refused(ctx: CheckContext, op: Operator, work: Workload, hook: build.Hook | None) -> bool:
    body = op.invalid(work)
    body["metadata"].update(namespace=ctx.workload_namespace, labels=dict(work.labels))
    kind = body["kind"]
    with ctx.step(f"invalid {kind} refused by the webhook") as step:
        step.asked = (
            f"POST {kind} {ctx.workload_namespace}/{INVALID} with dryRun=All (admission "
            f"only, nothing stored); the CRD schema accepts it, {op.webhook}'s rule "
            f"forbids it: {op.rule}"
        )
        try:
            ctx.kube.create(body, dry_run=True)
            error = None
        except KubeApiError as exc:
            error = str(exc)
        v = build.refusal(op, kind, error, hook)
        step.answer = v.answer
        (step.passed if v.ok else step.failed)(v.reason)
        return v.ok
    return False


def _children(ctx: CheckContext, op: Operator) -> list[build.Obj]:
    return [
        o
        for kind in op.child_kinds
        for o in ctx.kube.list(kind, ctx.workload_namespace, op.child_selector())
    ]


def _reconciled(ctx: CheckContext, op: Operator, work: Workload) -> str | None:
    """Create the valid resource and wait for it and its children; its kind when it got there."""
    objs = op.valid(work)
    kind = str(objs[-1]["kind"])
    bound = float(ctx.params.reconcile_seconds)
    with ctx.step(f"valid {kind} reconciled") as step:
        made = " then ".join(
            f"{o['kind']} {ctx.workload_namespace}/{o['metadata']['name']}" for o in objs
        )
        step.asked = (
            f"created {made} (CPU only, {work.image}); waited up to {bound:g}s for "
            f"{op.ready_means}, then for its {' and '.join(op.child_kinds)}s "
            f"({op.child_selector()})"
        )
        begin = time.monotonic()
        try:
            for o in objs:
                ctx.probes.create(o)
        except KubeApiError as exc:
            step.answer = str(exc)
            step.failed(f"the valid {kind} was refused: {exc}")
            return None
        waited, pulls = _wait_ready(ctx, op, kind, begin)
        last = last_status(waited.objects.get(VALID))
        if not waited.done:
            step.answer = f"after {time.monotonic() - begin:.0f}s: {last}; {pulls}"
            step.failed(
                f"{kind} {ctx.workload_namespace}/{VALID} not reconciled within "
                f"{bound:g}s beyond its image pulls ({pulls}, bound "
                f"{ctx.params.pull_seconds:g}s); last status: {last}"
            )
            return None
        took = time.monotonic() - begin - pulls.seconds
        for child in op.child_kinds:
            left = max(1.0, bound - (time.monotonic() - begin))
            ctx.probes.wait(
                child, lambda o: True, budget=left, selector=op.child_selector(), expect=1
            )
        seen = _children(ctx, op)
        step.answer = (
            f"{last} after {took:.1f}s of reconcile ({pulls}); children: "
            f"{build.children(seen, kind)}"
        )
        missing = [c for c in op.child_kinds if not any(o.get("kind") == c for o in seen)]
        if missing:
            step.failed(
                f"{kind} is ready but the operator made no {' or '.join(missing)} "
                f"({op.child_selector()})"
            )
            return None
        step.passed(f"{kind} reconciled in {took:.1f}s; the operator made {len(seen)} children")
        return kind
    return None


def _pulls(ctx: CheckContext, op: Operator) -> image_pulls.Pulls:
    pods = [
        str(p["metadata"]["name"])
        for p in ctx.kube.list("Pod", ctx.workload_namespace, op.child_selector())
    ]
    return image_pulls.observed(ctx.kube.list("Event", ctx.workload_namespace), pods)


def _wait_ready(
    ctx: CheckContext, op: Operator, kind: str, begin: float
) -> tuple[Waited, image_pulls.Pulls]:
    """Wait for the valid resource: ``reconcileSeconds`` plus the pulls seen, pulls capped.

    The bound is looked at again whenever it runs out: while the children's images
    are still being pulled (or were, within ``pullSeconds``), the wait goes on.
    """
    bound, cap = float(ctx.params.reconcile_seconds), float(ctx.params.pull_seconds)
    budget = bound
    while True:
        waited = ctx.probes.wait(kind, op.ready, budget=budget)
        pulls = _pulls(ctx, op)
        if waited.done:
            return waited, pulls
        allowed = bound + min(pulls.seconds, cap)
        left = allowed - (time.monotonic() - begin)
        if left < POLL_SECONDS:
            return waited, pulls
        budget = left


def _collected(ctx: CheckContext, op: Operator, kind: str) -> None:
    bound = float(ctx.params.gc_seconds)
    with ctx.step(f"{kind} deleted, children garbage-collected") as step:
        before = _children(ctx, op)
        step.asked = (
            f"DELETE {kind} {ctx.workload_namespace}/{VALID} (propagation Background); "
            f"waited up to {bound:g}s until it and its {len(before)} children are gone"
        )
        begin = time.monotonic()
        ctx.kube.delete(kind, VALID, ctx.workload_namespace)
        while True:
            left = _children(ctx, op)
            parent = ctx.kube.get(kind, VALID, ctx.workload_namespace)
            took = time.monotonic() - begin
            if not left and parent is None:
                step.answer = f"{kind} and {len(before)} children gone after {took:.1f}s"
                step.passed(f"{len(before)} children garbage-collected in {took:.1f}s")
                return
            if took >= bound:
                named = build.children(left, kind) if left else "none"
                step.answer = (
                    f"after {bound:g}s: {kind} "
                    f"{'still present' if parent else 'gone'}; children left: {named}"
                )
                step.failed(
                    f"not garbage-collected within {bound:g}s: "
                    + (f"{kind} {VALID}; " if parent else "")
                    + f"children: {named}"
                )
                return
            time.sleep(POLL_SECONDS)


def run(ctx: CheckContext) -> CheckResult:
    """Judge the chosen operator's controller, CRDs and webhook, then reconcile one resource."""
    op, why = _choose(ctx)
    known = ", ".join(o.component for o in OPERATORS)
    if op is None:
        return ctx.failed(
            f"no AI operator found: the recipe deploys none of {known} and none "
            "of their CRDs is installed"
        )
    namespace = _namespace(ctx, op)
    ctx.record(
        "operator",
        f"the recipe's components among {known}; params.operator",
        why,
        f"judging {op.title} in {namespace}",
        StepStatus.INFO,
    )
    work = _workload(ctx, op)
    _controller(ctx, op, namespace)
    _crds(ctx, op)
    hook = _webhook(ctx, op)
    if _refused(ctx, op, work, hook):
        kind = _reconciled(ctx, op, work)
        if kind is not None:
            _collected(ctx, op, kind)
    else:
        ctx.record(
            "valid resource",
            "",
            "not created",
            "not attempted: the webhook did not refuse the invalid resource",
        )
    result = ctx.conclude("robust controller steps")
    if result.status != Status.PASSED:
        return result
    return ctx.passed(
        f"{op.title}: controller available, CRDs established, {op.webhook} refused "
        "the invalid resource, a valid one reconciled and its children were "
        "garbage-collected"
    )
