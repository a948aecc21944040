"""The root ``aicr`` click group: its global options and its subcommands, imported on use.

``aicr.cli.main`` runs it (and prints its errors); ``aicr --help`` is answered there from
``root_help`` without importing click.
"""

from __future__ import annotations

import importlib

import click

from aicr import version
from aicr.cli import options

# Subcommands are imported on first use so `aicr --help` stays fast.
_COMMANDS = {
    "validate": ("aicr.cli.validate", "validate"),
    "snapshot": ("aicr.cli.snapshot", "snapshot"),
    "check": ("aicr.cli.check", "check"),
    "evidence": ("aicr.cli.evidence", "evidence"),
    "cleanup": ("aicr.cli.cleanup", "cleanup"),
    "images": ("aicr.cli.images", "images"),
    "completion": ("aicr.cli.completion", "completion"),
    "attestation": ("aicr.cli.attestation", "attestation"),
}
_SUMMARIES = {
    "validate": "Validate a cluster against a recipe and write a CTRF report.",
    "snapshot": "Capture what the cluster is (AICR Snapshot format) from the Kubernetes API.",
    "check": "List the check catalog, or run one check (inside its Job).",
    "evidence": "Render and verify CNCF AI Conformance submissions.",
    "cleanup": "Remove what earlier runs left in the cluster.",
    "images": "List every image a run pulls, for mirrors of air-gapped clusters.",
    "completion": "Print the shell completion script (bash, zsh, fish).",
    "attestation": "Make the key pair that signs run attestations.",
}


class LazyGroup(click.Group):
    """A group that imports a subcommand's module only when it is invoked."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Accept AICR's ``--debug=false`` spelling for the root flags too."""
        args, forced_off = options.bool_values(self.params, args)
        rest = super().parse_args(ctx, args)
        options.force_off(ctx, forced_off)
        return rest

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every subcommand name, without importing any."""
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """Import and return one subcommand."""
        if cmd_name not in _COMMANDS:
            return None
        module_name, attr = _COMMANDS[cmd_name]
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError:
            return None
        command: click.Command = getattr(module, attr)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List subcommands from static summaries so --help imports nothing."""
        rows = [(name, _SUMMARIES[name]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(f"aicr, version {version()}")
        ctx.exit()


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and exit.",
)
@click.option(
    "--limit",
    "limit",
    multiple=True,
    metavar="NAME=VALUE",
    help="Change an input bound (e.g. recipe=32MiB, fetch-deadline=60s, depth=200); "
    "every bound and its AICR_LIMIT_* variable: docs/cli.md#input-bounds.",
)
@options.debug
@options.log_json
@click.pass_context
def cli(ctx: click.Context, limit: tuple[str, ...], debug: bool, log_json: bool) -> None:
    """Validate GPU/AI Kubernetes clusters and produce CNCF AI Conformance evidence.

    Exit codes: 0 success, 2 invalid input, 8 validation failed, 130 interrupted.
    """
    from aicr import limits

    limits.override(limit)
    # AICR keeps these two on its root command; given there, they apply to the subcommand.
    given = {name: True for name, on in (("debug", debug), ("log_json", log_json)) if on}
    if given:
        ctx.default_map = {name: dict(given) for name in _COMMANDS}
