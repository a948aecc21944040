"""``aicr completion SHELL``: print the shell completion script."""

from __future__ import annotations

import click
from click.shell_completion import get_completion_class


@click.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> None:
    """Print the completion script for SHELL.

    bash: eval "$(aicr completion bash)"   (in ~/.bashrc)

    zsh:  eval "$(aicr completion zsh)"    (in ~/.zshrc)

    fish: aicr completion fish > ~/.config/fish/completions/aicr.fish
    """
    from aicr.cli.root import cli

    cls = get_completion_class(shell)
    assert cls is not None  # the choice only offers supported shells
    click.echo(cls(cli, {}, "aicr", "_AICR_COMPLETE").source())
