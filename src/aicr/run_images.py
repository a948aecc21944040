"""Every image a run pulls, for mirrors of air-gapped clusters (``aicr images list``).

The same functions the run uses decide each reference: the catalog's validator
image pinned to this version and the planned checks' workload images (their
catalog entries name them, ``aicr/checks/images.yaml`` pins them), each after the
registry rewrite.
"""

from __future__ import annotations

from collections.abc import Iterable

from aicr.catalog import load_catalog
from aicr.checks import workload_images
from aicr.config import EMPTY_CONFIG, ValidateConfig, load_config
from aicr.kube.target import KubeTarget
from aicr.plan import build, resolve_phases
from aicr.recipe.load import load_recipe_with_lines


def planned_checks(
    recipe_ref: str | None, phases: Iterable[str], config: ValidateConfig, kube: KubeTarget
) -> list[str]:
    """The checks a run would start: the recipe's plan, or every check without a recipe."""
    catalog = load_catalog()
    if recipe_ref is None:
        wanted = resolve_phases(phases)
        return [c.name for c in catalog.ordered if c.phase in wanted]
    recipe, loaded = load_recipe_with_lines(recipe_ref, kube)
    plan = build(
        recipe,
        catalog,
        phases=resolve_phases(phases),
        config=config,
        source=recipe_ref,
        line_of=loaded.line_of,
    )
    return [c.name for c in plan.checks if c.skip_reason is None]


def run_images(
    recipe_ref: str | None = None,
    config_ref: str | None = None,
    *,
    phases: Iterable[str] = (),
    kube: KubeTarget | None = None,
) -> list[str]:
    """Validator image first, then each planned check's workload images; no repeats."""
    kube = kube or KubeTarget()
    config = load_config(config_ref, kube) if config_ref else EMPTY_CONFIG
    checks = planned_checks(recipe_ref, phases, config, kube)
    catalog = load_catalog()
    refs = [workload_images.on_registry(catalog.image_ref, workload_images.registry(config))]
    for image in workload_images.load_images().used_by(checks, catalog):
        refs += [
            workload_images.resolve(image, c, config)
            for c in catalog.image_users(image.name)
            if c in checks
        ]
    return list(dict.fromkeys(refs))
