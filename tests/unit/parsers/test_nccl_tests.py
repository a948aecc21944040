"""nccl-tests' output read as real releases print it: captures, the memory cap, old formats."""

from __future__ import annotations

import pytest

from aicr.parsers import ParseError
from aicr.parsers.nccl_tests import parse
from real_captures import capture

GIB = 1 << 30


def test_tag_output_capture_of_a_16g_run_on_two_p5() -> None:
    run = parse(capture("nccl-tests", "p5-aws-batch-tag-output-16g.txt"))
    assert len(run.rows) == 32 and run.rows[0].size == 8 and run.largest_bytes == 16 * GIB
    assert run.busbw_at_largest == 483.05 and run.largest is not None
    assert run.largest.in_place.busbw == 483.35 and run.largest.out_of_place.time_us == 62239
    assert (run.wrong, run.out_of_bounds, run.avg_busbw) == (0, 0, 156.742)
    # an excerpt: the launcher's header was left out, so nothing says what was asked for
    assert run.version is None and run.max_bytes is None and not run.complete
    assert not run.concluded  # that release prints no `# Collective test concluded`


def test_tag_output_excerpt_with_elided_rows() -> None:
    run = parse(capture("nccl-tests", "p5-2x8-eks-tag-output-excerpt.txt"))
    assert [r.size for r in run.rows] == [0, *(1 << n for n in range(26, 32))]
    assert run.busbw_at_largest == 437.79 and run.avg_busbw == 52.9753 and run.wrong == 0


def test_a_2_17_8_run_memory_reduced_on_ten_h100() -> None:
    """-e 64G on H100 80GB HBM3: 2.16.6+'s cap, 26549638485 B, is below 32 GiB, so the table
    ends at 16 GiB and the run is whole there; the footer and version line are printed."""
    run = parse(capture("nccl-tests", "h100-10n-2.17.8-reduced-64g.txt"))
    assert (run.version, run.min_bytes, run.max_bytes) == ("2.17.8", 32 << 20, 64 * GIB)
    assert run.reduced_to == 26549638485 and run.largest_bytes == 16 * GIB
    assert run.complete and run.incomplete() is None and run.concluded
    assert run.busbw_at_largest == 48.89 and run.largest is not None
    assert run.largest.in_place.busbw == 48.89 and run.largest.out_of_place.time_us == 632480
    assert (run.wrong, run.out_of_bounds, run.avg_busbw, len(run.rows)) == (0, 0, 47.8165, 10)
    assert [r.host for r in run.ranks] == [f"cnode3-{n:03d}" for n in range(2, 12)]
    assert {r.name for r in run.ranks} == {"NVIDIA H100 80GB HBM3"}


def test_a_2023_run_under_srun_label_before_the_version_line_and_footer() -> None:
    """Slurm's `srun --label` puts the task id before every line, every task's noise in
    between; rank 0's header, 16 rank lines, table and summary read as without it."""
    run = parse(capture("nccl-tests", "p4d-2x8-srun-label-scatter-2023.txt"))
    assert run.version is None and not run.concluded  # before 2.17.4 and 2.16.7
    assert (run.min_bytes, run.max_bytes, run.reduced_to) == (8, 2 * GIB, None)
    assert len(run.ranks) == 16 and run.ranks[8].host == "compute-gpu-st-distributed-ml-2"
    assert {(r.bus, r.name) for r in run.ranks[:2]} == {("0x10", "NVIDIA A100-SXM4-40GB")}
    assert run.rows[0].size == 0 and run.rows[0].redop == "none"  # scatter_perf's small sizes
    assert run.largest_bytes == 2 * GIB and run.busbw_at_largest == 80.59
    assert (run.wrong, run.avg_busbw, len(run.rows), run.problems) == (0, 20.2635, 29, [])
    assert run.complete and run.incomplete() is None


