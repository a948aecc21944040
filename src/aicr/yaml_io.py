"""YAML loading that remembers where each value came from.

Errors must name the file, the line and the field path, so documents are
composed once into a node tree and a path -> line index is kept beside the data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from aicr import limits
from aicr.errors import BoundExceededError, FileFormatError, Problem

PathKey = tuple[str | int, ...]
# libyaml parses about ten times faster than the pure-Python parser; a PyYAML built
# without it still works, only slower.
_FAST_LOADER: Any = getattr(yaml, "CSafeLoader", None)
_DERIVED: dict[type[yaml.SafeLoader], Any] = {}  # SafeLoader subclass -> its libyaml twin


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


def load(text: str, loader: type[yaml.SafeLoader] = yaml.SafeLoader) -> Any:
    """``yaml.load(text, Loader=loader)`` for a SafeLoader or subclass, through libyaml.

    The constructor (``loader``'s own rules included, such as refusing duplicate keys)
    runs over libyaml's parser. Raises exactly what ``loader`` alone raises: on any error
    the text is parsed again by it, so messages and marks never depend on libyaml.
    """
    return _compose_and_construct(text, loader)[1]


def _compose_and_construct(
    text: str, loader: type[yaml.SafeLoader] = yaml.SafeLoader
) -> tuple[yaml.Node | None, Any]:
    """The document's node tree and its data, from one parse."""
    if _FAST_LOADER is not None:
        try:
            return _parse_with(_over_libyaml(loader), text)
        except yaml.YAMLError:
            pass  # fall through: the pure-Python loader gives today's message and mark
    return _parse_with(loader, text)


def _over_libyaml(loader: type[yaml.SafeLoader]) -> Any:
    """``loader``'s constructor and resolver over libyaml's parser (CSafeLoader's recipe)."""
    if loader is yaml.SafeLoader:
        return _FAST_LOADER
    if loader not in _DERIVED:
        _DERIVED[loader] = _derive(loader)
    return _DERIVED[loader]


def _derive(loader: type[yaml.SafeLoader]) -> Any:
    """A class of libyaml's parser, then ``loader``'s constructor and resolver methods."""
    from yaml.cyaml import CParser  # type: ignore[attr-defined]  # there when _FAST_LOADER is

    parser: Any = CParser

    def init(self: Any, stream: str) -> None:
        parser.__init__(self, stream)
        yaml.constructor.SafeConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)

    return type(f"C{loader.__name__}", (parser, loader), {"__init__": init})


def _parse_with(loader_class: Any, text: str) -> tuple[yaml.Node | None, Any]:
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        return node, None if node is None else loader.construct_document(node)
    finally:
        loader.dispose()


def too_deep(source: str, max_depth: int, line: int | None = None) -> BoundExceededError:
    """The refusal of a document nested deeper than the depth bound (YAML and JSON)."""
    return BoundExceededError(
        Problem(
            f"collections nested more than {max_depth} deep (the depth bound)",
            source=source,
            line=line,
            hint=limits.how_to_change("depth"),
        )
    )


def _check_expansion(root: yaml.Node, source: str) -> None:
    """Refuse aliases that would expand past the alias-nodes bound, nest too deep, or loop.

    Aliases make the node tree a graph whose expanded size can be exponential in
    its text (a 400-byte "billion laughs" file); every later walk (the line index,
    pydantic) sees the expanded tree, so it is measured here, once per node.
    """
    max_nodes, max_depth = limits.count("alias-nodes"), limits.count("depth")
    done: dict[int, tuple[int, int]] = {}  # id(node) -> (expanded nodes, expanded depth)
    open_: set[int] = set()

    def children(node: yaml.Node) -> list[yaml.Node]:
        if isinstance(node, yaml.MappingNode):
            return [n for pair in node.value for n in pair]
        if isinstance(node, yaml.SequenceNode):
            return list(node.value)
        return []

    def measure(node: yaml.Node) -> tuple[int, int]:
        key = id(node)
        if key in done:
            return done[key]
        if key in open_:
            raise FileFormatError(
                Problem(
                    "an alias refers to a collection that holds it (a recursive document)",
                    source=source,
                    line=node.start_mark.line + 1,
                )
            )
        open_.add(key)
        size, depth = 1, 0
        for child in children(node):
            child_size, child_depth = measure(child)
            size, depth = size + child_size, max(depth, child_depth)
        open_.discard(key)
        done[key] = (size, depth if isinstance(node, yaml.ScalarNode) else depth + 1)
        return done[key]

    size, depth = measure(root)
    if depth > max_depth:
        raise too_deep(source, max_depth)
    added = size - len(done)  # every node counted once per alias that repeats it
    if added > max_nodes:
        raise BoundExceededError(
            Problem(
                f"aliases expand to {added} more nodes, over the alias-nodes bound of {max_nodes}",
                source=source,
                hint=limits.how_to_change("alias-nodes"),
            )
        )


def parse(text: str, source: str, loader: type[yaml.SafeLoader] = yaml.SafeLoader) -> LoadedYaml:
    """Parse one YAML document within the depth and alias bounds; errors name file and line.

    ``loader`` may be a SafeLoader subclass with stricter construction (a duplicate key
    refused). libyaml refuses nesting past 1000 levels itself; the bounds are checked on
    the composed graph before anything walks it expanded.
    """
    try:
        node, data = _compose_and_construct(text, loader)
        if node is not None:
            _check_expansion(node, source)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        what = exc.problem or exc.context or "malformed YAML"
        raise FileFormatError(Problem(f"malformed YAML: {what}", source=source, line=line)) from exc
    except yaml.YAMLError as exc:
        raise FileFormatError(Problem(f"malformed YAML: {exc}", source=source)) from exc
    except (ValueError, OverflowError) as exc:  # a scalar its tag cannot hold: 2026-02-30
        raise FileFormatError(Problem(f"malformed YAML: {exc}", source=source)) from None
    except RecursionError:  # the pure-Python composer recurses per level
        raise too_deep(source, limits.count("depth")) from None
    lines: dict[PathKey, int] = {}
    if node is not None:
        _index(node, (), lines)
    return LoadedYaml(data=data, source=source, lines=lines)


def parse_package_file(package: str, name: str) -> LoadedYaml:
    """Parse a YAML data file shipped inside ``package`` (errors name ``aicr/.../<name>``)."""
    from importlib import resources

    text = resources.files(package).joinpath(name).read_text(encoding="utf-8")
    return parse(text, f"{package.replace('.', '/')}/{name}")
