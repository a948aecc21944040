"""A small model of GPU nodes, so pods that run `nvidia-smi` on them behave like GPU pods.

What is modelled (and nothing more):

- A node's GPU profile, read from its labels as GPU feature discovery writes
  them: product (`nvidia.com/gpu.product`, dashes shown as spaces, as
  nvidia-smi prints the name), count (`nvidia.com/gpu.count`), memory in MiB
  (`nvidia.com/gpu.memory`) and driver version
  (`nvidia.com/cuda.driver-version.full`, else major.minor.rev). The CUDA
  version is `nvidia.com/cuda.runtime-version.full` when present, else the one
  the driver branch ships (a small table in `model.py`).
- The GPUs each container was given (`devices.py`): the device plugin's
  lowest free indices per node for its `nvidia.com/gpu` limit, or (DRA) the
  devices of driver `gpu.nvidia.com` in the ResourceClaims it references, from
  its node's pool. The container sees exactly those GPUs (numbered from 0 by
  nvidia-smi, with stable UUIDs per node and device), as /dev/nvidia<N>
  stand-ins, NVIDIA_VISIBLE_DEVICES and an `nvidia-smi` on its PATH. A claim
  whose `GpuConfig` asks for a sharing strategy the DRA driver's feature gates
  leave off fails to prepare as the driver's does, and so does an MPS one under
  the `mps-daemon-not-ready` fault (`dra_sharing.py`).
- Faults, set on the Node as annotations by `hack/sim/sim fault` (simcluster.faults):
  `sim.aicr.dev/gpu-fault`, a comma-separated set: `driver-not-loaded` makes
  nvidia-smi fail as it does on a node whose kernel module is not loaded (exit 9,
  the driver message); `gpu-lost` hides the pod's last GPU (a GPU that fell off
  the bus: the pod sees one GPU fewer than it was given); `permissive-toolkit`,
  `runtimeclass-leak`, `device-leak`, `shared-device` and `dra-driver-down`
  break the isolation in `devices.py`; `sim.aicr.dev/gpu-driver: VERSION` is the
  driver actually loaded when it differs from what the node's labels say.

- The DCGM exporter of each GPU node (`dcgm.py`, served by `dcgm_exporter.py`
  as the GPU Operator's dcgm-exporter pods: see simcluster.components) with
  readings that follow use and series mapped to the pods the GPUs were
  allocated to (device plugin, and DRA claims with `KUBERNETES_ENABLE_DRA`, as
  dcgm-exporter maps them), collected once per `DCGM_EXPORTER_INTERVAL` (or
  `-c`; 30000 ms by default, as dcgm-exporter), and DCGM's load generator
  `dcgmproftester12` on a GPU container's PATH (the image
  `nvcr.io/nvidia/cloud-native/dcgm`), which holds the container's GPUs for its
  `-d` seconds when the container runs as root, and otherwise exits 227 after
  `CacheManager Init Failed. Error: -29` with no load, as DCGM does.

Ownership: a pod bound to a node whose first container command is `nvidia-smi`
is played by the process runtime (not KWOK); the command runs `smi.py` with the
profile instead of a real binary, and its output goes through the usual log
files and the simulated kubelet's log endpoint. On a node without GPUs the
command is not found, as in a container without the NVIDIA runtime hook.
"""
