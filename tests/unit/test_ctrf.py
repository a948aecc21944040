from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from aicr import ctrf
from aicr.ctrf import Status, Test
from aicr.errors import FileFormatError, SchemaError


def sample(name: str = "a", status: Status = Status.PASSED, phase: str = "conformance") -> Test:
    return Test(name=name, status=status, duration=5, suite=[phase],
                labels={"phase": phase, "requirements": ["ai_inference"]},
                extra={"evidence": []})


SCHEMA = Path(__file__).parents[1] / "data/ctrf/ctrf.schema.json"


def schema() -> dict[str, object]:
    return json.loads(SCHEMA.read_text())  # type: ignore[no-any-return]


def test_summary_is_derived_from_tests() -> None:
    tests = [sample("a"), sample("b", Status.FAILED), sample("c", Status.OTHER),
             sample("d", Status.SKIPPED, "deployment")]
    report = ctrf.build(tests, start=1000, stop=4000, version="1.2.3", run_id="r1")
    data = json.loads(ctrf.dumps(report))
    jsonschema.validate(data, schema())
    summary = data["results"]["summary"]
    assert (summary["tests"], summary["passed"], summary["failed"], summary["other"],
            summary["skipped"], summary["suites"], summary["duration"]) == (4, 1, 1, 1, 1, 2, 3000)


def test_merge_keeps_every_phase_and_later_results_win() -> None:
    first = ctrf.build([sample("a", Status.FAILED), sample("b")], start=10, stop=20, version="v")
    second = ctrf.build([sample("a"), sample("c", phase="deployment")], start=5, stop=30,
                        version="v")
    merged = ctrf.merge([first, second], version="v")
    assert {t.name: t.status for t in merged.tests} == {
        "a": Status.PASSED, "b": Status.PASSED, "c": Status.PASSED
    }
    assert (merged.results.summary.start, merged.results.summary.stop) == (5, 30)


def test_round_trip(tmp_path: Path) -> None:
    report = ctrf.build([sample()], start=1, stop=2, version="v", extra={"aicr": {"runId": "x"}})
    (tmp_path / "r.json").write_text(ctrf.dumps(report), encoding="utf-8")
    again = ctrf.read(tmp_path / "r.json")
    assert again.tests[0].requirements == ["ai_inference"]
    assert again.extra == {"aicr": {"runId": "x"}}


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        ("{", FileFormatError, "r.json:1: malformed JSON: Expecting property name enclosed in "
                               "double quotes"),
        ('{"reportFormat": "JUnit"}', SchemaError,
         "r.json: not a CTRF report (expected reportFormat: CTRF)"),
        ('{"reportFormat": "CTRF", "results": {"tool": {"name": "x"}, "summary": {}, '
         '"tests": [{"name": "a", "status": "weird", "duration": 1}]}}', SchemaError,
         "r.json: results.summary.tests: Field required"),
    ],
    ids=["malformed", "not-ctrf", "bad-shape"],
)
def test_bad_reports(text: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as exc:
        ctrf.parse(text, "r.json")
    assert str(exc.value).splitlines()[0] == message
