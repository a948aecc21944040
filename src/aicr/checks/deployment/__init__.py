"""Deployment-phase checks: the recipe's components are deployed and healthy."""
