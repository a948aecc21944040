"""Named defaults, each with its reason: the run's, the runner's, its check pods'."""

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
PROBE_LOG_POLL_SECONDS = 0.5  # a running probe's log, read again until its report is whole
# A watch stream is renewed at least this often (the server's timeoutSeconds).
PROBE_WATCH_SECONDS = 60
# Backoff while the API server cannot be reached during a wait.
PROBE_RETRY_START_SECONDS = 0.2
PROBE_RETRY_MAX_SECONDS = 5.0

# ---- the runner and the check pods it starts ------------------------------------

# Where a check pod finds its inputs (the run ConfigMap, mounted read-only).
RUN_DIR = "/etc/aicr/run"
RUN_DIR_ENV = "AICR_RUN_DIR"
RESULT_CONFIGMAP_ENV = "AICR_RESULT_CONFIGMAP"
TERMINATION_LOG = "/dev/termination-log"
TERMINATION_LOG_ENV = "AICR_TERMINATION_LOG"
# The check's effective timeout (config > recipe > catalog), which its pod cannot
# work out alone; its budgets derive from it.
CHECK_TIMEOUT_ENV = "AICR_CHECK_TIMEOUT_SECONDS"

# The distroless/nonroot convention; any fixed non-zero uid satisfies restricted PSA.
RUN_AS_USER = 65532
# Kept after the Job finishes so `--no-cleanup` (or a crashed orchestrator) leaves
# something to inspect; cleanup normally removes it long before.
JOB_TTL_SECONDS = 3600
# Checks exit on SIGTERM at once; a short grace keeps cleanup and interruption quick.
TERMINATION_GRACE_SECONDS = 5
# The kubelet keeps at most 4096 bytes of a termination message.
TERMINATION_MESSAGE_LIMIT = 4096

# A pod that stays unschedulable this long is reported with the scheduler's reason
# (the issue asks for 30 s at most; a short grace rides out binding races).
UNSCHEDULABLE_GRACE_SECONDS = 10.0
# CreateContainerConfigError can be transient (a volume source appearing late).
CONFIG_ERROR_GRACE_SECONDS = 10.0
# Slack on top of activeDeadlineSeconds before the orchestrator stops waiting on its
# own: the Job controller normally reports DeadlineExceeded well within it.
DEADLINE_SLACK_SECONDS = 30.0
# How long the API server may be unreachable before a running check is given up.
API_UNREACHABLE_SECONDS = 60.0
API_BACKOFF_START = 0.2
API_BACKOFF_MAX = 5.0
# Server-side watch timeout: streams are renewed this often even when idle.
WATCH_SECONDS = 60
# How long `run()` blocks on its event queue before looking at the cancel flag.
POLL_SECONDS = 0.2
# Deleting everything a run made has its own budget: the run's deadline may be spent.
CLEANUP_TIMEOUT_SECONDS = 120.0
# A check writes its result ConfigMap with retries over this long (API blips).
RESULT_WRITE_SECONDS = 30.0
# Each write attempt's connect/read/write timeout: a stalled TLS handshake costs one
# attempt, not the whole budget. No attempt starts with less than the minimum left.
RESULT_ATTEMPT_SECONDS = 6.0
RESULT_ATTEMPT_MIN_SECONDS = 1.0
# Local executor: TokenRequest lifetime floor (the API server's minimum is 10 min).
TOKEN_MIN_SECONDS = 600
# Exclusive GPUs across runs (aicr.runner.gpu_lease): a holder that has not renewed
# its Lease for this long is taken to be gone (a crashed run).
GPU_LEASE_SECONDS = 30
GPU_LEASE_RENEW_SECONDS = 10.0
# How often a run waiting for the GPUs looks at the Lease again.
GPU_LEASE_POLL_SECONDS = 1.0
