"""A runner of a Redis journal, for the tests that pause (SIGSTOP) or kill (SIGKILL) it.

Usage: ``python tests/journal_worker.py URL LEASE_SECONDS``. It opens the journal
(``accept_journal_loss``: the test's Redis has no AOF; durability is not what is tested)
and records ``submit`` for rows 0, 1, 2, ... a few hundredths of a second apart,
printing ``submitted <row>`` after each. A record refused because another runner took
the lease prints ``fenced <row>`` and exits 3; any other write error exits 4.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from asyncclient._states import JournalEvent
from asyncclient.errors import JournalWriteError
from asyncclient.fleet.journal import JournalFencedError, open_redis_journal


async def main(url: str, lease: float) -> int:
    journal = await open_redis_journal(
        url, "worker rows", key=None, accept_journal_loss=True, lease_seconds=lease
    )
    print("open", flush=True)
    index = 0
    try:
        while True:
            try:
                await journal.arecord(JournalEvent.SUBMIT, index, f"fp{index}")
            except JournalFencedError:
                print(f"fenced {index}", flush=True)
                return 3
            except JournalWriteError as exc:
                print(f"write error {exc}", flush=True)
                return 4
            print(f"submitted {index}", flush=True)
            index += 1
            await asyncio.sleep(0.02)
    finally:
        journal.close()


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1], float(sys.argv[2]))))
