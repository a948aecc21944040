"""What the cluster holds: bootstrap objects and reset (contents), named scenarios (named)."""
