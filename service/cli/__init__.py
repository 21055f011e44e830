"""The `rating-service` command line: the parser (main.py) and one module per command family.
Nothing outside this package imports it."""
