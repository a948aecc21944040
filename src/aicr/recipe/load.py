"""Recipe loading: reference -> text -> model."""

from __future__ import annotations

from aicr import sources
from aicr.document import validate
from aicr.kube.target import KubeTarget
from aicr.limits import Kind
from aicr.recipe.model import Recipe
from aicr.yaml_io import LoadedYaml, parse


def parse_recipe(text: str, source: str = "recipe.yaml") -> Recipe:
    """Parse recipe YAML; every problem is reported with file, line and field path."""
    return validate(Recipe, parse(text, source))


def load_recipe(ref: str) -> Recipe:
    """Load a recipe from a path, an http(s) URL or ``cm://namespace/name``."""
    return parse_recipe(sources.read(ref, kind=Kind.RECIPE), ref)


def load_recipe_with_lines(ref: str, kube: KubeTarget | None = None) -> tuple[Recipe, LoadedYaml]:
    """Load a recipe and keep its line index, so later (plan-time) errors can name lines.

    ``kube`` is the cluster a ``cm://`` reference is read from.
    """
    return parse_recipe_with_lines(sources.read(ref, kube, kind=Kind.RECIPE), ref)


def parse_recipe_with_lines(text: str, source: str) -> tuple[Recipe, LoadedYaml]:
    """Parse recipe YAML and keep its line index."""
    loaded = parse(text, source)
    return validate(Recipe, loaded), loaded
