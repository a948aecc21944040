"""Which component advertises whole GPUs, as the recipe's values say: device plugin or DRA.

Two charts can hand out whole GPUs: the GPU Operator through its device plugin
(``devicePlugin.enabled``, chart default true) and the NVIDIA DRA driver through
ResourceSlices (``resources.gpus.enabled``, chart default true, which the chart
only renders together with ``gpuResourcesEnabledOverride: true``, default false).
Each value is taken from the component's ``overrides`` first, then from its
``valuesFile`` under ``--data DIR``, then from the chart default. Exactly one
advertiser must result; anything else is an invalid request (exit 2), decided
before any Job runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from aicr import sources
from aicr.errors import InputError, InvalidRequestError, Problem
from aicr.limits import Kind
from aicr.recipe.model import ComponentRef, Recipe
from aicr.yaml_io import parse

GPU_OPERATOR = "gpu-operator"
DRA_DRIVER = "nvidia-dra-driver-gpu"
DEVICE_PLUGIN_KEY = "devicePlugin.enabled"
DRA_GPUS_KEY = "resources.gpus.enabled"
DRA_OVERRIDE_KEY = "gpuResourcesEnabledOverride"
CHART_DEFAULTS = {DEVICE_PLUGIN_KEY: True, DRA_GPUS_KEY: True, DRA_OVERRIDE_KEY: False}


class AllocationMode(StrEnum):
    """How whole GPUs reach pods."""

    DEVICE_PLUGIN = "device-plugin"
    DRA = "dra"


@dataclass(frozen=True)
class Setting:
    """One resolved value and where it came from."""

    component: str
    key: str
    value: bool | str
    source: str  # "recipe overrides", "values file <path>", "chart default", "component ..."

    def __str__(self) -> str:
        shown = str(self.value).lower() if isinstance(self.value, bool) else self.value
        return f"{self.component} {self.key}={shown} ({self.source})"


@dataclass(frozen=True)
class Resolution:
    """The resolved mode, every value it rests on, and what could not be consulted."""

    mode: AllocationMode
    settings: tuple[Setting, ...]
    notes: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        """The form carried to the check's pod in the run inputs."""
        return {
            "mode": self.mode.value,
            "settings": [s.__dict__ for s in self.settings],
            "notes": list(self.notes),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Resolution:
        """Inverse of ``as_json``."""
        return cls(
            AllocationMode(data["mode"]),
            tuple(Setting(**s) for s in data.get("settings") or []),
            tuple(data.get("notes") or []),
        )


def _lookup(values: Any, key: str) -> tuple[bool, Any]:
    """``(found, value)`` for a dotted key in nested maps (a literal dotted key also counts)."""
    if not isinstance(values, dict):
        return False, None
    if key in values:
        return True, values[key]
    head, dot, rest = key.partition(".")
    if dot and isinstance(values.get(head), dict):
        return _lookup(values[head], rest)
    return False, None


class ValuesReader:
    """Reads the values of one recipe, remembering which values files it opened."""

    def __init__(self, recipe: Recipe, data_dir: str | None, source: str) -> None:
        self.recipe = recipe
        self.data_dir = Path(data_dir) if data_dir else None
        self.source = source
        self.notes: list[str] = []
        self._files: dict[str, Any] = {}

    def _index(self, component: ComponentRef) -> int:
        return self.recipe.component_refs.index(component)

    def _values_file(self, component: ComponentRef) -> tuple[str, Any] | None:
        if not component.values_file:
            return None
        if self.data_dir is None:
            note = (
                f"no --data: {component.name} valuesFile {component.values_file} not read; "
                "resolved from recipe overrides and chart defaults only"
            )
            if note not in self.notes:
                self.notes.append(note)
            return None
        path = self.data_dir / component.values_file
        if str(path) not in self._files:
            if not path.exists():
                raise InvalidRequestError(
                    Problem(
                        f"values file {component.values_file} is not in --data "
                        f"{self.data_dir} (No such file or directory); it is needed to resolve the "
                        "whole-GPU allocation mode",
                        source=self.source,
                        field_path=f"componentRefs[{self._index(component)}].valuesFile",
                    )
                )
            text = sources.read(str(path), kind=Kind.VALUES)
            self._files[str(path)] = parse(text, str(path)).data or {}
        return str(path), self._files[str(path)]

    def value(
        self, component: ComponentRef, key: str, default: bool | str | None = None
    ) -> Setting:
        """The effective ``key`` of ``component``: overrides, values file, chart default.

        The value must have the default's type (``CHART_DEFAULTS[key]`` unless given).
        """
        want = CHART_DEFAULTS[key] if default is None else default
        where = f"componentRefs[{self._index(component)}]"
        found, raw = _lookup(component.overrides or {}, key)
        origin, field = "recipe overrides", f"{where}.overrides.{key}"
        src = self.source
        if not found:
            loaded = self._values_file(component)
            if loaded is not None:
                found, raw = _lookup(loaded[1], key)
                origin, field, src = f"values file {component.values_file}", key, loaded[0]
        if not found:
            return Setting(component.name, key, want, "chart default")
        if isinstance(want, bool) and not isinstance(raw, bool):
            raise InvalidRequestError(
                Problem(f"{key} must be true or false, got {raw!r}", source=src, field_path=field)
            )
        if isinstance(want, str) and (not isinstance(raw, str) or not raw):
            raise InvalidRequestError(
                Problem(
                    f"{key} must be a non-empty string, got {raw!r}", source=src, field_path=field
                )
            )
        return Setting(component.name, key, raw, origin)


def _absent(recipe: Recipe, name: str, key: str) -> Setting:
    component = recipe.component(name)
    why = "component not in the recipe" if component is None else "component disabled"
    return Setting(name, key, False, why)


def resolve_mode(recipe: Recipe, data_dir: str | None, source: str = "recipe") -> Resolution:
    """The recipe's whole-GPU allocation mode; raises InvalidRequestError (exit 2) if ambiguous."""
    r = ValuesReader(recipe, data_dir, source)
    operator = recipe.component(GPU_OPERATOR)
    dra = recipe.component(DRA_DRIVER)
    plugin = (
        r.value(operator, DEVICE_PLUGIN_KEY)
        if operator and operator.is_enabled
        else _absent(recipe, GPU_OPERATOR, DEVICE_PLUGIN_KEY)
    )
    if dra and dra.is_enabled:
        gpus, override = r.value(dra, DRA_GPUS_KEY), r.value(dra, DRA_OVERRIDE_KEY)
    else:
        gpus = _absent(recipe, DRA_DRIVER, DRA_GPUS_KEY)
        override = _absent(recipe, DRA_DRIVER, DRA_OVERRIDE_KEY)
    settings = (plugin, gpus, override)
    values = "; ".join(str(s) for s in settings)
    if gpus.value != override.value:
        raise InvalidRequestError(
            Problem(
                f"{DRA_DRIVER} is partially flipped: {gpus} but {override}",
                source=source,
                field_path=f"componentRefs[{r._index(dra)}].overrides" if dra else None,
                hint=f"DRA needs both {DRA_GPUS_KEY} and {DRA_OVERRIDE_KEY} true; the device "
                f"plugin needs {DRA_GPUS_KEY} false",
            )
        )
    dra_on = gpus.value and override.value
    if plugin.value and dra_on:
        raise InvalidRequestError(
            Problem(
                f"whole GPUs are advertised twice, by the device plugin and by DRA: {values}",
                source=source,
                hint=f"exactly one advertiser: set {GPU_OPERATOR} {DEVICE_PLUGIN_KEY} false, "
                f"or {DRA_DRIVER} {DRA_GPUS_KEY} false",
            )
        )
    if not plugin.value and not dra_on:
        raise InvalidRequestError(
            Problem(
                f"no component advertises whole GPUs: {values}",
                source=source,
                hint=f"enable {GPU_OPERATOR} {DEVICE_PLUGIN_KEY}, or {DRA_DRIVER} "
                f"{DRA_GPUS_KEY} with {DRA_OVERRIDE_KEY}",
            )
        )
    mode = AllocationMode.DRA if dra_on else AllocationMode.DEVICE_PLUGIN
    return Resolution(mode, settings, tuple(r.notes))


def preflight_mode(recipe: Recipe, data_dir: str | None, source: str) -> dict[str, Any]:
    """A check's preflight: the whole-GPU mode, resolved in the orchestrator (exit 2 if unclear)."""
    return {"mode": resolve_mode(recipe, data_dir, source).mode.value}


def prepared_mode(prepared: Any, recipe: Recipe) -> AllocationMode:
    """The mode ``preflight_mode`` resolved for the check.

    Without it (no preflight ran): the recipe's overrides and chart defaults,
    and the device plugin when even those say nothing usable.
    """
    if prepared:
        return AllocationMode(prepared["mode"])
    try:
        return resolve_mode(recipe, None).mode
    except InputError:
        return AllocationMode.DEVICE_PLUGIN
