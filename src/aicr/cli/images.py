"""``aicr images``: what a run pulls, so a mirror can hold it before an air-gapped run."""

from __future__ import annotations

import click

from aicr.cli import options
from aicr.kube.target import KubeTarget
from aicr.phases import PHASE_ORDER

PHASES = (*(p.value for p in PHASE_ORDER), "all")


@click.group()
def images() -> None:
    """List the images a run pulls (for mirrors)."""


@images.command("list", cls=options.StrictCommand)
@options.recipe("Recipe: only its planned checks' images. Default: every check's.")
@options.config("Validate config: its spec.validate.images.registry and check params apply.")
@click.option(
    "--phase",
    multiple=True,
    type=click.Choice(PHASES),
    help="Phase the run would run; repeatable. Default: all.",
)
@options.kubeconfig
@options.context
def list_images(
    recipe: str | None,
    config: str | None,
    phase: tuple[str, ...],
    kubeconfig: str | None,
    context: str | None,
) -> None:
    """Print every image a run would pull, one per line, after the registry rewrite.

    The validator image at this version comes first, then the workload images
    of the planned checks. $AICR_VALIDATOR_IMAGE_REGISTRY (else the config's
    spec.validate.images.registry) replaces each registry host and first path
    segment, as AICR does.
    """
    from aicr.run_images import run_images

    kube = KubeTarget(kubeconfig, context)
    for ref in run_images(recipe, config, phases=phase, kube=kube):
        click.echo(ref)
