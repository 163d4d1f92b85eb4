"""The gate: background reads wait while creations need the tokens (submissions first)."""

from __future__ import annotations

import asyncio
import itertools

from asyncclient.http.gate import Gate


async def test_announced_creations_hold_reads_back_while_the_tokens_do_not_cover_them() -> None:
    tokens = [3.0]
    gate = Gate(spare=lambda: tokens[0])
    ahead = gate.expect(3)
    assert gate.held()  # three tokens for three creations: none over for a read
    tokens[0] = 4.0
    assert not gate.held()  # one over: a read may take it
    tokens[0] = 3.5
    reader = asyncio.create_task(gate.turn())
    await asyncio.sleep(0)
    assert not reader.done()
    tokens[0] = 2.5  # a creation was sent: one token spent, one creation fewer ahead
    ahead.sent()
    await asyncio.sleep(0)
    assert not reader.done()  # 2.5 tokens for 2 creations: still nothing over
    tokens[0] = 2.1
    ahead.sent()
    await asyncio.wait_for(reader, 1)  # 2.1 tokens for 1 creation: one over
    assert gate.ahead == 1


async def test_closing_lets_go_of_every_creation_still_announced() -> None:
    gate = Gate(spare=lambda: 0.0)
    ahead = gate.expect(5)
    reader = asyncio.create_task(gate.turn())
    await asyncio.sleep(0)
    assert not reader.done()
    ahead.close()
    await asyncio.wait_for(reader, 1)
    assert gate.ahead == 0 and ahead.left == 0
    ahead.close()
    ahead.sent()  # nothing left to let go of: the count never goes below zero
    assert gate.ahead == 0


async def test_without_a_count_of_tokens_announcements_hold_nothing() -> None:
    gate = Gate()  # e.g. a limiter shared through Redis
    gate.expect(100)
    await asyncio.wait_for(gate.turn(), 1)


async def test_a_creation_waiting_for_its_token_holds_reads_whatever_the_tokens() -> None:
    gate = Gate(spare=lambda: 1000.0)
    with gate.foreground():
        reader = asyncio.create_task(gate.turn())
        await asyncio.sleep(0)
        assert not reader.done()
    await asyncio.wait_for(reader, 1)


async def test_reads_keep_a_share_of_the_turns_while_creations_hold_them_back() -> None:
    """Submissions first, not all: with a creation always waiting for its token, one
    turn in 25 still goes to a read (before, reads waited for the last creation), and
    no more (one in ten took a tenth of a saturated Free plan)."""
    gate = Gate(spare=lambda: 0.0)
    gate.expect(10_000)  # a batch announced; the tokens never cover it
    reads = 0
    creations = 0
    reader_turns: list[int] = []

    async def reader() -> None:
        nonlocal reads
        while True:
            await gate.turn()
            reads += 1
            reader_turns.append(creations)
            await asyncio.sleep(0)

    task = asyncio.create_task(reader())
    for _ in range(1000):
        with gate.foreground():  # a creation waits for its token, then is sent
            await asyncio.sleep(0)
        creations += 1
        await asyncio.sleep(0)
    task.cancel()
    share = reads / (reads + creations)
    assert 0.03 <= share <= 0.05, share
    gaps = [b - a for a, b in itertools.pairwise(reader_turns)]
    assert max(gaps) <= 30  # spread out, not one burst at the end


async def test_without_a_share_creations_hold_reads_back_for_as_long_as_they_wait() -> None:
    gate = Gate(share=0.0)
    with gate.foreground():
        reader = asyncio.create_task(gate.turn())
        for _ in range(100):
            await asyncio.sleep(0)
        assert not reader.done()
    await asyncio.wait_for(reader, 1)
