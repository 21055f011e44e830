"""`python -m service` is the `rating-service` command."""

from service.cli import main

raise SystemExit(main())
