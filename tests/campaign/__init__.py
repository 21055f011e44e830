"""The fault campaign (docs/operations/faults.md): a random workload of every system's events,
late events, corrections, withdrawals, closes and reopens through two replicas while faults
are injected, then the invariants checked. `python -m tests.campaign --help`."""