def test_a_pre_2_13_run_with_its_whole_header_on_a_dgx_2() -> None:
    """12 V100-SXM3-32GB in one process, -b 8 -e 10240M: the old rank lines (no `Group`),
    no root column, `error` deltas, no version line and no footer. The rank lines were not
    read before (the pattern wanted `Group`), so a run of an old image lost all its ranks."""
    run = parse(capture("nccl-tests", "dgx2-12xv100-pre-2.13-all-reduce.txt"))
    assert (run.version, run.min_bytes, run.max_bytes, run.reduced_to) == (None, 8, 10 * GIB, None)
    assert [(r.rank, r.group, r.device) for r in run.ranks] == [(n, 0, n) for n in range(12)]
    assert {(r.host, r.pid, r.name) for r in run.ranks} == {
        ("seville", 88131, "Tesla V100-SXM3-32GB")
    }
    assert (run.ranks[0].bus, run.ranks[11].bus) == ("0x36", "0xe7")
    assert len(run.rows) == 31 and run.largest_bytes == 8 * GIB and run.last_size == 8 * GIB
    assert run.busbw_at_largest == 123.56 and run.largest is not None
    assert run.largest.in_place.busbw == 123.57 and run.largest.out_of_place.wrong is None
    assert (run.wrong, run.out_of_bounds, run.avg_busbw) == (0, 0, 42.5578)
    assert run.complete and run.incomplete() is None and not run.concluded


def test_a_2022_azure_k80_run_whose_reduction_line_was_left_out() -> None:
    """Four Tesla K80 (11441 MiB), `-e 8G`, nccl-tests master of February 2022 (v2.11.0's
    code): that code lowers maxBytes to (11441 MiB - 1 GiB) / 3 = 3641005397 B and prints
    so; the table's stop at 2 GiB, the last doubling of 32 MiB below that, and the summary
    after it show the cap happened, but the published log omits the line (as it omits all
    but one NCCL INFO line). Without it nothing in the text says the run was whole."""
    run = parse(capture("nccl-tests", "azure-nc24-4xk80-2022-8g.txt"))
    assert (run.version, run.min_bytes, run.max_bytes, run.reduced_to) == (
        None, 32 << 20, 8 * GIB, None
    )
    assert [(r.rank, r.group, r.bus, r.name) for r in run.ranks] == [
        (n, 0, "0x00", "Tesla K80") for n in range(4)
    ]
    assert [r.size for r in run.rows] == [(32 << 20) << n for n in range(7)]
    assert run.largest_bytes == 2 * GIB and run.busbw_at_largest == 2.56
    assert (run.wrong, run.out_of_bounds, run.avg_busbw) == (0, 0, 2.54225)
    assert not run.complete
    assert run.incomplete() == (
        "the table stops at 2147483648 B, before 8589934592 B, the last size nccl-tests steps "
        "to within 8589934592 B, yet the summary follows and no `# Reducing maxBytes` line "
        "says why (nccl-tests 2.10.0+ print one whenever they lower the maximum, older "
        "releases never lower it): lines are missing from this output"
    )
    # with the line that release prints, the same table is a whole run
    line = "#\n# Reducing maxBytes to 3641005397 due to memory limitation\n"
    text = capture("nccl-tests", "azure-nc24-4xk80-2022-8g.txt").replace(
        "Tesla K80\n#\n", "Tesla K80\n" + line + "#\n", 1
    )
    whole = parse(text)
    assert whole.reduced_to == 3641005397 and whole.complete and whole.incomplete() is None


def test_rank_lines_of_2_13_4_to_2_14_0_carry_group_with_the_bare_bus_id() -> None:
    # v2.13.4 added `Group`; the PCI domain joined the bus id only in v2.14.1
    text = header(None, 8, 8).replace(
        "#\n", "#  Rank  0 Group  0 Pid   4242 on   worker-1 device  0 [0x5d] NVIDIA A10G\n", 1
    )
    run = parse(text + COLUMNS + rows([8]))
    assert [(r.rank, r.group, r.pid, r.bus, r.name) for r in run.ranks] == [
        (0, 0, 4242, "0x5d", "NVIDIA A10G")
    ]


def test_a_label_prefix_is_not_read_into_a_table_row() -> None:
    text = header(None, 8, 16) + COLUMNS + rows([8, 16])
    labelled = "".join(f"12: {line}\n" for line in text.splitlines())
    assert parse(labelled).rows == parse(text).rows


