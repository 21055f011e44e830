"""Pure rating engines: no I/O, no Redis, no clock; one module per rating system."""
