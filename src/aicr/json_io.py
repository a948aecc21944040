"""JSON loading within the depth bound, with errors that name the file and line."""

from __future__ import annotations

import json
from typing import Any

from aicr import limits
from aicr.errors import FileFormatError, Problem
from aicr.yaml_io import too_deep


def parse(text: str, source: str, hint: str | None = None) -> Any:
    """Parse JSON text; malformed or too deeply nested JSON raises FileFormatError.

    ``hint`` says what the file was expected to be.
    """
    max_depth = limits.count("depth")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FileFormatError(
            Problem(f"malformed JSON: {exc.msg}", source=source, line=exc.lineno, hint=hint)
        ) from None
    except RecursionError:  # the decoder recurses per level; its stack ends near 1000
        raise too_deep(source, max_depth) from None
    except ValueError as exc:  # an integer past Python's 4300-digit conversion limit
        raise FileFormatError(Problem(f"malformed JSON: {exc}", source=source, hint=hint)) from None
    _check_depth(data, source, max_depth)
    return data


def _check_depth(data: Any, source: str, max_depth: int) -> None:
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth > max_depth:
                raise too_deep(source, max_depth)
            items = value.values() if isinstance(value, dict) else value
            stack.extend((item, depth + 1) for item in items)
