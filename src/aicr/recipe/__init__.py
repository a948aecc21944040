"""The recipe: what the cluster is supposed to run and how to validate it."""

from aicr.recipe.model import ComponentRef, Constraint, Recipe, ValidationPhase

__all__ = ["ComponentRef", "Constraint", "Recipe", "ValidationPhase"]
