"""Shared options as named decorators, and a command class that refuses repeated flags.

The environment fallback sits on the option so click owns the precedence
(flag > env > default) and ``--help`` documents it. KUBECONFIG is left to the
kubernetes client because it may hold a list of paths.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from aicr import defaults
from aicr.errors import FlagConflictError, Problem

F = TypeVar("F", bound=Callable[..., Any])


class StrictCommand(click.Command):
    """A command that refuses a single-value option given twice (click keeps the last)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Count single-value option occurrences before click parses them."""
        single: dict[str, str] = {}
        for param in self.params:
            if isinstance(param, click.Option) and not param.multiple and not param.count:
                longest = max(param.opts, key=len)
                for opt in [*param.opts, *param.secondary_opts]:
                    single[opt] = longest
        seen: dict[str, int] = {}
        for arg in args:
            if arg == "--":
                break
            name = arg.split("=", 1)[0] if arg.startswith("--") else arg
            if name in single:
                seen[single[name]] = seen.get(single[name], 0) + 1
        repeated = sorted(n for n, count in seen.items() if count > 1)
        if repeated:
            raise FlagConflictError(
                [Problem(f"{n} given more than once", hint="it takes one value") for n in repeated]
            )
        return super().parse_args(ctx, args)


def _option(*decls: str, **attrs: Any) -> Callable[[F], F]:
    return click.option(*decls, show_envvar="envvar" in attrs, **attrs)


kubeconfig = _option(
    "-k",
    "--kubeconfig",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster).",
)
context = _option(
    "--context",
    envvar="AICR_CONTEXT",
    default=None,
    help="Kubeconfig context to use.",
)
namespace = _option(
    "-n",
    "--namespace",
    envvar="AICR_NAMESPACE",
    default=defaults.NAMESPACE,
    show_default=True,
    help="Namespace for the run's Jobs, ConfigMaps and ServiceAccounts.",
)
log_json = _option(
    "--log-json",
    envvar="AICR_LOG_JSON",
    is_flag=True,
    help="Progress as one JSON object per line on stderr (for pipelines).",
)


def _setup_logging(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    """--debug turns on the library's debug log on stderr (and tracebacks of internal errors)."""
    if value:
        logging.basicConfig(
            level=logging.WARNING,
            stream=sys.stderr,
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )
        logging.getLogger("aicr").setLevel(logging.DEBUG)
    return value


debug = _option(
    "--debug",
    envvar="AICR_DEBUG",
    is_flag=True,
    callback=_setup_logging,
    expose_value=True,
    help="Debug log and internal-error traces on stderr.",
)
