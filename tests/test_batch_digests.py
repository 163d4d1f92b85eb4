"""The titles' digest set: rows noted in bulk (a resumed batch's finished rows) answer
as rows added one by one do, and a resumed batch still refuses a title used before."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from asyncclient import AsyncClient
from asyncclient._states import RowOutcome
from asyncclient.batch import digests
from asyncclient.batch.digests import DigestSet, digest_of, local_digest
from asyncclient.emulator import Emulator
from tests.test_batch_runner import creations, finish, rows

pytestmark = pytest.mark.emulator(seed=5, processing_seconds=60)


@pytest.mark.parametrize("count", [10, digests.RECENT * 3])  # one by one; sorted at once
def test_noted_strings_answer_as_added_ones_with_the_first_row_kept(count: int) -> None:
    noted, added = DigestSet(), DigestSet()
    order = list(range(count))
    random.Random(7).shuffle(order)
    for row in order:
        noted.note(f"t{row}", row)
        added.add(f"t{row}", row)
    noted.note(f"t{order[0]}", 10**6)  # noted again later: the first row stays
    assert len(noted) == len(added) == count
    assert [noted.row_of(f"t{r}") for r in range(count)] == list(range(count))
    assert noted.row_of("t-missing") is None
    assert noted.add(f"t{order[3]}", 10**6) == order[3]
    keys = noted.sorted()
    assert list(keys) == sorted(keys) and len(set(keys)) == count
    assert list(keys) == list(added.sorted())


def test_noted_strings_keep_the_rows_of_those_added_before_them() -> None:
    seen = DigestSet()
    for row in range(100):
        seen.add(f"t{row}", row)
    for row in range(50, digests.RECENT * 2):  # half of the first hundred again
        seen.note(f"t{row}", row + 1000)
    assert seen.row_of("t60") == 60  # added first, kept
    assert seen.row_of("t500") == 1500
    assert len(seen) == digests.RECENT * 2


def test_a_set_without_rows_and_its_digests() -> None:
    seen = DigestSet(rows=False)
    for i in range(digests.RECENT * 2):
        seen.note(f"p{i}")
    assert "p5" in seen and seen.row_of("p5") == -1 and "q" not in seen
    assert seen.sorted()[0] == min(digest_of(f"p{i}") for i in range(digests.RECENT * 2))
    assert local_digest("x") == local_digest("x") and 0 <= local_digest("x") < 2**64


async def test_a_resumed_batch_refuses_a_title_a_finished_row_used(
    emu: Emulator, client: AsyncClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(digests, "RECENT", 16)  # the finished rows' titles: sorted at once
    journal = tmp_path / "j.jsonl"
    first = rows(120)
    await finish(
        emu, client.templates.generate_many("tpl_welcome", first, spacing=0, journal=journal)
    )
    assert creations(emu) == 120
    again = [*first, {**rows(1, 500)[0], "title": "Welcome 7"}, *rows(1, 600)]
    batch = client.templates.generate_many("tpl_welcome", again, spacing=0, journal=journal)
    results = await finish(emu, batch)
    assert [r.status for r in results[120:]] == [RowOutcome.REJECTED, RowOutcome.COMPLETED]
    assert "'Welcome 7' is also the title of row 7" in (results[120].error or "")
    assert creations(emu) == 121
