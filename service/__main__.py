"""`python -m service` is the `rating-service` command."""

from service.cli.main import main

raise SystemExit(main())
