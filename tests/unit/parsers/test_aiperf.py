"""AIPerf's summary export read: the figures, and what makes an export unusable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aicr.parsers import ParseError
from aicr.parsers.aiperf import parse
from real_captures import capture

# AIPerf 0.13.0 run against the project's own vLLM stand-in (no export of AIPerf 0.13
# against a real server with a clear licence was found: see tests/data/real/README.md).
EXPORT = (
    Path(__file__).resolve().parents[2] / "data/inference/aiperf-0.13.0-profile_export_aiperf.json"
)


def test_the_fields_the_checks_gate_on() -> None:
    s = parse(EXPORT.read_text())
    assert (s.version, s.request_count, s.errors) == ("0.13.0", 64, 0)
    assert round(s.output_token_throughput, 2) == 692.78
    assert (round(s.ttft_p99_ms, 2), round(s.ttft.p50, 2)) == (57.72, 51.14)
    assert s.itl_p99_ms == s.itl.p99 and s.request_latency_p99_ms == s.request_latency.p99


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"was_cancelled": True}, "AIPerf reports the benchmark cancelled or incomplete"),
        (
            {"time_to_first_token": {"unit": "ms"}},
            "the summary has no number at time_to_first_token.avg",
        ),
    ],
    ids=["cancelled", "no-ttft"],
)
def test_unusable_exports(change: dict[str, object], message: str) -> None:
    data = json.loads(EXPORT.read_text()) | change
    with pytest.raises(ParseError, match=f"^{message}"):
        parse(json.dumps(data))


def test_a_real_export_of_a_release_before_0_13_is_refused_by_name() -> None:
    """AIPerf's own example artifacts (gpt-oss-20b, October 2025): the `records` layout.

    Without the refusal it read as "the summary has no number at output_token_throughput.avg",
    which sends the reader looking for a broken run, not for a different AIPerf release.
    """
    text = capture("aiperf", "gpt-oss-20b-2025-10-records-layout.json")
    assert json.loads(text)["records"]["output_token_throughput"]["avg"] == 2320.7222350404572
    with pytest.raises(ParseError, match=r"^an AIPerf export in the layout of releases before"):
        parse(text)
