"""Allows ``python -m smrlab``, the same as the ``smrlab`` console command."""

from smrlab.cli import main

raise SystemExit(main())
