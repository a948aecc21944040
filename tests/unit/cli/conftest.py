"""Fixtures of the CLI tests: bad input must never reach the cluster."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def no_cluster_access(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any client construction fails the test."""

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("the cluster was contacted")

    monkeypatch.setattr("aicr.kube.target.api_client", refuse)
