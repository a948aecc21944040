"""Check params and preflight: what the orchestrator checks and resolves before any Job.

Every check accepts ``CheckParams``; a check declares its own subclass named
``Params`` and may define ``preflight(recipe, data_dir, source)``, both in
``params.py`` of its package and found through ``aicr.catalog.registry`` without
importing the check itself. The run validates every planned
check's params here, so a typo exits 2 naming its file, line and field path.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pydantic import Field, create_model
from pydantic.alias_generators import to_snake

from aicr.catalog import registry
from aicr.catalog.model import CheckSpec, load_catalog
from aicr.document import Document, validate
from aicr.errors import SchemaError
from aicr.yaml_io import LoadedYaml

if TYPE_CHECKING:
    from aicr.recipe.model import Recipe

PreflightFn = Callable[["Recipe", "str | None", str], Any]


def image_param(what: str) -> Any:
    """A check's image-override param: replaces the pinned ``what`` (``images.yaml`` names it).

    The run passes the override as given (``checks.workload_images.resolve``): no mirror rewrite.
    """
    return Field(
        default=None,
        min_length=1,
        description=f"Replaces the pinned {what} (used as given, no mirror rewrite).",
    )


class CheckParams(Document):
    """``spec.validate.checks.<name>.params``: what every check accepts.

    A check declares its own as a subclass named ``Params`` in its ``params.py``;
    the run validates it before any Job, so a typo exits 2 naming its field path.
    """

    aicr_delay_seconds: float | None = Field(
        default=None,
        gt=0,
        description="Wait this long before the check runs (tests and benchmarks only).",
    )

    def workload_pod_security(self) -> str | None:
        """The Pod Security level these params need in the check's workload namespace.

        None keeps the catalog's default (``catalog.model.workload_pod_security``);
        a check whose params ask for more (a capability outside baseline) says so here,
        and the run labels that run-unique namespace alone with it.
        """
        return None


@functools.cache
def params_model(name: str) -> type[CheckParams]:
    """Check ``name``'s params model: its ``Params`` (else ``CheckParams``) and its image params.

    The image-override params are not written in ``Params``: the catalog entry names each
    image with the param that replaces it (``images: {ubuntu: image}``), and this adds one
    ``image_param`` field per param, so the name is declared once.
    """
    spec = load_catalog().get(name)
    declared = (find_params(spec) if spec else None) or CheckParams
    images: dict[str, list[str]] = {}
    for image, param in (spec.images if spec else {}).items():
        if param:
            images.setdefault(param, []).append(image)
    if not images:
        return declared
    fields: Any = {
        to_snake(param): (
            str | None,
            image_param(" and ".join(names) + " image" + "s"[: len(names) - 1]),
        )
        for param, names in images.items()
    }
    return create_model(
        declared.__name__, __base__=declared, __module__=declared.__module__, **fields
    )


def check_params(name: str, params: dict[str, Any], config: LoadedYaml | None) -> CheckParams:
    """Validate a check's params; a SchemaError naming the config's file, line and field path."""
    prefix = ("spec", "validate", "checks", name, "params")
    source = config.source if config else "--config"
    lines = {
        k[len(prefix) :]: v
        for k, v in (config.lines if config else {}).items()
        if k[: len(prefix)] == prefix
    }
    try:
        return validate(params_model(name), LoadedYaml(params, source, lines))
    except SchemaError as exc:
        where = ".".join(prefix)
        raise SchemaError(
            [
                replace(
                    p,
                    field_path=f"{where}.{p.field_path}" if p.field_path else where,
                    line=p.line or (config.line_of(prefix) if config else None),
                )
                for p in exc.problems
            ]
        ) from None


def preflight(name: str, recipe: Recipe, data_dir: str | None, source: str) -> Any:
    """Run check ``name``'s optional ``preflight(recipe, data_dir, source)`` before any Job.

    A check's ``params.py`` may define it to refuse a contradictory request up front
    (raising InputError, exit 2) and to resolve facts the check's pod cannot
    (values files under ``--data``). What it returns (JSON-able, or None) reaches
    the check as ``CheckContext.prepared``.
    """
    spec = load_catalog().get(name)
    fn = find_preflight(spec) if spec else None
    return fn(recipe, data_dir, source) if fn else None


def find_preflight(spec: CheckSpec) -> PreflightFn | None:
    """The check's optional orchestrator-side ``preflight`` function (in its ``params.py``)."""
    fn: PreflightFn | None = getattr(registry.declaration(spec), "preflight", None)
    return fn


def find_params(spec: CheckSpec) -> type[CheckParams] | None:
    """The check's ``Params`` model (in its ``params.py``), when it declares one."""
    model: type[CheckParams] | None = getattr(registry.declaration(spec), "Params", None)
    return model
