"""Recipe loading: reference -> text -> model."""

from __future__ import annotations

from aicr import sources
from aicr.document import validate
from aicr.recipe.model import Recipe
from aicr.yaml_io import parse


def parse_recipe(text: str, source: str = "recipe.yaml") -> Recipe:
    """Parse recipe YAML; every problem is reported with file, line and field path."""
    return validate(Recipe, parse(text, source))


def load_recipe(ref: str) -> Recipe:
    """Load a recipe from a path, an http(s) URL or ``cm://namespace/name``."""
    return parse_recipe(sources.read(ref), ref)
