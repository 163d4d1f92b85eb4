"""``python -m asyncclient``: the command line."""

from asyncclient.cli.app import main

raise SystemExit(main())
