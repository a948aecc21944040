"""src/aicr keeps the layer order of docs/development.md ("Layers"); ruff format owns the layout.

Every import counts: module level, inside a function, and under TYPE_CHECKING,
because each one ties the importer to the imported module's layer. An import
of ``a.b.c`` also runs ``a.b``'s ``__init__``, so that counts too.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
DOC = ROOT / "docs" / "development.md"
FMT_SKIP_LIMIT = 40  # only where a table reads better aligned


def modules(src: Path = SRC) -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package ``__init__``)."""
    out = {}
    for path in sorted(src.rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if package else parts)] = (path, package)
    return out


def _resolve(name: str, known: dict[str, tuple[Path, bool]]) -> str | None:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def _imported(module: str, path: Path, package: bool) -> Iterator[str]:
    base = module if package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = base.split(".")[: len(base.split(".")) - node.level + 1]
                target = ".".join([*parts, node.module] if node.module else parts)
            else:
                target = node.module or ""
            yield target
            yield from (f"{target}.{a.name}" for a in node.names)


def import_graph(src: Path = SRC) -> dict[str, set[str]]:
    """Module -> the aicr modules it imports (and the packages whose ``__init__`` that runs)."""
    known = modules(src)
    graph: dict[str, set[str]] = {m: set() for m in known}
    for module, (path, package) in known.items():
        for name in _imported(module, path, package):
            target = _resolve(name, known) if name.startswith("aicr") else None
            if not target or target == module or module.startswith(target + "."):
                continue  # a module's own packages are always initialised before it
            graph[module].add(target)
            parent = target.rpartition(".")[0]
            while parent and not (module == parent or module.startswith(parent + ".")):
                graph[module].add(parent)  # importing a.b.c runs a.b's __init__ first
                parent = parent.rpartition(".")[0]
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: strongly connected groups of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _section(text: str, title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match, f"docs/development.md has no '## {title}' section"
    return match.group(1)


def _table(section: str, first_header: str) -> list[list[str]]:
    rows, inside = [], False
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] == first_header:
            inside = True
        elif inside and line.startswith("|"):
            if not set(cells[0]) <= set("-: "):
                rows.append(cells)
        elif inside:
            break
    return rows


def layer_table(text: str) -> tuple[dict[str, int], dict[tuple[str, str], str]]:
    """(module pattern -> layer number, (importer, imported) -> the listed reason)."""
    section = _section(text, "Layers")
    patterns = {}
    for row in _table(section, "layer"):
        number = int(row[0].split()[0])
        for pattern in re.findall(r"`([^`]+)`", row[1]):
            assert pattern not in patterns, f"{pattern} is listed in two layers"
            patterns[pattern] = number
    exceptions = {}
    for row in _table(section, "importer"):
        (importer,) = re.findall(r"`([^`]+)`", row[0])
        (imported,) = re.findall(r"`([^`]+)`", row[1])
        assert row[2], f"the exception {importer} -> {imported} gives no reason"
        exceptions[(importer, imported)] = row[2]
    return patterns, exceptions


def layer_of(module: str, patterns: dict[str, int]) -> int | None:
    """The layer of the most specific pattern naming ``module`` (``a.b`` beats ``a.b.*``)."""
    best: tuple[int, bool, int] | None = None
    for pattern, number in patterns.items():
        stem, exact = pattern.removesuffix(".*"), not pattern.endswith(".*")
        hit = module == stem or (not exact and module.startswith(stem + "."))
        if hit and (best is None or (len(stem), exact) > best[:2]):
            best = (len(stem), exact, number)
    return best[2] if best else None


def back_imports(
    graph: dict[str, set[str]], patterns: dict[str, int]
) -> list[tuple[str, str, int, int]]:
    """Every import from a module to one in a higher layer."""
    out = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            mine, theirs = layer_of(module, patterns), layer_of(target, patterns)
            if mine is not None and theirs is not None and theirs > mine:
                out.append((module, target, mine, theirs))
    return out


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


@pytest.fixture(scope="module")
def table() -> tuple[dict[str, int], dict[tuple[str, str], str]]:
    return layer_table(DOC.read_text(encoding="utf-8"))


def test_src_has_no_import_circle(graph: dict[str, set[str]]) -> None:
    assert circles(graph) == []


def test_every_module_has_a_layer(graph, table) -> None:
    patterns, _ = table
    assert [m for m in sorted(graph) if layer_of(m, patterns) is None] == []


def test_no_import_runs_back_up_a_layer_unless_listed_with_its_reason(graph, table) -> None:
    patterns, exceptions = table
    found = back_imports(graph, patterns)
    unlisted = [f"{a} (layer {la}) imports {b} (layer {lb})" for a, b, la, lb in found
                if (a, b) not in exceptions]
    assert unlisted == []
    stale = sorted(set(exceptions) - {(a, b) for a, b, _, _ in found})
    assert stale == [], "listed exceptions that no import needs any more: drop them from the table"


def test_no_check_module_imports_the_runner(graph) -> None:
    assert [(m, t) for m, ts in sorted(graph.items()) if m.startswith("aicr.checks")
            for t in sorted(ts) if t == "aicr.runner" or t.startswith("aicr.runner.")] == []


def test_the_rules_catch_a_circle_and_a_back_import(tmp_path: Path) -> None:
    pkg = tmp_path / "aicr"
    (pkg / "low").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "low" / "__init__.py").write_text("")
    (pkg / "low" / "a.py").write_text("def f():\n    from aicr import high\n")
    (pkg / "high.py").write_text("from aicr.low import a\n")
    graph = import_graph(tmp_path)
    assert circles(graph) == [["aicr.high", "aicr.low.a"]]
    patterns = {"aicr": 0, "aicr.low.*": 0, "aicr.high": 1}
    assert back_imports(graph, patterns) == [("aicr.low.a", "aicr.high", 0, 1)]


def test_fmt_skip_marks_stay_few() -> None:
    marks = [(p, line) for folder in (SRC, ROOT / "hack" / "sim") for p in folder.rglob("*.py")
             for line in p.read_text(encoding="utf-8").splitlines() if "# fmt: skip" in line]
    assert len(marks) <= FMT_SKIP_LIMIT, f"{len(marks)} '# fmt: skip', {FMT_SKIP_LIMIT} at most"
