"""YAML loading gives the same data, lines and errors through libyaml as through pure Python."""

from __future__ import annotations

import json
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


SHIPPED = sorted((ROOT / "src").glob("aicr/**/*.yaml"))


def package_of(path: Path) -> tuple[str, str]:
    rel = path.relative_to(ROOT / "src")
    return ".".join(rel.parent.parts), rel.name


def cached_files(cache: Path) -> list[Path]:
    return sorted((cache / "aicr" / "yaml").glob("*.json"))


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_a_shipped_file_through_the_cache_is_its_full_parse(
        path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    package, name = package_of(path)
    full = yaml_io.parse(path.read_text(encoding="utf-8"), f"{package.replace('.', '/')}/{name}")
    first = yaml_io.parse_package_file(package, name)  # parsed, then kept
    assert len(cached_files(tmp_path)) == 1
    again = yaml_io.parse_package_file(package, name)  # from the cache
    assert first == full and again == full
    assert json.dumps(again.data) == json.dumps(full.data)  # 1 and 1.0 and true stay apart


@pytest.fixture
def catalog_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The catalog parsed once into a cache of its own: its one cached file."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    yaml_io.parse_package_file("aicr.catalog", "catalog.yaml")
    (held,) = cached_files(tmp_path)
    return held


def full_catalog() -> yaml_io.LoadedYaml:
    text = (ROOT / "src/aicr/catalog/catalog.yaml").read_text(encoding="utf-8")
    return yaml_io.parse(text, "aicr/catalog/catalog.yaml")


@pytest.mark.parametrize("content", [b"", b"{not json", b"[]", b'{"data": {}}',
                                     b'{"data": {"a": 1}, "lines": [[["a"], "one"]]}'],
                         ids=["empty", "not-json", "not-an-object", "no-lines", "bad-line"])
def test_a_corrupt_cache_file_is_parsed_again_and_replaced(catalog_cache: Path,
                                                           content: bytes) -> None:
    catalog_cache.write_bytes(content)
    assert yaml_io.parse_package_file("aicr.catalog", "catalog.yaml") == full_catalog()
    assert yaml_io.parse_package_file("aicr.catalog", "catalog.yaml") == full_catalog()
    assert catalog_cache.read_bytes() != content


def test_a_cache_file_others_could_write_is_not_read(catalog_cache: Path) -> None:
    catalog_cache.write_text('{"data": {"checks": []}, "lines": []}', encoding="utf-8")
    catalog_cache.chmod(0o666)
    assert yaml_io.parse_package_file("aicr.catalog", "catalog.yaml") == full_catalog()


def test_an_edited_file_is_not_answered_from_the_cache_of_its_old_text(
        catalog_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import resources

    edited = full_catalog().data | {"edited": True}
    text = yaml.safe_dump(edited)

    class Edited:
        def __init__(self, package: str) -> None:
            pass

        def joinpath(self, name: str) -> Edited:
            return self

        def read_text(self, encoding: str) -> str:
            return text

    monkeypatch.setattr(resources, "files", Edited)
    assert yaml_io.parse_package_file("aicr.catalog", "catalog.yaml").data == edited
    assert len(cached_files(tmp_path)) == 2


def test_data_json_would_change_is_not_cached(tmp_path: Path) -> None:
    held = tmp_path / "held.json"
    for data in ({"when": yaml.safe_load("d: 2026-12-04")["d"]}, {1: "a"}, {"s": {1, 2}}):
        yaml_io._write_cached(held, yaml_io.LoadedYaml(data, "x.yaml"))
        assert not held.exists()


def test_no_writable_cache_folder_still_parses(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert yaml_io.parse_package_file("aicr.catalog", "catalog.yaml") == full_catalog()
