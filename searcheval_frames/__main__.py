"""``python -m searcheval_frames`` runs the ``searcheval`` command line."""

from .cli.main import main

raise SystemExit(main())
