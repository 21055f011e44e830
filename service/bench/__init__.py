"""`rating-service bench`: the engines, the service end to end, the bare-consumer ceiling and
memory, on deterministic workloads."""
