"""Shared options as named decorators, and a command class that parses as AICR's CLI does.

The environment fallback sits on the option so click owns the precedence
(flag > env > default) and ``--help`` documents it. KUBECONFIG is left to the
kubernetes client because it may hold a list of paths.

AICR's flag parser accepts ``--flag=false`` for boolean flags and comma lists
for repeatable ones; ``StrictCommand`` and ``ListOption`` accept the same, so
AICR command lines keep working.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from aicr import defaults
from aicr.errors import FlagConflictError, Problem

F = TypeVar("F", bound=Callable[..., Any])


# Go's strconv.ParseBool spellings, which AICR's ``--flag=value`` accepts.
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


class StrictCommand(click.Command):
    """A command that refuses a single-value option given twice (click keeps the last)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Count single-value options and resolve ``--flag=true|false`` before click parses."""
        args, forced_off = bool_values(self.params, args)
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
        rest = super().parse_args(ctx, args)
        force_off(ctx, forced_off)
        return rest


def bool_values(params: list[click.Parameter], args: list[str]) -> tuple[list[str], set[str]]:
    """``--flag=true`` becomes ``--flag``; ``--flag=false`` is dropped and its name returned."""
    flags = {
        opt: param
        for param in params
        if isinstance(param, click.Option) and param.is_flag and param.is_bool_flag
        for opt in param.opts
        if opt.startswith("--")
    }
    out: list[str] = []
    forced_off: set[str] = set()
    for index, arg in enumerate(args):
        if arg == "--":
            return out + args[index:], forced_off
        name, eq, value = arg.partition("=")
        param = flags.get(name)
        if not eq or param is None:
            out.append(arg)
        elif value in _TRUE:
            out.append(name)
        elif value in _FALSE and param.name:
            forced_off.add(param.name)
        else:
            raise FlagConflictError(
                Problem(f"{name}={value}: not a boolean", hint="expected true or false")
            )
    return out, forced_off


def force_off(ctx: click.Context, names: set[str]) -> None:
    """Apply ``--flag=false`` after parsing, so it also beats the option's env var."""
    for name in names:
        ctx.params[name] = False
        ctx.set_parameter_source(name, click.core.ParameterSource.COMMANDLINE)


class ListOption(click.Option):
    """A repeatable option that also splits each value on commas, as AICR's list flags do."""

    def type_cast_value(self, ctx: click.Context, value: Any) -> Any:
        """Split ``a,b`` into ``a`` and ``b`` before the type checks each one."""
        if isinstance(value, (list, tuple)):
            value = [part for item in value for part in str(item).split(",") if part]
        return super().type_cast_value(ctx, value)


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
aks_gpu_pools = _option(
    "--aks-gpu-pools",
    metavar="POOLS.JSON",
    default=None,
    help="`az aks nodepool list -o json` output: records K8s.aks-gpu-pools.gpu-driver.",
)
FORMATS = ("json", "yaml", "table")


def output_format(default: str, help: str) -> Callable[[F], F]:
    """``-t/--format``: AICR's serializer formats; each command says what it writes."""
    return _option(
        "-t",
        "--format",
        "output_format",
        type=click.Choice(FORMATS),
        default=default,
        show_default=True,
        help=help,
    )


def recipe(help: str, **attrs: Any) -> Callable[[F], F]:
    """``-r/--recipe`` (``AICR_RECIPE``): the recipe a run plans from."""
    return _option("-r", "--recipe", envvar="AICR_RECIPE", help=help, **attrs)


def config(help: str) -> Callable[[F], F]:
    """``--config`` (``AICR_CONFIG``): the validate config a run applies."""
    return _option("--config", envvar="AICR_CONFIG", help=help)


def output(help: str) -> Callable[[F], F]:
    """``-o/--output``: a file, ``-`` (stdout, the default) or ``cm://namespace/name``."""
    return _option("-o", "--output", metavar="FILE|-|cm://NS/NAME", help=help)


def image(envvar: str, help: str) -> Callable[[F], F]:
    """``--image``: the image the command's own pods run; each command names its variable."""
    return _option("--image", envvar=envvar, help=help)


def image_pull_secret(help: str) -> Callable[[F], F]:
    """``--image-pull-secret``: repeatable or a comma list, as AICR takes it."""
    return _option("--image-pull-secret", cls=ListOption, multiple=True, metavar="NAME", help=help)


def job_name(help: str) -> Callable[[F], F]:
    """``--job-name``: a prefix of the object names; names stay run-unique."""
    return _option("--job-name", metavar="PREFIX", help=help)


def node_selector(help: str, flag: str = "--node-selector") -> Callable[[F], F]:
    """A repeatable ``KEY=VALUE`` node selector."""
    return _option(flag, multiple=True, metavar="KEY=VALUE", help=help)


def toleration(help: str, flag: str = "--toleration") -> Callable[[F], F]:
    """A repeatable ``KEY[=VALUE]:EFFECT`` toleration (or a comma list)."""
    return _option(flag, cls=ListOption, multiple=True, metavar="KEY[=VALUE]:EFFECT", help=help)


def no_cleanup(help: str) -> Callable[[F], F]:
    """``--no-cleanup``: keep what the command created (``aicr cleanup`` removes it later)."""
    return _option("--no-cleanup", is_flag=True, help=help)


def timeout(help: str, **attrs: Any) -> Callable[[F], F]:
    """``--timeout DURATION`` (Go durations such as ``5m0s``); each command says what it bounds."""
    return _option("--timeout", metavar="DURATION", help=help, **attrs)


def require_gpu(help: str) -> Callable[[F], F]:
    """``--require-gpu`` with AICR's environment variable."""
    return _option("--require-gpu", is_flag=True, envvar="AICR_REQUIRE_GPU", help=help)


def refused(*decls: str, message: str, takes_value: bool = True) -> Callable[[F], F]:
    """A hidden AICR flag that is refused (exit 2) with one line saying why and what instead."""

    def refuse(ctx: click.Context, param: click.Parameter, value: Any) -> None:
        if value not in (None, (), False):
            raise FlagConflictError(Problem(f"{max(param.opts, key=len)}: {message}"))

    kind: dict[str, Any] = {"multiple": True} if takes_value else {"is_flag": True}
    return click.option(*decls, hidden=True, expose_value=False, callback=refuse, **kind)


log_json = _option(
    "--log-json",
    envvar="AICR_LOG_JSON",
    is_flag=True,
    help="Progress as one JSON object per line on stderr (for pipelines).",
)


def _setup_logging(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    """--debug turns on the library's debug log on stderr (and tracebacks of internal errors)."""
    if value:
        import logging  # only here: --help and the checks' start-up never need it

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
