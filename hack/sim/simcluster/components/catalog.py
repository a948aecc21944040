"""Which checks query Prometheus, read from the product's catalog as data (never imported)."""

from __future__ import annotations

import yaml

from simcluster.cluster import paths

CATALOG = paths.PROJECT_ROOT / "src" / "aicr" / "catalog" / "catalog.yaml"


def prometheus_checks() -> list[str]:
    """Names of the catalog's checks with `queriesPrometheus: true`."""
    doc = yaml.safe_load(CATALOG.read_text())
    return [c["name"] for c in doc.get("checks") or [] if c.get("queriesPrometheus")]
