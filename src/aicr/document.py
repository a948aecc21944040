"""The shared base of every file format, and turning pydantic errors into user messages.

Every document forbids unknown keys so typos are never silently ignored; keys
are camelCase in files and snake_case in code.
"""

from __future__ import annotations

import difflib
import types
import typing
from typing import Any, TypeVar, Union

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel

from aicr.errors import Problem, SchemaError
from aicr.yaml_io import LoadedYaml, PathKey


class Document(BaseModel):
    """Base for file models: strict keys, immutable, camelCase aliases."""

    # defer_build: a model's validator is built on its first use, not when its module is
    # imported, so a command pays only for the documents it reads (issue 34: a no-cluster
    # run imports 55 models and uses 36)
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        alias_generator=to_camel,
        populate_by_name=True,
        defer_build=True,
    )


M = TypeVar("M", bound=BaseModel)


def refuse_duplicates(names: list[str], what: str) -> None:
    """Raise ValueError naming every name given twice (for list validators)."""
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"duplicate {what}: {', '.join(dupes)}")


def format_path(loc: PathKey) -> str:
    """``('validation', 'conformance', 'checks', 2)`` -> ``validation.conformance.checks[2]``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _unwrap(annotation: Any) -> list[Any]:
    """The model/container types an annotation may hold, Optional and unions removed."""
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        found: list[Any] = []
        for arg in typing.get_args(annotation):
            found.extend(_unwrap(arg))
        return found
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    return [annotation]


def _known_keys(model: type[BaseModel], loc: PathKey) -> list[str]:
    """The keys a document accepts at ``loc`` (used to suggest a fix for a typo)."""
    current: list[Any] = [model]
    for part in loc:
        nxt: list[Any] = []
        for typ in current:
            origin = typing.get_origin(typ)
            if isinstance(typ, type) and issubclass(typ, BaseModel) and isinstance(part, str):
                for name, info in typ.model_fields.items():
                    if part in (name, info.alias):
                        nxt.extend(_unwrap(info.annotation))
            elif origin in (list, tuple) and isinstance(part, int):
                nxt.extend(_unwrap(typing.get_args(typ)[0]))
            elif origin is dict:
                nxt.extend(_unwrap(typing.get_args(typ)[1]))
        current = nxt
    keys: list[str] = []
    for typ in current:
        if isinstance(typ, type) and issubclass(typ, BaseModel):
            keys.extend(info.alias or name for name, info in typ.model_fields.items())
    return keys


def _problem(model: type[BaseModel], loaded: LoadedYaml, err: Any) -> Problem:
    loc: PathKey = tuple(p for p in err["loc"] if isinstance(p, (str, int)))
    # pydantic adds the name of the union member it tried; those are not file keys
    loc = tuple(p for p in loc if not (isinstance(p, str) and p in _UNION_TAGS))
    kind = err["type"]
    line = loaded.line_of(loc)
    if kind == "extra_forbidden":
        key = str(loc[-1]) if loc else "?"
        known = _known_keys(model, loc[:-1])
        close = difflib.get_close_matches(key, known, n=1)
        hint = f"did you mean '{close[0]}'?" if close else None
        if not hint and known:
            hint = "expected one of: " + ", ".join(sorted(known))
        return Problem(
            f"unknown key '{key}'", loaded.source, line, format_path(loc[:-1]) or None, hint
        )
    if kind == "missing":
        return Problem("required field is missing", loaded.source, line, format_path(loc))
    got = err.get("input")
    shown = repr(got) if not isinstance(got, (dict, list)) else type(got).__name__
    return Problem(
        f"{err['msg'][0].lower()}{err['msg'][1:]}, got {shown}",
        loaded.source,
        line,
        format_path(loc) or None,
    )


_UNION_TAGS = {"str", "int", "float", "bool", "list[...]", "dict[...]", "function-after[...]"}


def validate(model: type[M], loaded: LoadedYaml) -> M:
    """Validate parsed YAML against ``model``; every problem is reported at once."""
    if not isinstance(loaded.data, dict):
        found = "an empty file" if loaded.data is None else type(loaded.data).__name__
        raise SchemaError(
            Problem(f"expected a YAML mapping at the top level, found {found}", loaded.source, 1)
        )
    try:
        return model.model_validate(loaded.data)
    except ValidationError as exc:
        problems = [_problem(model, loaded, e) for e in exc.errors()]
        problems.sort(key=lambda p: p.line or 0)
        raise SchemaError(problems) from None