def header(version: str | None, min_bytes: int, max_bytes: int, step: str = "2(factor)") -> str:
    first = f"# nccl-tests version {version} nccl-headers=22707 nccl-library=22707\n"
    return (first if version else "") + (
        f"# nThread 1 nGpus 1 minBytes {min_bytes} maxBytes {max_bytes} step: {step} "
        "warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n"
    )


COLUMNS = (
    "#       size         count      type   redop    root     time   algbw   busbw #wrong"
    "     time   algbw   busbw #wrong\n"
)


def rows(sizes: list[int]) -> str:
    return "".join(
        f"{s:12d}  {s // 4:12d}     float     sum      -1   1000.0  100.00  187.50      0"
        f"   1000.0  100.00  187.50      0\n"
        for s in sizes
    )


def test_a_memory_reduced_run_is_complete_at_the_last_size_it_steps_to() -> None:
    # nccl-tests 2.16.6+: (memory - min(ceil(memory/16 GiB) GiB, 4 GiB) - 1 GiB) / 3,
    # for an A100-SXM4-40GB (totalGlobalMem 42505273344): never a power of two.
    memory = 42505273344
    reduced = (memory - min(-(-memory // (16 * GIB)), 4) * GIB - GIB) // 3
    assert reduced == 12736768682
    text = (
        header(None, 8, 16 * GIB)
        + f"# Reducing maxBytes to {reduced} due to memory limitation\n#\n"
        + COLUMNS
        + rows([8 << n for n in range(31)])
        + "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 90.2 \n#\n"
    )
    run = parse(text)
    assert (run.reduced_to, run.last_size, run.largest_bytes) == (reduced, 8 * GIB, 8 * GIB)
    assert run.complete and run.incomplete() is None
    cut = parse(text.replace(rows([8 * GIB]), ""))
    assert not cut.complete
    assert cut.incomplete() == (
        "the table stops at 4294967296 B, before 8589934592 B, the last size nccl-tests "
        f"steps to within {reduced} B (reduced from 17179869184 B) (truncated)"
    )


def test_stepping_by_bytes_is_complete_at_the_last_step() -> None:
    step = 128 << 20
    sizes = list(range(step, 12 * GIB + 1, step))
    run = parse(header(None, step, 12 * GIB, f"{step}(bytes)") + COLUMNS + rows(sizes))
    assert run.last_size == 12 * GIB and run.complete


def test_no_footer_release_is_judged_by_table_and_average() -> None:
    text = header(None, 8, 1024) + COLUMNS + rows([8 << n for n in range(8)])
    assert parse(text).incomplete() == (
        "the output ends before nccl-tests' summary (`# Avg bus bandwidth`)"
    )
    run = parse(text + "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 187.5 \n")
    assert run.incomplete() is None and not run.concluded


def test_version_line_of_2_17_4_and_later() -> None:
    run = parse(header("2.18.3", 8, 64) + COLUMNS + rows([8, 16, 32, 64]))
    assert run.version == "2.18.3" and run.complete


def test_the_pre_wrong_format_of_2_11_and_earlier() -> None:
    # no root column; `error` is the largest delta (%5.0le), not a count of wrong elements
    old = (
        "#       size         count      type   redop     time   algbw   busbw  error"
        "     time   algbw   busbw  error\n"
        "        1024           256     float     sum    30.10    0.03    0.06  0e+00"
        "    29.90    0.03    0.06  0e+00\n"
    )
    run = parse(header(None, 1024, 1024) + old)
    assert run.rows[0].redop == "sum" and run.rows[0].out_of_place.busbw == 0.06
    assert run.rows[0].out_of_place.wrong is None and run.complete


def test_na_where_the_tool_prints_it() -> None:
    text = header(None, 8, 8) + COLUMNS + rows([8]).replace("      0\n", "    N/A\n")
    assert parse(text).rows[0].in_place.wrong is None


def test_text_that_is_not_nccl_tests_output() -> None:
    with pytest.raises(ParseError, match=r"^not nccl-tests output"):
        parse("bash: all_reduce_perf: command not found\n")
