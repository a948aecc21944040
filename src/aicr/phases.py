"""The validation phases and their fixed order."""

from __future__ import annotations

from enum import StrEnum


class Phase(StrEnum):
    """A validation phase; readiness is the gate, the others hold checks."""

    DEPLOYMENT = "deployment"
    PERFORMANCE = "performance"
    CONFORMANCE = "conformance"


# Order is data: phases always run in this order whatever the flags' order.
PHASE_ORDER: tuple[Phase, ...] = (Phase.DEPLOYMENT, Phase.PERFORMANCE, Phase.CONFORMANCE)
