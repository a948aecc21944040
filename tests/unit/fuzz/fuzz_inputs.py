"""Hypothesis strategies for hostile input bytes, grown from the valid documents in tests/data.

Each strategy draws one of: a valid seed document with a field removed, retyped or
duplicated; random bytes; deep nesting; alias chains (bombs among them); huge
scalars; a valid document with invalid UTF-8 spliced in.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

DATA = Path(__file__).parents[2] / "data"

RECIPE = (DATA / "recipes" / "small.yaml").read_text()
EVERY_FIELD_RECIPE = (DATA / "aicr" / "every-field-recipe.yaml").read_text()
SNAPSHOT = (DATA / "snapshots" / "gpu.yaml").read_text()
CONFIG = (DATA / "configs" / "vendor.yaml").read_text()
REPORT = """{"reportFormat": "CTRF", "specVersion": "0.0.0", "results": {"tool": {"name": "aicr"},
 "summary": {"tests": 1, "passed": 1, "failed": 0, "pending": 0, "skipped": 0, "other": 0,
 "start": 1, "stop": 2}, "tests": [{"name": "platform-health", "status": "passed",
 "duration": 1}]}}"""
AKS_POOLS = (
    '[{"name": "gpu", "vmSize": "Standard_ND96isr_H100_v5", "gpuProfile": {"driver": "None"}}]'
)
VALUES = "driver:\n  enabled: true\nresources:\n  gpus:\n    enabled: true\n"
PRODUCT = "metadata:\n  vendorName: Example\n  platformName: X\nspec:\n  accelerators: {}\n"
RUN_INFO = '{"runId": "r1", "namespace": "aicr-validation", "workloads": {}, "checkInputs": {}}'
MEMBERS = '["Example Corp", "Other"]'

_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True),
    st.text(max_size=40), st.sampled_from(["5m", "0s", "-1s", "2026-02-30", "~", "*x", "&a"]),
)  # fmt: skip
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)  # fmt: skip


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(data, dict):
        for key, value in data.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            out += _paths(value, (*prefix, i))
    return out


@st.composite
def _mutated(draw: st.DrawFn, seed: str, structured: bool) -> bytes:
    """The seed with one field removed, retyped or duplicated (a line repeated)."""
    data = yaml.safe_load(seed) if structured else seed
    how = draw(st.sampled_from(["remove", "retype", "duplicate-line", "duplicate-item"]))
    if how == "duplicate-line" or isinstance(data, str):
        lines = seed.splitlines(keepends=True)
        i = draw(st.integers(0, len(lines) - 1))
        return "".join([*lines[: i + 1], lines[i], *lines[i + 1 :]]).encode()
    paths = [p for p in _paths(data) if p]
    if not paths:
        return seed.encode()
    path = draw(st.sampled_from(paths))
    parent = data
    for part in path[:-1]:
        parent = parent[part]
    if how == "remove":
        del parent[path[-1]]
    elif how == "retype":
        parent[path[-1]] = draw(_values)
    elif isinstance(parent, list):
        parent.insert(path[-1], parent[path[-1]])
    else:
        parent[f"{path[-1]}"] = parent[path[-1]]
    return yaml.safe_dump(data, sort_keys=False).encode()


@st.composite
def _nested(draw: st.DrawFn) -> bytes:
    depth = draw(st.integers(1, 3000))
    open_, close = draw(st.sampled_from([("[", "]"), ("{a: ", "}"), ('{"a": ', "}"), ("- ", "")]))
    if open_ == "- ":
        return "".join("  " * i + "- \n" for i in range(min(depth, 400))).encode() + b"  x\n"
    return (open_ * depth + "1" + close * depth).encode()


@st.composite
def _aliases(draw: st.DrawFn) -> bytes:
    levels, width = draw(st.integers(1, 12)), draw(st.integers(1, 12))
    lines = [f"l0: &l0 [{', '.join(['x'] * width)}]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]" for i in range(1, levels)]
    if draw(st.booleans()):
        lines.append(f"loop: &loop [*loop, {draw(st.sampled_from(['1', '*l0']))}]")
    if draw(st.booleans()):
        lines.append("merge: {<<: *l0}")
    return ("\n".join(lines) + "\n").encode()


@st.composite
def _huge_scalar(draw: st.DrawFn, seed: str) -> bytes:
    size = draw(st.sampled_from([10_000, 200_000, 4_301, 5_000]))
    value = draw(st.sampled_from(["x" * size, "9" * size, '"' + "\\u0041" * (size // 6) + '"']))
    return f"{seed.rstrip()}\nhuge: {value}\n".encode()


@st.composite
def _bad_utf8(draw: st.DrawFn, seed: str) -> bytes:
    raw = seed.encode()
    at = draw(st.integers(0, len(raw)))
    junk = draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\xef\xbb\xbf"]))
    return raw[:at] + junk + raw[at:]


def hostile(seed: str, structured: bool = True) -> st.SearchStrategy[bytes]:
    """Every kind of hostile bytes around one valid seed (YAML or JSON if ``structured``)."""
    return st.one_of(
        st.just(seed.encode()),
        _mutated(seed, structured),
        st.binary(max_size=2048),
        st.text(max_size=400).map(str.encode),
        _nested(),
        _aliases(),
        _huge_scalar(seed),
        _bad_utf8(seed),
    )
