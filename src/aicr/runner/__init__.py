"""Executors run planned checks; the orchestrator decides order, overlap and stop rules.

``JobExecutor`` runs each check as a Kubernetes Job; ``LocalExecutor`` runs the
same check code as a subprocess with the check's own ServiceAccount token.
Both satisfy the ``Executor`` protocol and produce identical results.
"""
