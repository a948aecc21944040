"""Turns a recipe's validation section into an ordered phase -> check plan.

Phases always run deployment -> performance -> conformance. Unknown check
names, checks listed under the wrong phase and duplicates are input errors, so
a typo never silently drops a check.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import TYPE_CHECKING

from aicr import durations
from aicr.catalog import Catalog, CheckSpec
from aicr.catalog.model import GpuNeed
from aicr.config import ValidateConfig
from aicr.errors import InputError, Problem, SchemaError, UnknownCheckError
from aicr.phases import PHASE_ORDER, Phase
from aicr.recipe.model import Recipe
from aicr.yaml_io import LoadedYaml, PathKey

if TYPE_CHECKING:
    from aicr.catalog.params import CheckParams


@dataclass(frozen=True)
class HostPath:
    """A host file or folder a pod reads through a read-only hostPath mount."""

    path: str
    folder: bool = False  # hostPath type Directory (else File): absent fails the pod's start


@dataclass(frozen=True)
class PlannedCheck:
    """A check as it will run: its catalog entry, its effective timeout, its skip reason.

    ``node`` and ``host_paths`` are set only for the snapshot's node agents: the
    node the pod must run on, and the host paths it reads. ``params`` are the check's
    effective params (the config's, validated, defaults filled in) and ``need`` the
    catalog's ``gpus`` counted with them; ``build`` sets both for every check that runs.
    """

    spec: CheckSpec
    timeout: timedelta
    skip_reason: str | None = None
    node: str | None = None
    host_paths: tuple[HostPath, ...] = ()
    need: GpuNeed | None = None
    params: CheckParams | None = field(default=None, compare=False)

    @property
    def name(self) -> str:
        """The check's catalog name."""
        return self.spec.name

    @property
    def phase(self) -> Phase:
        """The phase the check belongs to."""
        return self.spec.phase

    @property
    def gpus(self) -> GpuNeed | None:
        """The GPUs the run reserves for the check before it starts, if any.

        Never a ``countParam`` form: a check planned without its params (``need``
        unset) is counted with the params' defaults.
        """
        return self.need if self.need is not None else counted_need(self.spec, {})

    @property
    def reserves(self) -> str | None:
        """The reservation as the plan and ``--dry-run`` say it (which param set the count)."""
        need = self.gpus
        param = self.spec.gpus.count_param if self.spec.gpus else None
        return None if need is None else f"{need} (params.{param})" if param else str(need)


@dataclass(frozen=True)
class PhasePlan:
    """The checks of one phase, in recipe order."""

    phase: Phase
    checks: list[PlannedCheck]


@dataclass(frozen=True)
class Plan:
    """The whole plan, phases in their fixed order."""

    phases: list[PhasePlan]
    warnings: list[str] = field(default_factory=list)
    # Bad params of checks whose params count no GPUs: the plan stands without them, and
    # the run refuses them after its CNCF checks (``run_plan.resolve_run``).
    param_problems: list[Problem] = field(default_factory=list)

    @property
    def checks(self) -> list[PlannedCheck]:
        """Every planned check, in run order."""
        return [c for p in self.phases for c in p.checks]

    @property
    def check_names(self) -> list[str]:
        """Names of every planned check, in run order."""
        return [c.name for c in self.checks]


def _with_line(problem: Problem, line_of: Callable[[PathKey], int | None]) -> Problem:
    """Add the recipe line to a problem whose field path points into the recipe."""
    if problem.line is not None or not problem.field_path or problem.field_path.startswith("-"):
        return problem
    path: list[str | int] = []
    for part in problem.field_path.replace("]", "").split("."):
        name, _, index = part.partition("[")
        path.append(name)
        if index:
            path.append(int(index))
    return replace(problem, line=line_of(tuple(path)))


def resolve_phases(requested: Iterable[str]) -> list[Phase]:
    """``--phase`` values (repeatable, ``all``) -> phases in their fixed order."""
    wanted = set(requested) or {"all"}
    if "all" in wanted:
        return list(PHASE_ORDER)
    return [p for p in PHASE_ORDER if p.value in wanted]


def unknown_check(
    name: str, catalog: Catalog, where: str | None, source: str, phase: Phase | None = None
) -> Problem:
    """The problem of a check name the catalog lacks, with the closest name or the list."""
    close = difflib.get_close_matches(name, catalog.names, n=1)
    if close:
        hint = f"did you mean '{close[0]}'?"
    else:
        known = [c.name for c in catalog.ordered if phase is None or c.phase == phase]
        hint = f"valid {phase.value + ' ' if phase else ''}checks: " + ", ".join(known)
    return Problem(f"unknown check '{name}'", source=source, field_path=where, hint=hint)


def counted_need(
    spec: CheckSpec, params: dict[str, object], config: LoadedYaml | None = None
) -> GpuNeed | None:
    """``spec.gpus`` with a ``countParam`` read from the check's effective params.

    ``params`` are the config's (validated here: a SchemaError names the config's
    file, line and field); the params model fills in the defaults.
    """
    if spec.gpus is None or spec.gpus.count_param is None:
        return spec.gpus
    from aicr.catalog.params import check_params

    return _counted(spec, check_params(spec.name, params, config))


def _counted(spec: CheckSpec, params: CheckParams) -> GpuNeed | None:
    """``spec.gpus`` counted with the check's effective ``params``."""
    need = spec.gpus
    if need is None or need.count_param is None:
        return need
    try:
        return need.counted(params.model_dump(by_alias=True))
    except ValueError as exc:
        raise InputError(
            Problem(
                f"check '{spec.name}': {exc}",
                source="catalog",
                field_path=f"checks.{spec.name}.gpus",
            )
        ) from None


def _timeout(spec: CheckSpec, recipe: Recipe, config: ValidateConfig, source: str) -> timedelta:
    """Config beats recipe phase timeout, which beats the catalog."""
    section = recipe.validation.phase(spec.phase) if recipe.validation else None
    for text, where in (
        (config.check(spec.name).timeout, f"spec.validate.checks.{spec.name}.timeout"),
        (section.timeout if section else None, f"validation.{spec.phase.value}.timeout"),
    ):
        if text:
            try:
                return durations.parse(text)
            except ValueError as exc:
                raise InputError(Problem(str(exc), source=source, field_path=where)) from None
    return spec.timeout


def build(
    recipe: Recipe,
    catalog: Catalog,
    *,
    phases: list[Phase],
    skip_checks: Iterable[str] = (),
    config: ValidateConfig,
    source: str = "recipe",
    line_of: Callable[[PathKey], int | None] | None = None,
    config_lines: LoadedYaml | None = None,
) -> Plan:
    """Select, check and order the recipe's checks for the requested phases.

    ``config_lines`` (the config as loaded) lets a bad param that counts a
    check's GPUs be reported at its line.
    """
    from aicr.catalog.params import check_params

    problems: list[Problem] = []
    param_problems: list[Problem] = []
    unknown: list[Problem] = []
    planned: list[PhasePlan] = []
    warnings: list[str] = []
    skips = list(skip_checks)
    for phase in phases:
        names = recipe.checks(phase) or []
        checks: list[PlannedCheck] = []
        seen: set[str] = set()
        for i, name in enumerate(names):
            where = f"validation.{phase.value}.checks[{i}]"
            spec = catalog.get(name)
            if spec is None:
                unknown.append(unknown_check(name, catalog, where, source, phase))
            elif spec.phase != phase:
                problems.append(
                    Problem(
                        f"check '{name}' belongs to the {spec.phase.value} phase",
                        source=source,
                        field_path=where,
                        hint=f"move it to validation.{spec.phase.value}.checks",
                    )
                )
            elif name in seen:
                problems.append(Problem(f"check '{name}' is listed twice", source, None, where))
            else:
                seen.add(name)
                reason = "skipped by --skip-check" if name in skips else None
                need, params = None, None
                if reason is None:
                    counts = spec.gpus is not None and spec.gpus.count_param is not None
                    try:
                        params = check_params(name, config.check(name).params, config_lines)
                        need = _counted(spec, params)
                    except SchemaError as exc:
                        # A bad count stops the plan; other params are the run's to refuse.
                        (problems if counts else param_problems).extend(exc.problems)
                    except InputError as exc:
                        problems += exc.problems
                timeout = _timeout(spec, recipe, config, source)
                checks.append(PlannedCheck(spec, timeout, reason, need=need, params=params))
        if not names:
            warnings.append(f"the recipe declares no {phase.value} checks; phase not run")
        planned.append(PhasePlan(phase, checks))
    if line_of is not None:
        unknown = [_with_line(p, line_of) for p in unknown]
        problems = [_with_line(p, line_of) for p in problems]
    if unknown:
        raise UnknownCheckError(unknown + problems)
    planned_names = {c.name for p in planned for c in p.checks}
    for name in skips:
        if catalog.get(name) is None:
            problems.append(unknown_check(name, catalog, "--skip-check", "command line"))
        elif name not in planned_names:
            problems.append(
                Problem(
                    f"--skip-check {name}: the check is not in the plan for the requested phases"
                )
            )
    if problems:
        raise InputError(problems)
    if not planned_names:
        asked = ", ".join(p.value for p in phases)
        raise InputError(
            Problem(
                f"the recipe declares no checks for the requested phase(s): {asked}",
                source=source,
                field_path="validation",
                hint="list checks under validation.<phase>.checks",
            )
        )
    return Plan([p for p in planned if p.checks], warnings, param_problems)
