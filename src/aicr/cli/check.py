"""``aicr check``: list the catalog; ``run`` is what a check's Job container executes."""

from __future__ import annotations

import json
from typing import Any

import click

from aicr.catalog import load_catalog


@click.group()
def check() -> None:
    """List the check catalog, or run one check (inside its Job)."""


@check.command("list")
@click.option(
    "--output",
    "output_format",
    type=click.Choice(["table", "plain", "json"]),
    default=None,
    help="Default: a table on a terminal, plain lines when piped.",
)
def list_checks(output_format: str | None) -> None:
    """Print every check: name, phase, CNCF requirements, timeout (table, JSON: GPUs reserved)."""
    from aicr.plan import PlannedCheck  # only here: a check pod's `check run` plans nothing

    catalog = load_catalog()
    rows: list[dict[str, Any]] = [
        {
            "name": c.name,
            "phase": c.phase.value,
            "requirements": list(c.requirements),
            "timeoutSeconds": int(c.timeout.total_seconds()),
            "gpus": c.gpus.model_dump(by_alias=True, exclude_defaults=True) if c.gpus else None,
            "exclusiveGpus": bool(c.gpus and c.gpus.all),
            # what a run reserves with the check's default params (a config may change a countParam)
            "reserves": PlannedCheck(c, c.timeout).reserves,
            "queriesPrometheus": c.queries_prometheus,
            "description": c.description,
        }
        for c in catalog.ordered
    ]
    if output_format == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    from rich.console import Console

    console = Console()
    if output_format == "table" or (output_format is None and console.is_terminal):
        from rich.table import Table

        table = Table()
        for column in ("check", "phase", "requirements", "timeout", "reserves", "description"):
            table.add_column(column, overflow="fold")
        for row in rows:
            table.add_row(
                row["name"],
                row["phase"],
                ", ".join(row["requirements"]) or "-",
                f"{row['timeoutSeconds']}s",
                row["reserves"] or "-",
                row["description"],
            )
        console.print(table)
        return
    for row in rows:
        reqs = ",".join(row["requirements"]) or "-"
        click.echo(f"{row['name']}\t{row['phase']}\t{reqs}\t{row['timeoutSeconds']}s")


try:  # the in-Job entrypoint lives beside the check framework
    from aicr.cli.check_run import run as _run

    check.add_command(_run)
except ImportError:  # pragma: no cover - only while the framework is absent
    pass
