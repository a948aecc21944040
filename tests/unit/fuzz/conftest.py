"""Hypothesis profiles: `make test` runs few, fixed examples; `make fuzz` many, seeded.

`ci` (the default) is derandomized: the same small set of examples every run, so
the suite stays deterministic and cheap. `fuzz` (AICR_HYPOTHESIS_PROFILE=fuzz,
set by `make fuzz` with --hypothesis-seed) draws AICR_FUZZ_EXAMPLES per test.
Neither keeps an example database: nothing is written beside the tests.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).parent))  # fuzz_inputs, fuzz_bounds

_COMMON = {
    "database": None,
    "deadline": None,  # the tests assert their own time bound per example
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large,
                              HealthCheck.function_scoped_fixture],
}  # fmt: skip
settings.register_profile("ci", max_examples=8, derandomize=True, **_COMMON)
settings.register_profile(
    "fuzz", max_examples=int(os.environ.get("AICR_FUZZ_EXAMPLES", "2000")), **_COMMON
)
settings.load_profile(os.environ.get("AICR_HYPOTHESIS_PROFILE", "ci"))
