"""A process that uses a client, forks, and uses it in the child (and the parent again).

Usage: ``python tests/fork_worker.py SCENARIO --base-url URL --api-key KEY [--redis URL]``
(``tests/test_fork.py`` runs it against an emulator in its own process). A scenario is
what a server that forks its workers after loading the app (gunicorn ``--preload``) does
with a client made and used at import:

- ``sync``: a :class:`Client` creates and awaits a video, and another thread is still
  awaiting one when the process forks; the child creates and awaits one, reads one
  through a namespace taken before the fork, and awaits the job the parent's thread
  awaits; the parent's waiting thread ends and the parent creates and awaits one more.
- ``sync-redis``: the same with ``redis=URL`` (a fleet: the limiter and the polling go
  through Redis); the child awaits the parent's job rebuilt from its id.
- ``async``: an :class:`AsyncClient` used in one ``asyncio.run``; the child uses it in
  its own ``asyncio.run``.
- ``async-session``: the same with ``session=`` given (it cannot be made again).
- ``async-redis``: the same with ``redis=URL``.
- ``async-redis-created``: the same, the master only creating (not awaiting) a video;
  the child says whether its fleet id is the parent's.

The child has ``CHILD_SECONDS`` to end (``signal.alarm``): a hang kills it. The worker
prints one JSON line: what the child did (``child``: ``ok``, the error it raised, or how
it died) and, for the sync scenarios, what the parent did after (``parent``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import aiohttp

from asyncclient import AsyncClient, Client, Plan
from asyncclient.awaiting.poller import PollPolicy

CHILD_SECONDS = 20
FAST = PollPolicy(min_interval=0.01, max_interval=0.05)
SCALE = 600.0


def _options(args: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, Any] = {
        "base_url": args.base_url,
        "plan": Plan.PREMIUM.rate_limit.scaled(SCALE),
        "polling": FAST,
    }
    if args.redis:
        options["redis"] = args.redis
    return options


def _talking(client: Client) -> Any:
    return client.projects.create_talking_avatar(
        script="Hi", avatar_id="avatar_001", voice_id="voice_001"
    )


async def _atalking(client: AsyncClient) -> str:
    job = await client.projects.create_talking_avatar(
        script="Hi", avatar_id="avatar_001", voice_id="voice_001"
    )
    detail = await job.wait(timeout=30)
    return str(detail.status)


def _in_child(work: Any) -> None:
    """Run ``work()`` in the forked child and end it: 0 when it returned, 3 when it
    raised (the error written to the pipe the parent reads)."""
    signal.alarm(CHILD_SECONDS)
    try:
        outcome = {"ok": work()}
    except BaseException as exc:
        outcome = {"error": type(exc).__name__, "message": str(exc)}
    os.write(_PIPE[1], json.dumps(outcome).encode())
    os._exit(0 if "ok" in outcome else 3)


_PIPE = os.pipe()


def _fork(work: Any) -> dict[str, Any]:
    """Fork; the child runs ``work``; what it did, read by the parent."""
    pid = os.fork()
    if pid == 0:
        _in_child(work)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return {"died": signal.Signals(os.WTERMSIG(status)).name}
    os.set_blocking(_PIPE[0], False)
    try:
        said = os.read(_PIPE[0], 65536)
    except BlockingIOError:
        said = b"{}"
    outcome: dict[str, Any] = json.loads(said or b"{}")
    outcome["exit"] = os.WEXITSTATUS(status)
    return outcome


def sync_scenario(args: argparse.Namespace) -> dict[str, Any]:
    client = Client(args.api_key, **_options(args))
    warm = _talking(client).wait(timeout=30)  # the warm-up call, in the master
    waiting = _talking(client)
    result: list[str] = []
    thread = threading.Thread(target=lambda: result.append(waiting.wait(timeout=30).status))
    thread.start()  # a wait under way while the process forks

    videos = client.videos  # a namespace taken before the fork

    def child() -> str:
        detail = _talking(client).wait(timeout=30)
        again = videos.get(warm.id)
        # The job the parent's thread awaits, awaited here too (a fleet's: through the
        # child's own client, as a job of the parent's fleet poller cannot be).
        inherited = (
            client.jobs.from_video_id(str(waiting.video_id)) if args.redis else waiting
        ).wait(timeout=30)
        client.close()
        return f"{detail.status} {again.status} {inherited.status}"

    report = {"child": _fork(child)}
    thread.join(30)
    after = _talking(client).wait(timeout=30)
    client.close()
    report["parent"] = {"waited": result, "after": after.status}
    return report


def async_scenario(args: argparse.Namespace) -> dict[str, Any]:
    made: list[AsyncClient] = []

    async def warm_up() -> str:
        options = _options(args)
        if args.scenario == "async-session":
            options["session"] = aiohttp.ClientSession()
        made.append(AsyncClient(args.api_key, **options))
        if args.scenario == "async-redis-created":
            await made[0].projects.create_talking_avatar(
                script="Hi", avatar_id="avatar_001", voice_id="voice_001"
            )
            return "created"
        return await _atalking(made[0])

    asyncio.run(warm_up())  # in the master, before the fork; the client is not closed
    client = made[0]
    fleet = getattr(client.jobs.poller, "store", None)
    parent_id = None if fleet is None else fleet.process

    def child() -> str:
        async def use() -> str:
            try:
                status = await _atalking(client)
                if fleet is not None:
                    status += " own id" if fleet.process != parent_id else " parent's id"
                return status
            finally:
                await client.aclose()

        return asyncio.run(use())

    return {"child": _fork(child)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "scenario",
        choices=[
            "sync",
            "sync-redis",
            "async",
            "async-session",
            "async-redis",
            "async-redis-created",
        ],
    )
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--api-key", required=True)
    parser.add_argument("--redis")
    args = parser.parse_args()
    run = sync_scenario if args.scenario.startswith("sync") else async_scenario
    print(json.dumps(run(args)), flush=True)
    os._exit(0)  # what the parent's loop thread holds is not waited for


if __name__ == "__main__":
    main()
