"""Label selectors as the API server matches them."""

from __future__ import annotations

from typing import Any

import pytest

from aicr.kube import selectors

LABELS = {"team": "ml", "tier": "gpu"}


@pytest.mark.parametrize(("selector", "matched", "shown"), [
    ({}, True, "everything"),
    ({"matchLabels": {"team": "ml"}}, True, "team=ml"),
    ({"matchLabels": {"team": "web"}}, False, "team=web"),
    ({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["gpu", "cpu"]}]}, True,
     "tier in (gpu,cpu)"),
    ({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["gpu"]}]}, False,
     "tier notin (gpu)"),
    ({"matchExpressions": [{"key": "zone", "operator": "Exists"}]}, False, "zone"),
    ({"matchLabels": {"team": "ml"},
      "matchExpressions": [{"key": "zone", "operator": "DoesNotExist"}]}, True, "team=ml, !zone"),
], ids=["empty", "labels", "labels-miss", "in", "notin", "exists", "both"])  # fmt: skip
def test_matches_and_describe(selector: dict[str, Any], matched: bool, shown: str) -> None:
    assert selectors.matches(selector, LABELS) is matched
    assert selectors.describe(selector) == shown


def test_an_unknown_operator_is_refused() -> None:
    with pytest.raises(ValueError, match="operator 'Gt'"):
        selectors.matches({"matchExpressions": [{"key": "a", "operator": "Gt"}]}, LABELS)
