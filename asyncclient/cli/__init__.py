"""The command line: the ``asyncclient`` command and ``python -m asyncclient``."""

# Owns: the parser and the commands (``app``), ``batch`` and ``demo`` (the main job),
# the read-only ``resources`` commands, results and downloads (``results``), progress bars
# and plain progress lines (``progress``, ``terminal``), output helpers (``output``), the
# exit-code table (``exits``) and what a journal says of earlier runs (``journal``).
# May import: everything below it, the client included; nothing imports it but
# ``asyncclient.__main__`` and the console script.

from asyncclient.cli.app import main

__all__ = ["main"]
