"""The control plane and its bookkeeping: the Sim itself, PKI, processes, paths, API helpers."""
