from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from runctx import make_ctx, sample_plan_obj

from aicr.plan import Plan
from aicr.runner.context import RunContext


@pytest.fixture
def sample_plan() -> Plan:
    return sample_plan_obj()


@pytest.fixture
def ctx() -> RunContext:
    return make_ctx()
