"""``python -m asyncclient``: the command line."""

from asyncclient.cli import main

raise SystemExit(main())
