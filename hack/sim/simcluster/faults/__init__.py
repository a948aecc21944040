"""Faults of the simulated cluster: real-world failures, applied and healed on demand.

What is modelled (and nothing more):

- GPU node faults (`nodes.py`), Node annotations the GPU node model reads:
  `driver-not-loaded` (nvidia-smi fails as without the kernel module),
  `gpu-lost` (a pod sees one GPU fewer than it was given), `driver-mismatch`
  (the loaded driver differs from the node's labels); and the isolation faults
  the runtime's device handling reads (`simcluster.gpu.devices`):
  `permissive-toolkit`, `runtimeclass-leak`, `device-leak`, `shared-device`,
  `dra-driver-down`, and `mps-daemon-not-ready` (the DRA driver's MPS control
  daemon never ready: `simcluster.gpu.dra_sharing`).
- Container runtime faults (`nodes.py`), a Node annotation the runtime reads
  (`simcluster.runtime.handlers`): `no-sandbox-handler` (containerd has no
  runtime for gVisor's `runsc` handler).
- Pod faults (`pods.py`), rules the process runtime matches when it starts a
  pod it plays: `image-pull`, `crash`, `oom`, `never-ready`, `evict`.
- Control-plane faults: `apiserver-down` stops the API server.

`registry.py` is the one list (name, the failure it models, scope, apply,
heal) behind `hack/sim/sim fault|heal` and the test harness.
"""
