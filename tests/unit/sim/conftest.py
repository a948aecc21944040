"""Unit tests of the simulated cluster's pure parts (hack/sim/simcluster): no cluster needed."""

from __future__ import annotations

import sys
from pathlib import Path

SIM_ROOT = Path(__file__).resolve().parents[3] / "hack" / "sim"
if str(SIM_ROOT) not in sys.path:
    sys.path.insert(0, str(SIM_ROOT))
