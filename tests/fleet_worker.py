"""One process of a fleet: create N videos with one shared key, await them, report.

Usage: ``python tests/fleet_worker.py --base-url URL --api-key KEY --jobs N [options]``
(``--help`` lists them). The tests that kill a lease holder and ``benchmarks/fleet.py``
run several at once against one emulator and one redis-server.

It prints, as they happen: ``process <fleet process id>``, ``created <n>``, and
``leading`` / ``following`` each time it takes or loses the fleet's lease; at the end,
one JSON line (``{"report": ...}``) with what it saw: each video's monotonic time of
completion as this process learnt it (``time.monotonic`` is one clock for every process
of a host), the poller's requests, the fleet counters and the notifications it handled
so far; a worker serving notifications (``--listen``) stays until its standard input
closes, then prints ``{"final": {"notified": n}}``, every notification it handled.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import ssl
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from aiohttp import web

from asyncclient import AsyncClient, Plan, VideoJob
from asyncclient.awaiting.poller import PollPolicy
from asyncclient.errors import VideoFailedError
from asyncclient.fleet.poller import FleetPoller


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--api-key", required=True)
    parser.add_argument("--redis", default=None, help="the fleet's Redis URL (none: alone)")
    parser.add_argument("--jobs", type=int, required=True, help="videos to create and await")
    parser.add_argument("--interval", type=float, default=0.2, help="poll interval, seconds")
    parser.add_argument("--scale", type=float, default=60.0, help="the emulator's time scale")
    parser.add_argument("--avatar", required=True)
    parser.add_argument("--voice", required=True)
    parser.add_argument("--webhook-url", default=None, help="the fleet's notification URL")
    parser.add_argument("--listen", type=int, default=0, help="serve notifications here")
    parser.add_argument("--certfile", default=None)
    parser.add_argument("--keyfile", default=None)
    parser.add_argument("--safety-net", type=float, default=None, help="polling interval")
    return parser


async def _serve_notifications(
    client: AsyncClient, port: int, certfile: str, keyfile: str
) -> web.AppRunner:
    """Serve ``client.webhooks`` on loopback ``port`` (shared by every worker, HTTPS)."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certfile, keyfile)
    runner = web.AppRunner(client.webhooks.app("/hooks"), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port, ssl_context=context, reuse_port=True).start()
    return runner


async def _watch_lease(poller: FleetPoller) -> None:
    leading = False
    while True:
        if poller.leading != leading:
            leading = poller.leading
            print("leading" if leading else "following", flush=True)
        await asyncio.sleep(0.01)


async def run(opts: argparse.Namespace) -> dict[str, Any]:
    if opts.safety_net is not None:
        policy = PollPolicy(
            min_interval=opts.safety_net, max_interval=opts.safety_net, first_delay=opts.safety_net
        )
    else:
        policy = PollPolicy(min_interval=opts.interval, max_interval=opts.interval, jitter=0.0)
    rate = Plan.PREMIUM.rate_limit.scaled(opts.scale)
    seen: dict[str, float] = {}
    failed = 0
    notified = 0
    async with AsyncClient(
        opts.api_key,
        base_url=opts.base_url,
        plan=rate,
        polling=policy,
        redis=opts.redis,
        webhook_url=opts.webhook_url,
    ) as client:
        poller = client.jobs.poller
        runner = None
        if opts.listen:

            @client.webhooks.on_event
            def count(_: object) -> None:
                nonlocal notified
                notified += 1

            runner = await _serve_notifications(client, opts.listen, opts.certfile, opts.keyfile)
        watcher = None
        if isinstance(poller, FleetPoller):
            print(f"process {poller.store.process}", flush=True)
            watcher = asyncio.ensure_future(_watch_lease(poller))
        limit = asyncio.Semaphore(20)

        async def create(i: int) -> VideoJob:
            async with limit:
                return await client.projects.create_talking_avatar(
                    script=f"Video {i}", avatar_id=opts.avatar, voice_id=opts.voice
                )

        jobs = list(await asyncio.gather(*(create(i) for i in range(opts.jobs))))
        print(f"created {len(jobs)}", flush=True)

        async def wait(job: VideoJob) -> None:
            nonlocal failed
            try:
                await job.wait()
            except VideoFailedError:
                failed += 1
            seen[job.video_id or ""] = time.monotonic()

        await asyncio.gather(*(wait(job) for job in jobs))
        if watcher is not None:
            watcher.cancel()
        stats = poller.stats
        report: dict[str, Any] = {
            "seen": seen,
            "failed": failed,
            "requests": stats.requests,
            "list_requests": stats.list_requests,
            "detail_requests": stats.detail_requests,
            "rate_limited": client.stats.rate_limited,
            "client_requests": client.stats.requests,
            "notified": notified,
        }
        if isinstance(poller, FleetPoller):
            fleet = poller.fleet
            report.update(
                process=poller.store.process,
                leads=fleet.leads,
                rounds_led=fleet.rounds_led,
                published=fleet.published,
                taken=fleet.taken,
            )
        print(json.dumps({"report": report}), flush=True)
        if runner is not None:
            # Stay until told: other workers' notifications may still come here.
            await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
            await runner.cleanup()
            # What it handled for the whole fleet, the others' notifications included.
            print(json.dumps({"final": {"notified": notified}}), flush=True)
    return report


def main() -> None:
    asyncio.run(run(_parser().parse_args()))


if __name__ == "__main__":
    main()
