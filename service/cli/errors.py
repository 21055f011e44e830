"""The command line's bottom layer: the one-line user error and the exit codes (`main.py`
prints a UserError as `rating-service COMMAND: reason` and exits 2). Imports nothing."""

from __future__ import annotations

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_TIMEOUT = 3  # `--wait`: no outcome within --timeout (the service is not running, or is behind)
EXIT_NOT_DURABLE = 4  # `--durable`: applied, but the server did not confirm the commit on disk


class UserError(Exception):
    """A problem with the user's input: printed as one line, exit code 2."""
