"""Named defaults, each with its reason."""

from __future__ import annotations

NAMESPACE = "aicr-validation"  # as AICR, so existing RBAC and docs keep working
# Four checks at once keeps a 12-check conformance phase near the longest check's
# duration on real clusters, while staying gentle on small control planes.
PARALLEL = 4
EXECUTOR = "job"  # the cluster is the engine; local is for development
IMAGE_REGISTRY_ENV = "AICR_VALIDATOR_IMAGE_REGISTRY"  # mirrors for air-gapped clusters
# NVIDIA's Go AICR image (its snapshot agent): it cannot run our checks, so --image refuses it.
AICR_AGENT_REPOSITORY = "nvidia/aicr"
# AICR's snapshot namespace default; a snapshot creates nothing, so it only names one.
SNAPSHOT_NAMESPACE = "default"
# As AICR's snapshot --timeout default; bounds the API reads of a live capture.
SNAPSHOT_TIMEOUT = "5m"

# ---- checks that create workloads (aicr.checks.probes) ----------------------------
# Every wait of a check ends this long before the check's own deadline: the probe
# session's cleanup and the result write must still fit before the Job is killed.
PROBE_CLEANUP_SECONDS = 30.0  # own budget for deleting a check's workloads and seeing them gone
RESULT_RESERVE_SECONDS = 10.0  # writing the result ConfigMap after cleanup
# How often cleanup looks again whether deleted workloads are gone (label-selected lists).
PROBE_GONE_POLL_SECONDS = 0.25
# A watch stream is renewed at least this often (the server's timeoutSeconds).
PROBE_WATCH_SECONDS = 60
# Backoff while the API server cannot be reached during a wait.
PROBE_RETRY_START_SECONDS = 0.2
PROBE_RETRY_MAX_SECONDS = 5.0
