"""``python -m tau.cli``: the ``tau`` command."""

from tau.cli.main import main

raise SystemExit(main())
