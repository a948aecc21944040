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
CLEANUP_TIMEOUT_SECONDS = 120.0  # own budget: the run's deadline may already be spent
