"""YAML loading that remembers where each value came from.

Errors must name the file, the line and the field path, so documents are
composed once into a node tree and a path -> line index is kept beside the data.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
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
    """Parse a YAML data file shipped inside ``package`` (errors name ``aicr/.../<name>``).

    Through the parse cache: a shipped file is the same text at every run, and parsing
    catalog.yaml alone was 70 M of the 1.5 G instructions of a no-cluster run (issue 34).
    The cache keeps only what ``parse`` returns, as JSON; the caller's pydantic model
    still validates it at every run.
    """
    from importlib import resources

    text = resources.files(package).joinpath(name).read_text(encoding="utf-8")
    source = f"{package.replace('.', '/')}/{name}"
    path = _cache_path(text)
    cached = _read_cached(path, source) if path is not None else None
    if cached is not None:
        return cached
    loaded = parse(text, source)
    if path is not None:
        _write_cached(path, loaded)
    return loaded


# Bump when what the cache holds changes shape.
_CACHE_FORMAT = "1"


def _cache_path(text: str) -> Path | None:
    """``$XDG_CACHE_HOME/aicr/yaml/<key>.json`` (else ``~/.cache``), keyed by text and PyYAML.

    PyYAML's version is in the key because its constructor decides the data (what
    ``on`` or a date resolves to); None when there is no home to put it under.
    """
    import hashlib

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):  # no home (``~`` left as it is) or a relative setting
        return None
    key = hashlib.sha256(f"{_CACHE_FORMAT}\0{yaml.__version__}\0{text}".encode()).hexdigest()
    return Path(base) / "aicr" / "yaml" / f"{key}.json"


def _read_cached(path: Path, source: str) -> LoadedYaml | None:
    """The cached parse, or None when absent, unreadable, malformed or not the user's own.

    A file another user could have written (not owned by us, or group/world-writable)
    is not read: what it holds becomes the catalog the run trusts.
    """
    try:
        with path.open("rb") as f:
            st = os.fstat(f.fileno())
            if st.st_uid != os.getuid() or st.st_mode & 0o022:
                return None
            held = json.loads(f.read())
        lines = {tuple(key): line for key, line in held["lines"]}
        if not all(type(v) is int for v in lines.values()) or not _plain(held["data"]):
            return None
        return LoadedYaml(data=held["data"], source=source, lines=lines)
    except (OSError, ValueError, TypeError, KeyError):
        return None


def _write_cached(path: Path, loaded: LoadedYaml) -> None:
    """Keep ``loaded`` for the next run when JSON holds it exactly; never fail the run."""
    if not _plain(loaded.data):  # a date, a set or a non-string key would come back changed
        return
    held = {"data": loaded.data, "lines": [[list(k), v] for k, v in loaded.lines.items()]}
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(json.dumps(held))  # one C encoding, not a write per token
            os.replace(tmp, path)  # whole or not at all, whatever runs beside us
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass


def _plain(value: Any) -> bool:
    """Whether ``value`` is made only of what JSON gives back as it was."""
    kind = type(value)
    if kind is dict:
        return all(type(k) is str and _plain(v) for k, v in value.items())
    if kind is list:
        return all(_plain(v) for v in value)
    return kind in (str, int, float, bool, type(None))
