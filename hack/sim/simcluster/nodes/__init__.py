"""The simulated nodes: the static layout from KWOK profiles, and nodes an autoscaler adds."""
