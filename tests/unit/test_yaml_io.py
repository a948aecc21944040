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
