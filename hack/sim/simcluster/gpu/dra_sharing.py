"""GPU sharing through the NVIDIA DRA driver: its feature gates and a claim's GpuConfig.

What is modelled (and nothing more), from nvidia-dra-driver-gpu 25.12.0, the chart
and image the sim pins (`simcluster.gpu.modes`):

- The gates. `TimeSlicingSettings` and `MPSSupport` are alpha and off by default
  (`pkg/featuregates/featuregates.go`, `defaultFeatureGates`). The chart sets them
  from its values' `featureGates` map, rendered into the kubelet plugin's
  `FEATURE_GATES` environment variable as `Name=value,` per key, in key order
  (`templates/kubeletplugin.yaml`: `{{ range $key, $value := .Values.featureGates }}`,
  which Go templates walk sorted) and left out when the map is empty (the chart's
  default, `featureGates: {}`). The gates here are those of the DRA driver values
  the sim is given (`modes.dra_values`).
- A claim's opaque config: `spec.devices.config[].opaque` with `driver:
  gpu.nvidia.com` and `parameters` a `resource.nvidia.com/v1beta1` `GpuConfig`,
  whose `sharing.strategy` is `TimeSlicing` or `MPS`
  (`api/nvidia.com/resource/v1beta1/{gpuconfig,sharing}.go`). The claim's
  `status.allocation.devices.config` carries it to the plugin.
- Prepare: the plugin normalizes and validates each GpuConfig
  (`cmd/gpu-kubelet-plugin/device_state.go`, `prepareDevices`), and a strategy
  whose gate is off fails validation as any unknown one does (`validate.go`:
  `unknown GPU sharing strategy: TimeSlicing`); the error climbs through
  `prepare devices failed: ` (`Prepare`) and `error preparing devices for claim
  NS/NAME:UID: ` (`driver.go`, `nodePrepareResource`) to the kubelet, which
  reports `NodePrepareResources failed for claim NS/NAME: ...` in its
  `FailedPrepareDynamicResources` event (kubelet `pkg/kubelet/cm/dra/manager.go`).
  The pod stays ContainerCreating. With the gate on the claim prepares: every pod
  that references the claim is given its device, as without a config (what
  time-slicing or an MPS daemon change is how the GPU is shared, not which one).
- The MPS control daemon (`cmd/gpu-kubelet-plugin/sharing.go`): applying an MPS
  config (`applySharingConfig` in `device_state.go`) starts, per claim, a Deployment
  `mps-control-daemon-<claim UID>-<5 hex of the devices' UUIDs' sha256>` in the
  driver's namespace, pinned to the node (`templates/mps-control-daemon.tmpl.yaml`:
  one privileged `nvidia-cuda-mps-control -d` container whose startup probe reads
  the startup log the script writes last), then `AssertReady` polls it with a
  backoff (1 s doubling, 4 steps, jitter 1, cap 10 s) until the Deployment has one
  ready replica and its one pod's container is ready; when the steps run out
  prepare fails with the last attempt's error, `MPS control daemon is not yet
  ready: waiting for MPS control daemon to come online` (a Deployment with no
  ready replica), wrapped as `error applying config: ` (`prepareDevices`) and then
  as above. The `mps-daemon-not-ready` GPU node fault is that daemon never
  becoming ready on the node (its pod not starting or its startup probe never
  passing: the image not pulled, `nvidia-cuda-mps-control` failing on the host's
  driver root). The Deployment itself is not created (nothing reads it); healthy,
  an MPS claim prepares at once.
- Where the plugin's gates are read: the kubelet plugin DaemonSet
  `nvidia-dra-driver-gpu-kubelet-plugin` (the chart's name, `nvidia-dra-driver-gpu`
  unless `nameOverride`, then `-kubelet-plugin`) in `nvidia-dra-driver`, its `gpus`
  container's `FEATURE_GATES`, as `kubelet_plugin` renders it from the values the
  sim is given (containers `compute-domains` and `gpus`, the pinned image, the
  values' default affinity term `nvidia.com/gpu.present In true`). Where no such
  DaemonSet exists, the recipes' DRA driver values (`modes.dra_values`) hold the
  gates.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

DRIVER = "gpu.nvidia.com"
CONFIG_API = "resource.nvidia.com/v1beta1"
GPU_CONFIG = "GpuConfig"
TIME_SLICING, MPS = "TimeSlicing", "MPS"
GATE_OF = {TIME_SLICING: "TimeSlicingSettings", MPS: "MPSSupport"}
DEFAULT_GATES = {"TimeSlicingSettings": False, "MPSSupport": False}  # alpha, off
NAMESPACE = "nvidia-dra-driver"
PLUGIN = "nvidia-dra-driver-gpu-kubelet-plugin"
PLUGIN_CONTAINER = "gpus"
IMAGE = "nvcr.io/nvidia/k8s-dra-driver-gpu:v25.12.0"
# applySharingConfig's error when AssertReady gives up (its last attempt's error)
MPS_NOT_READY = "MPS control daemon is not yet ready: waiting for MPS control daemon to come online"


def _truth(value: Any) -> bool:
    return value is True or str(value).strip().lower() == "true"


def gates(values: Mapping[str, Any]) -> dict[str, bool]:
    """The sharing gates the kubelet plugin runs with: the defaults, then the values'."""
    given = values.get("featureGates") or {}
    return {name: _truth(given.get(name, on)) for name, on in DEFAULT_GATES.items()}


