"""Networking of the simulated cluster (see `namespace`)."""
