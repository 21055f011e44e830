"""The running service: the FastStream app, the stream processor, the Redis store, the HTTP
endpoints (health, metrics), settings and logging. Imports the engine, the rating use case
and the schemas; never the command line."""
