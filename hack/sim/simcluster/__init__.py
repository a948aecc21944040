"""A simulated GPU cluster: a real Kubernetes control plane with KWOK nodes.

`Sim` (simcluster.cluster.sim) starts and stops it; `python -m simcluster` is the CLI
that `make sim-up` / `make sim-down` call.
"""
