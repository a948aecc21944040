"""YAML loading gives the same data, lines and errors through libyaml as through pure Python."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from aicr import yaml_io
from aicr.errors import FileFormatError

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted([*ROOT.glob("src/aicr/**/*.yaml"), *ROOT.glob("tests/data/**/*.yaml"),
                *ROOT.glob("recipes/*.yaml")])
MALFORMED = [
    "a: [1, 2\nb: 3\n",
    "a: b: c\n",
    "key: 'unterminated\n",
    "- a\nb: 1\n",
    "a: 1\n---\nb: 2\n",
    "\tx: 1\n",
    "a: !!python/object:os.system x\n",
    "a: *missing\n",
]


def pure_python(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yaml_io, "_FAST_LOADER", None)


def test_libyaml_is_used_here() -> None:
    assert yaml_io._FAST_LOADER is yaml.CSafeLoader


def outcome(text: str) -> tuple[object, ...]:
    """Data and lines of a parse, or the error messages when it is refused."""
    try:
        loaded = yaml_io.parse(text, "f.yaml")
    except FileFormatError as exc:
        return ("refused", [str(p) for p in exc.problems])
    return (loaded.data, dict(loaded.lines))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_shipped_and_test_file_parses_alike(path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    text = path.read_text(encoding="utf-8")
    fast = outcome(text)
    pure_python(monkeypatch)
    assert fast == outcome(text)


@pytest.mark.parametrize("text", MALFORMED)
def test_errors_are_the_pure_python_parser_s(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(FileFormatError) as fast:
        yaml_io.parse(text, "f.yaml")
    with pytest.raises(yaml.YAMLError) as fast_load:
        yaml_io.load(text)
    pure_python(monkeypatch)
    with pytest.raises(FileFormatError) as slow:
        yaml_io.parse(text, "f.yaml")
    with pytest.raises(yaml.YAMLError) as slow_load:
        yaml.safe_load(text)
    assert [str(p) for p in fast.value.problems] == [str(p) for p in slow.value.problems]
    assert str(fast_load.value) == str(slow_load.value)


class NoDuplicates(yaml.SafeLoader):
    """A SafeLoader subclass with a rule of its own, as the verifier's unique-key loader."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[object, object]:
        keys = [self.construct_object(k, deep=deep) for k, _ in node.value]
        if len(keys) != len(set(keys)):
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key at line {node.start_mark.line + 1}", None)
        return super().construct_mapping(node, deep=deep)


@pytest.mark.parametrize("text", ["a: 1\nb: {c: 2, d: [x, y]}\n", "a: 1\nb:\n  c: 1\n  c: 2\n",
                                  *MALFORMED])
def test_a_loader_subclass_keeps_its_rules_over_libyaml(text: str) -> None:
    try:
        want: object = yaml.load(text, Loader=NoDuplicates)
    except yaml.YAMLError as exc:
        want = f"refused: {exc}"
    try:
        got: object = yaml_io.load(text, NoDuplicates)
    except yaml.YAMLError as exc:
        got = f"refused: {exc}"
    assert got == want
    assert yaml_io._over_libyaml(NoDuplicates).__mro__[1] is yaml.cyaml.CParser
