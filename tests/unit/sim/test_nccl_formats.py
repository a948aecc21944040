"""The nccl stand-in prints each release's own format, read by the parser the real captures prove.

For every release the stand-in plays (the one the image's tag names), its output goes
through ``aicr.parsers.nccl_tests`` and must read as that release prints it (version
line, header, footer, memory cap, exit code on wrong data: NVIDIA/nccl-tests' sources),
and its table as the real captures of ``tests/data/real/nccl-tests/`` read.
"""

from __future__ import annotations

from typing import Any

import pytest
from simcluster.gpu import nccl

from aicr.parsers.nccl_tests import parse
from real_captures import capture

GIB = 1 << 30
RELEASES = ("2.13.9", "2.16.5", "2.16.9", "2.17.4", "2.17.7", "2.18.3", "2.19.6")


def layout(memory_mib: int, faults: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    host = {
        "hostname": "w",
        "pid": 10,
        "gpus": [0, 1],
        "product": "NVIDIA GPU",
        "busbw": 150.0,
        "faults": list(faults),
        "memoryMiB": memory_mib,
        "slots": 2,
    }
    return [{**host, "device": d} for d in range(2)]


def run(version: str, memory_mib: int = 81559, high: int = 16 * GIB, **kw: Any) -> Any:
    args = {"b": 8, "e": high, "f": 2, "g": 1, "c": 1, "n": 20, "w": 1}
    text, code = nccl.report(args, layout(memory_mib, **kw), "all_reduce_perf", version)
    return parse(text), code


@pytest.mark.parametrize("version", RELEASES)
def test_each_release_reads_as_that_release_prints(version: str) -> None:
    v = nccl.release(version)
    got, code = run(version)
    assert code == 0 and got.complete and got.incomplete() is None
    assert got.version == (version if v >= (2, 17, 4) else None)
    assert got.concluded == (v >= (2, 16, 7))
    assert (got.largest_bytes, got.reduced_to) == (16 * GIB, None)
    assert got.wrong == 0 and got.out_of_bounds == 0 and got.avg_busbw is not None


@pytest.mark.parametrize("version", RELEASES)
def test_a_40gb_gpu_cuts_16g_as_that_release_does(version: str) -> None:
    got, _ = run(version, memory_mib=40960)
    memory = 40960 << 20
    reserve = 3 * GIB if nccl.release(version) >= (2, 16, 6) else 0
    assert got.reduced_to == (memory - reserve - GIB) // 3
    assert got.largest_bytes == 8 * GIB and got.complete  # judged at what ran


@pytest.mark.parametrize(
    ("version", "code"), [("2.13.9", 1), ("2.16.9", 1), ("2.17.4", 6), ("2.19.6", 7)]
)
def test_wrong_data_exits_as_that_release_does(version: str, code: int) -> None:
    got, exit_code = run(version, faults=("nccl-wrong",))
    assert exit_code == code and got.wrong > 0 and got.out_of_bounds


def test_the_table_reads_as_the_real_16g_capture_does() -> None:
    real = parse(capture("nccl-tests", "p5-aws-batch-tag-output-16g.txt"))
    for version in RELEASES:
        played, _ = run(version)
        assert played.columns == real.columns
        assert [r.size for r in played.rows] == [r.size for r in real.rows]
        assert [r.count for r in played.rows] == [r.count for r in real.rows]
        assert {(r.dtype, r.redop) for r in played.rows} == {(r.dtype, r.redop) for r in real.rows}


def test_the_image_tag_names_the_release() -> None:
    pinned = "hpc-cloud/nccl-tests:cuda12.8.1-efa1.43.2-ofiv1.16.3-ncclv2.27.7-1-testsv2.16.9"
    assert nccl.image_version(pinned) == "2.16.9"
    assert nccl.image_version("example.com/nccl-tests:latest") == nccl.VERSION


def test_a_release_before_2_13_prints_as_the_real_dgx_2_capture() -> None:
    """No Group in the rank lines, no root column, `error` deltas: read as the capture reads."""
    real = parse(capture("nccl-tests", "dgx2-12xv100-pre-2.13-all-reduce.txt"))
    played, code = run("2.11.0")
    assert code == 0 and played.columns == real.columns and played.complete
    assert (played.version, played.concluded) == (real.version, real.concluded) == (None, False)
    assert [(r.rank, r.group, r.device) for r in played.ranks] == [(0, 0, 0), (1, 0, 1)]
    assert {(r.dtype, r.redop) for r in played.rows} == {(r.dtype, r.redop) for r in real.rows}
    assert {r.out_of_place.wrong for r in played.rows} == {None}  # a delta, not a count
    wrong, code = run("2.11.0", faults=("nccl-wrong",))
    assert code == 1 and wrong.out_of_bounds and wrong.wrong == 0  # judged by the footer


def test_rank_lines_follow_the_release_that_added_group_and_the_pci_domain() -> None:
    # `Group` from v2.13.4 (d313d20), the domain in the bus id from v2.14.1 (b4300cc)
    for version, group, bus in (
        ("2.13.0", False, "0x"),
        ("2.13.4", True, "0x"),
        ("2.14.1", True, "0000:"),
    ):
        args = {"b": 8, "e": 64, "f": 2, "g": 1, "c": 1, "n": 20, "w": 1}
        text, code = nccl.report(args, layout(81559), "all_reduce_perf", version)
        rank_lines = [ln for ln in text.splitlines() if "Rank" in ln]
        assert code == 0 and all((" Group " in ln) == group for ln in rank_lines), version
        got = parse(text)
        assert got.complete and got.columns[3:5] == ["redop", "root"]  # #wrong from v2.13.0
        assert all(r.bus.startswith(bus) for r in got.ranks), version


def test_before_2_10_a_run_too_big_for_the_gpu_fails_allocating() -> None:
    # v2.10.0 (1ae8cdc) added `Reducing maxBytes`; v2.9.0 cudaMallocs maxBytes per buffer:
    # 2 x 16 GiB fit in 40 GiB, the third (`expected`, common.cu:562) does not
    args = {"b": 8, "e": 16 * GIB, "f": 2, "g": 1, "c": 1, "n": 20, "w": 1}
    text, code = nccl.report(args, layout(40960), "all_reduce_perf", "2.9.0")
    assert code == 2 and "Reducing maxBytes" not in text
    assert "w: Test CUDA failure common.cu:562 'out of memory'" in text
    assert parse(text).incomplete() == "the results table never started"
    text, code = nccl.report(args, layout(81559), "all_reduce_perf", "2.9.0")
    assert code == 0 and parse(text).complete and parse(text).reduced_to is None
