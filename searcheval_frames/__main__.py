"""``python -m searcheval_frames`` runs the ``searcheval`` command line."""

from .cli import main

raise SystemExit(main())
