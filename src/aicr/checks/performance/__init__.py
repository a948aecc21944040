"""Performance-phase checks: measured throughput and latency against recipe thresholds."""
