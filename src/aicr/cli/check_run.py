"""``aicr check run NAME``: the command a check's Job container runs."""

from __future__ import annotations

from pathlib import Path

import click

from aicr import defaults as d


@click.command("run")
@click.argument("name")
@click.option(
    "--run-dir",
    envvar=d.RUN_DIR_ENV,
    show_envvar=True,
    default=d.RUN_DIR,
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder holding recipe.yaml, config.yaml, run.json and snapshot.yaml.",
)
@click.option(
    "--result-configmap",
    envvar=d.RESULT_CONFIGMAP_ENV,
    show_envvar=True,
    default=None,
    help="ConfigMap (in the run namespace) to write the result into; unset: print only.",
)
def run(name: str, run_dir: Path, result_configmap: str | None) -> int:
    """Run check NAME and hand back its result (exit 0 passed, 1 failed, 2 skipped, 3 other)."""
    from aicr.catalog import load_catalog
    from aicr.checks.entrypoint import default_termination_log, execute

    catalog = load_catalog()
    if result_configmap is None and catalog.get(name) is None:
        from aicr.errors import UnknownCheckError
        from aicr.plan import unknown_check

        # Typed by a person: bad input. Inside a Job (a result ConfigMap to fill) the
        # orchestrator gets an `other` result instead, whose exit code cannot read as skipped.
        raise UnknownCheckError(unknown_check(name, catalog, None, "NAME"))
    return execute(
        name,
        run_dir,
        result_configmap=result_configmap,
        termination_log=default_termination_log(),
    )