def feature_gates_env(values: Mapping[str, Any]) -> str | None:
    """The chart's `FEATURE_GATES` value for `values` (None: the chart sets no variable)."""
    given = values.get("featureGates") or {}
    if not given:
        return None
    shown = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in given.items()}
    return "".join(f"{k}={v}," for k, v in sorted(shown.items()))


def strategies(claim: Mapping[str, Any]) -> list[str]:
    """The sharing strategies the claim's GpuConfigs for this driver ask for, in order."""
    status = (claim.get("status") or {}).get("allocation") or {}
    configs = ((status.get("devices") or {}).get("config")) or (
        ((claim.get("spec") or {}).get("devices") or {}).get("config") or []
    )
    out = []
    for c in configs:
        opaque = c.get("opaque") or {}
        params = opaque.get("parameters") or {}
        if opaque.get("driver") != DRIVER or params.get("kind") != GPU_CONFIG:
            continue
        strategy = (params.get("sharing") or {}).get("strategy")
        if strategy:
            out.append(str(strategy))
    return out


def _kubelet_message(claim: Mapping[str, Any], cause: str) -> str:
    """The kubelet's FailedPrepareDynamicResources message for a claim the plugin failed."""
    meta = claim.get("metadata") or {}
    ns, name, uid = meta.get("namespace"), meta.get("name"), meta.get("uid")
    return (
        "Failed to prepare dynamic resources: prepare dynamic resources: "
        f"NodePrepareResources failed for claim {ns}/{name}: error preparing devices for "
        f"claim {ns}/{name}:{uid}: prepare devices failed: {cause}"
    )


def prepare_error(
    claim: Mapping[str, Any], on: Mapping[str, bool], mps_daemon_ready: bool = True
) -> str | None:
    """The kubelet event's message when the plugin cannot prepare `claim`, else None.

    Each config is validated, then applied (`prepareDevices`): a strategy whose gate
    is off fails validation; an MPS one, applied, waits for its control daemon
    (`mps_daemon_ready` False: the `mps-daemon-not-ready` fault).
    """
    for strategy in strategies(claim):
        gate = GATE_OF.get(strategy)
        if gate is None or not on.get(gate):
            return _kubelet_message(
                claim, f"error validating GPU config: unknown GPU sharing strategy: {strategy}"
            )
        if strategy == MPS and not mps_daemon_ready:
            return _kubelet_message(claim, f"error applying config: {MPS_NOT_READY}")
    return None


def kubelet_plugin(values: Mapping[str, Any]) -> dict[str, Any]:
    """The kubelet plugin DaemonSet the chart renders from `values` (what the sim reads)."""
    gates_env = feature_gates_env(values)
    env = [{"name": "FEATURE_GATES", "value": gates_env}] if gates_env is not None else []
    labels = {
        "app.kubernetes.io/name": "nvidia-dra-driver-gpu",
        "nvidia-dra-driver-gpu-component": "kubelet-plugin",
    }
    term = {"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [term]}]
            }
        }
    }
    containers = [
        {"name": "compute-domains", "image": IMAGE},
        {"name": PLUGIN_CONTAINER, "image": IMAGE, "env": env},
    ]
    pod = {"affinity": affinity, "tolerations": [{"operator": "Exists"}], "containers": containers}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": PLUGIN, "namespace": NAMESPACE, "labels": dict(labels)},
        "spec": {
            "selector": {"matchLabels": dict(labels)},
            "template": {"metadata": {"labels": dict(labels)}, "spec": pod},
        },
    }


def env_gates(daemonset: Mapping[str, Any]) -> dict[str, bool] | None:
    """The sharing gates the plugin DaemonSet's `gpus` container runs with (None: none)."""
    template = ((daemonset.get("spec") or {}).get("template") or {}).get("spec") or {}
    for c in template.get("containers") or []:
        if c.get("name") != PLUGIN_CONTAINER:
            continue
        env = {str(e.get("name")): str(e.get("value") or "") for e in c.get("env") or []}
        pairs = [p.split("=", 1) for p in env.get("FEATURE_GATES", "").split(",") if "=" in p]
        return gates({"featureGates": {k.strip(): v.strip() for k, v in pairs}})
    return None
