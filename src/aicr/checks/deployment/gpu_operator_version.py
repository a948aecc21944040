"""gpu-operator-version: the deployed GPU Operator's version satisfies the recipe's constraint.

The constraint is ``Deployment.gpu-operator.version`` in the recipe's
``validation.deployment.constraints``. The version is read from the operator
Deployment: its ``app.kubernetes.io/version`` label, else the version in its
``helm.sh/chart`` label, else the tag of its operator image. A version that
cannot be found or compared fails; only a recipe without the constraint skips.
"""

from __future__ import annotations

from aicr.checks import CheckContext
from aicr.constraints import compare, parse_expression, parse_version, render_reading
from aicr.kube.dicts import KubeReader, Obj
from aicr.phases import Phase
from aicr.recipe.model import Constraint, Recipe
from aicr.result import CheckResult, StepStatus

CONSTRAINT = "Deployment.gpu-operator.version"
COMPONENT = "gpu-operator"
DEFAULT_NAMESPACE = "gpu-operator"
OPERATOR_NAME = "gpu-operator"  # the chart's Deployment and container name
VERSION_LABEL = "app.kubernetes.io/version"
CHART_LABEL = "helm.sh/chart"


def constraint(recipe: Recipe) -> Constraint | None:
    """The recipe's ``Deployment.gpu-operator.version`` constraint, if any."""
    section = recipe.validation.phase(Phase.DEPLOYMENT) if recipe.validation else None
    return next(
        (c for c in (section.constraints if section else None) or [] if c.name == CONSTRAINT), None
    )


def image_tag(image: str) -> str | None:
    """``nvcr.io/nvidia/gpu-operator:v25.10.1`` -> ``v25.10.1``; digest-only -> None."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else None


def deployed_version(dep: Obj) -> tuple[str, str] | None:
    """``(version, where it was read)`` from the operator Deployment, or None."""
    labels = (dep.get("metadata") or {}).get("labels") or {}
    if parse_version(labels.get(VERSION_LABEL, "")):
        return labels[VERSION_LABEL], f"label {VERSION_LABEL}"
    chart = labels.get(CHART_LABEL, "")
    if chart.startswith(f"{OPERATOR_NAME}-") and parse_version(chart[len(OPERATOR_NAME) + 1 :]):
        return chart[len(OPERATOR_NAME) + 1 :], f"label {CHART_LABEL}"
    containers = (((dep.get("spec") or {}).get("template") or {}).get("spec") or {}).get(
        "containers"
    ) or []
    ordered = sorted(containers, key=lambda c: c.get("name") != OPERATOR_NAME)
    for c in ordered:
        tag = image_tag(c.get("image", ""))
        if tag and parse_version(tag):
            return tag, f"image tag of container {c.get('name')} ({c.get('image')})"
    return None


def find_operator(kube: KubeReader, ns: str) -> Obj | None:
    """The operator Deployment: by its chart name, else the one labelled as the operator."""
    dep = kube.get("Deployment", OPERATOR_NAME, ns)
    if dep is not None:
        return dep
    for selector in ("app.kubernetes.io/component=gpu-operator", "app=gpu-operator"):
        found = kube.list("Deployment", ns, selector)
        if found:
            return found[0]
    return None


def run(ctx: CheckContext) -> CheckResult:
    """Read the operator's version and compare it with the constraint."""
    want = constraint(ctx.recipe)
    if want is None:
        return ctx.skipped(f"not applicable: no {CONSTRAINT} constraint")
    expr_text = render_reading(want.value)
    component = ctx.recipe.component(COMPONENT)
    ns = (component.namespace if component else None) or DEFAULT_NAMESPACE
    dep = find_operator(ctx.kube, ns)
    asked = f"Deployment {ns}/{OPERATOR_NAME} (or labelled gpu-operator): version"
    if dep is None:
        ctx.record("operator", asked, "not found", "failed", StepStatus.FAILED)
        return ctx.failed(f"no GPU Operator Deployment found in namespace {ns}")
    name = dep["metadata"]["name"]
    found = deployed_version(dep)
    if found is None:
        ctx.record(
            "operator",
            asked,
            f"Deployment {ns}/{name}: no version label or tag",
            "failed",
            StepStatus.FAILED,
        )
        return ctx.failed(
            f"cannot tell the version of Deployment {ns}/{name}: no {VERSION_LABEL} or "
            f"{CHART_LABEL} label and no versioned image tag"
        )
    version, where = found
    try:
        ok = compare(version, parse_expression(expr_text))
    except ValueError as exc:
        ctx.record(
            "operator", asked, f"{version} from {where}", f"failed: {exc}", StepStatus.FAILED
        )
        return ctx.failed(f"{CONSTRAINT} {expr_text}: {exc}")
    verdict = "satisfies" if ok else "does not satisfy"
    ctx.record(
        "operator",
        asked,
        f"{version} from {where}",
        f"{version} {verdict} {expr_text}",
        StepStatus.PASSED if ok else StepStatus.FAILED,
    )
    message = f"GPU Operator {version} ({where} of {ns}/{name}) {verdict} {expr_text}"
    return ctx.passed(message) if ok else ctx.failed(message)
