"""YAML loading that remembers where each value came from.

Errors must name the file, the line and the field path, so documents are
composed once into a node tree and a path -> line index is kept beside the data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from aicr.errors import FileFormatError, Problem

PathKey = tuple[str | int, ...]
# libyaml parses about ten times faster than the pure-Python parser; a PyYAML built
# without it still works, only slower.
_FAST_LOADER: Any = getattr(yaml, "CSafeLoader", None)


@dataclass(frozen=True)
class LoadedYaml:
    """A parsed YAML document with the line (1-based) of every key and item."""

    data: Any
    source: str
    lines: Mapping[PathKey, int] = field(default_factory=dict)

    def line_of(self, path: PathKey) -> int | None:
        """The line of the deepest known prefix of ``path``."""
        for end in range(len(path), -1, -1):
            line = self.lines.get(tuple(path[:end]))
            if line is not None:
                return line
        return None


def _index(node: yaml.Node, path: PathKey, out: dict[PathKey, int]) -> None:
    out[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else str(key.value)
            out[(*path, name)] = key.start_mark.line + 1
            _index(value, (*path, name), out)
            out[(*path, name)] = key.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _index(item, (*path, i), out)


def load(text: str) -> Any:
    """``yaml.safe_load``, through libyaml where it is built in.

    Raises exactly what the pure-Python loader raises: on any error the text is parsed
    again by it, so messages and marks never depend on which parser is installed.
    """
    return _compose_and_construct(text)[1]


def _compose_and_construct(text: str) -> tuple[yaml.Node | None, Any]:
    """The document's node tree and its data, from one parse."""
    if _FAST_LOADER is not None:
        try:
            return _parse_with(_FAST_LOADER, text)
        except yaml.YAMLError:
            pass  # fall through: the pure-Python loader gives today's message and mark
    return _parse_with(yaml.SafeLoader, text)


def _parse_with(loader_class: Any, text: str) -> tuple[yaml.Node | None, Any]:
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        return node, None if node is None else loader.construct_document(node)
    finally:
        loader.dispose()


def parse(text: str, source: str) -> LoadedYaml:
    """Parse one YAML document; malformed YAML raises with file and line."""
    try:
        node, data = _compose_and_construct(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        what = exc.problem or exc.context or "malformed YAML"
        raise FileFormatError(Problem(f"malformed YAML: {what}", source=source, line=line)) from exc
    except yaml.YAMLError as exc:
        raise FileFormatError(Problem(f"malformed YAML: {exc}", source=source)) from exc
    lines: dict[PathKey, int] = {}
    if node is not None:
        _index(node, (), lines)
    return LoadedYaml(data=data, source=source, lines=lines)


def parse_package_file(package: str, name: str) -> LoadedYaml:
    """Parse a YAML data file shipped inside ``package`` (errors name ``aicr/.../<name>``)."""
    from importlib import resources

    text = resources.files(package).joinpath(name).read_text(encoding="utf-8")
    return parse(text, f"{package.replace('.', '/')}/{name}")
