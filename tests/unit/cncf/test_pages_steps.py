"""Evidence pages show a check's steps as one table: step, status, time, reason."""

from __future__ import annotations

from aicr.cncf import pages
from aicr.ctrf import Status, Test


def test_steps_render_as_a_table_and_plain_sections_as_before() -> None:
    evidence = [
        {"title": "negative", "asked": "pod without a GPU request", "answer": "no devices",
         "verdict": "saw no GPU", "status": "passed", "timestamp": "2026-12-01T09:00:00.000Z"},
        {"title": "permissive-toolkit", "verdict": "container c saw GPU-1 | GPU-2",
         "status": "failed", "timestamp": "2026-12-01T09:00:05.000Z"},
        {"title": "legacy", "asked": "a", "answer": "b", "verdict": "c"},
    ]  # fmt: skip
    test = Test(name="secure-accelerator-access", status=Status.FAILED, duration=5000,
                extra={"evidence": evidence})  # fmt: skip
    text = "\n".join(pages.check_block(test, test.name, planned=True))
    assert (
        "| step | status | at | reason |\n|---|---|---|---|\n"
        "| negative | passed | 2026-12-01T09:00:00.000Z | saw no GPU |\n"
        "| permissive-toolkit | failed | 2026-12-01T09:00:05.000Z | container c saw GPU-1 \\| "
        "GPU-2 |\n"
    ) in text
    assert "#### legacy\n- **asked**: a\n- **answer**: b\n- **verdict**: c" in text
    assert "**status**" not in text and "**timestamp**" not in text
