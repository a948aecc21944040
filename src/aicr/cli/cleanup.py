"""``aicr cleanup``: remove what earlier runs left in the cluster (e.g. after --no-cleanup)."""

from __future__ import annotations

import click

from aicr.cli import options
from aicr.errors import FlagConflictError


@click.command("cleanup", cls=options.StrictCommand)
@click.option("--run-id", default=None, help="Remove the objects of this run.")
@click.option("--all", "all_runs", is_flag=True, help="Remove the objects of every aicr run.")
@options.kubeconfig
@options.context
@click.option(
    "--timeout",
    default=120.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds to wait for the deletions to finish.",
)
def cleanup(
    run_id: str | None,
    all_runs: bool,
    kubeconfig: str | None,
    context: str | None,
    timeout: float,
) -> int:
    """Delete every object labelled with a run id (or of every run), wait until gone.

    Exits 0 when nothing remains, 8 listing whatever is left otherwise.
    """
    from aicr.kube import names
    from aicr.kube.target import KubeTarget
    from aicr.runner.cleanup import cleanup as remove

    if bool(run_id) == all_runs:
        raise FlagConflictError("give exactly one of --run-id ID and --all")
    if run_id and not names.is_run_id(run_id):
        raise FlagConflictError(
            f"--run-id {run_id!r}: expected r followed by 8 hex digits, "
            "optionally after the run's --job-name prefix and a dash"
        )
    left = remove(KubeTarget(kubeconfig, context), run_id, all_runs, timeout)
    what = f"run {run_id}" if run_id else "every aicr run"
    if left:
        click.echo(f"cleanup of {what} left {len(left)} objects:", err=True)
        for line in left:
            click.echo(f"  {line}", err=True)
        return 8
    click.echo(f"cleanup of {what}: nothing remains", err=True)
    return 0
