from __future__ import annotations

from pathlib import Path

import pytest

from aicr.checks import entrypoint


def test_outside_a_pod_an_existing_termination_log_is_never_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stray = tmp_path / "termination-log"
    stray.write_text("")
    monkeypatch.setattr(entrypoint.d, "TERMINATION_LOG", str(stray))
    monkeypatch.delenv(entrypoint.d.TERMINATION_LOG_ENV, raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    assert entrypoint.default_termination_log() is None
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    assert entrypoint.default_termination_log() == stray


def test_the_override_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(entrypoint.d.TERMINATION_LOG_ENV, str(tmp_path / "t"))
    assert entrypoint.default_termination_log() == tmp_path / "t"
