"""The check catalog: every check aicr can run, as package data validated on load."""

from aicr.catalog.model import Catalog, CheckSpec, PolicyRule, load_catalog, parse_catalog

__all__ = ["Catalog", "CheckSpec", "PolicyRule", "load_catalog", "parse_catalog"]
