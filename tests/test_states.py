"""The state tables (VIDEO, ROW, JOURNAL), and the two readers that enforce them.

Every pair of states of each machine is walked against a table written out here,
independently of the package (spec 3.1: STARTED -> COMPLETED | FAILED, and a
terminal state sticks). Then: a job's state ignores a stale record after a
terminal one, and a batch journal refuses events its table does not allow.
"""

from __future__ import annotations

import itertools
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from asyncclient._states import (
    JOURNAL,
    ROW,
    VIDEO,
    JournalEvent,
    RowOutcome,
    Table,
    VideoState,
)
from asyncclient.awaiting.state import JobState
from asyncclient.batch.journal import Journal
from asyncclient.models import Video, VideoDetail
from asyncclient.models.enums import VideoListStatus, VideoStatus

V = VideoState
R = RowOutcome
J = JournalEvent

# -- the expected machines, written out by hand -------------------------------------------

EXPECTED_VIDEO = {
    # Before the first read anything may come (a record without a status stays unknown).
    (V.UNKNOWN, V.UNKNOWN),
    (V.UNKNOWN, V.STARTED),
    (V.UNKNOWN, V.COMPLETED),
    (V.UNKNOWN, V.FAILED),
    # Spec 3.1: a running video may be read running again, or finish either way.
    (V.STARTED, V.STARTED),
    (V.STARTED, V.COMPLETED),
    (V.STARTED, V.FAILED),
    # A finished video stays as it finished.
    (V.COMPLETED, V.COMPLETED),
    (V.FAILED, V.FAILED),
}
EXPECTED_VIDEO_TERMINAL = {V.COMPLETED, V.FAILED}

EXPECTED_ROW = {
    (R.PENDING, R.SUBMITTED),
    (R.PENDING, R.REJECTED),
    (R.PENDING, R.SKIPPED),
    (R.PENDING, R.UNRESOLVED),  # sent; whether the service made it is not known yet
    (R.PENDING, R.NOT_SENT),  # the batch stopped before sending it
    (R.SUBMITTED, R.COMPLETED),
    (R.SUBMITTED, R.FAILED),
}
EXPECTED_ROW_TERMINAL = {R.COMPLETED, R.FAILED, R.REJECTED, R.SKIPPED, R.UNRESOLVED, R.NOT_SENT}

EXPECTED_JOURNAL = {
    (J.NONE, J.SUBMIT),
    (J.SUBMIT, J.SUBMIT),  # reconciliation found nothing: sent once more
    (J.SUBMIT, J.ACCEPTED),
    (J.SUBMIT, J.REJECTED),
    (J.ACCEPTED, J.DONE),
    (J.REJECTED, J.SUBMIT),  # a later run sends a refused row again
    (J.DONE, J.DONE),  # a later run reads a finished row again
}
EXPECTED_JOURNAL_TERMINAL = {J.DONE}

MACHINES: list[tuple[Table[Any], type[Any], set[tuple[Any, Any]], set[Any]]] = [
    (VIDEO, VideoState, EXPECTED_VIDEO, EXPECTED_VIDEO_TERMINAL),
    (ROW, RowOutcome, EXPECTED_ROW, EXPECTED_ROW_TERMINAL),
    (JOURNAL, JournalEvent, EXPECTED_JOURNAL, EXPECTED_JOURNAL_TERMINAL),
]
MACHINE_IDS = ["video", "row", "journal"]

ALL_PAIRS = [
    pytest.param(
        table, old, new, (old, new) in expected, id=f"{table.name}:{old.value}->{new.value}"
    )
    for table, states, expected, _ in MACHINES
    for old, new in itertools.product(list(states), repeat=2)
]


@pytest.mark.parametrize(("table", "old", "new", "allowed"), ALL_PAIRS)
def test_every_transition_is_allowed_exactly_as_the_table_says(
    table: Table[Any], old: Any, new: Any, allowed: bool
) -> None:
    assert table.allows(old, new) is allowed


@pytest.mark.parametrize(("table", "states", "expected", "terminal"), MACHINES, ids=MACHINE_IDS)
def test_each_machine_names_every_state_and_its_terminal_set(
    table: Table[Any], states: type[Any], expected: set[Any], terminal: set[Any]
) -> None:
    # Every state has a row of its own: none is left to the "allows nothing" fallback.
    assert set(table.transitions) == set(states)
    assert set(table.terminal) == terminal
    for state in states:
        assert table.is_terminal(state) is (state in terminal)


@pytest.mark.parametrize(("table", "states", "expected", "terminal"), MACHINES, ids=MACHINE_IDS)
def test_terminal_states_stick(
    table: Table[Any], states: type[Any], expected: set[Any], terminal: set[Any]
) -> None:
    for end, other in itertools.product(terminal, states):
        if other != end:
            assert not table.allows(end, other), f"{end} -> {other}"


@pytest.mark.parametrize(("table", "states", "expected", "terminal"), MACHINES, ids=MACHINE_IDS)
def test_check_returns_the_new_state_or_names_the_machine_and_both_states(
    table: Table[Any], states: type[Any], expected: set[Any], terminal: set[Any]
) -> None:
    for old, new in itertools.product(list(states), repeat=2):
        if (old, new) in expected:
            assert table.check(old, new) is new
            continue
        with pytest.raises(ValueError, match=table.name) as info:
            table.check(old, new)
        message = str(info.value)
        assert message == f"{table.name}: {new.value} cannot follow {old.value}"


def test_check_messages_are_readable() -> None:
    with pytest.raises(ValueError, match=r"^video status: STARTED cannot follow COMPLETED$"):
        VIDEO.check(V.COMPLETED, V.STARTED)
    with pytest.raises(ValueError, match=r"^batch row: pending cannot follow submitted$"):
        ROW.check(R.SUBMITTED, R.PENDING)
    with pytest.raises(ValueError, match=r"^journal: accepted cannot follow none$"):
        JOURNAL.check(J.NONE, J.ACCEPTED)


# -- reading a status ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "state"),
    [
        ("STARTED", V.STARTED),
        ("COMPLETED", V.COMPLETED),
        ("FAILED", V.FAILED),
        # The list filter's lower-case words (template generation says "processing").
        ("processing", V.STARTED),
        ("completed", V.COMPLETED),
        ("failed", V.FAILED),
        # Enums read by value.
        (VideoStatus.COMPLETED, V.COMPLETED),
        (VideoStatus.FAILED, V.FAILED),
        (VideoListStatus.PROCESSING, V.STARTED),
        (VideoListStatus.COMPLETED, V.COMPLETED),
        # Nothing read yet.
        (None, V.UNKNOWN),
        # Anything the spec does not name is not finished.
        ("QUEUED", V.STARTED),
        ("draft", V.STARTED),
        ("", V.STARTED),
        ("cancelled", V.STARTED),
    ],
)
def test_video_state_of_a_status(status: object, state: VideoState) -> None:
    assert VideoState.of(status) is state


def test_states_are_their_wire_strings() -> None:
    assert V.COMPLETED == "COMPLETED" and str(V.COMPLETED) == "COMPLETED"
    assert R.SKIPPED == "skipped" and str(J.ACCEPTED) == "accepted"


# -- JobState: a stale record after a terminal one is ignored ----------------------------


def _detail(status: str, progress: int | None, **extra: Any) -> VideoDetail:
    return VideoDetail(id="v1", project_id="p1", status=status, progress=progress, **extra)


def test_a_started_record_after_completed_is_stale_and_ignored() -> None:
    state = JobState(project_id="p1", video_id="v1", status="STARTED")
    done = _detail("COMPLETED", 100, url="https://cdn.example/v1.mp4")
    state.take_detail(done)
    assert state.done() and state.result is done

    state.take_record(Video(id="v1", project_id="p1", status="STARTED", progress=40))
    state.take_detail(_detail("STARTED", 40))

    assert (state.status, state.progress) == ("COMPLETED", 100)
    assert state.result is done and state.error is None
    assert state.videos == [done]


def test_failed_stays_failed_when_a_completed_record_follows() -> None:
    state = JobState(project_id="p1", video_id="v1")
    state.read_detail = False
    state.take_record(Video(id="v1", project_id="p1", status="FAILED", message="boom"))
    error = state.error
    assert error is not None and state.status == "FAILED"
    state.take_record(Video(id="v1", project_id="p1", status="COMPLETED", progress=100))
    assert state.status == "FAILED" and state.error is error and state.result is None


def test_a_started_detail_is_not_taken_as_the_result() -> None:
    # The list said COMPLETED; the detail read then comes from a replica that lags.
    state = JobState(project_id="p1", video_id="v1", status="STARTED")
    state.take_record(Video(id="v1", project_id="p1", status="COMPLETED", progress=100))
    assert state.needs_detail() == ["v1"] and not state.done()

    state.take_detail(_detail("STARTED", 90))
    assert not state.done() and state.result is None
    assert state.needs_detail() == ["v1"]  # still to be read
    assert state.status == "COMPLETED"

    done = _detail("COMPLETED", 100)
    state.take_detail(done)
    assert state.done() and state.result is done


# -- the journal refuses events its table does not allow ---------------------------------

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)
AT = NOW.isoformat()


def _write_journal(path: Path, *events: dict[str, Any]) -> None:
    lines = [{"ev": "batch", "batch": "b1", "version": 1}, *events]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def test_a_sound_journal_replays(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    _write_journal(
        path,
        {"ev": "submit", "i": 0, "fp": "f0", "at": AT},
        {"ev": "accepted", "i": 0, "fp": "f0", "project": "p0", "video": "v0"},
        {"ev": "submit", "i": 1, "fp": "f1", "at": AT},
        {"ev": "rejected", "i": 1, "fp": "f1", "error": "bad", "api": True},
        {"ev": "submit", "i": 1, "fp": "f1", "at": AT},
        {"ev": "accepted", "i": 1, "fp": "f1", "project": "p1"},
        {"ev": "done", "i": 0, "fp": "f0", "status": "completed"},
    )
    journal = Journal.open(path, "b1", now=lambda: NOW)
    journal.close()
    assert {i: r.event for i, r in journal.rows.items()} == {0: J.DONE, 1: J.ACCEPTED}
    assert (journal.rows[0].project_id, journal.rows[0].video_id) == ("p0", "v0")
    assert journal.rows[0].sent_at == NOW


@pytest.mark.parametrize(
    ("events", "where"),
    [
        # accepted before any submit
        ([{"ev": "accepted", "i": 0, "fp": "f", "project": "p"}], "line 2, row 0"),
        # done straight after submit: the acceptance is missing
        (
            [
                {"ev": "submit", "i": 3, "fp": "f", "at": AT},
                {"ev": "done", "i": 3, "fp": "f", "status": "completed"},
            ],
            "line 3, row 3",
        ),
        # an accepted row submitted again
        (
            [
                {"ev": "submit", "i": 0, "fp": "f", "at": AT},
                {"ev": "accepted", "i": 0, "fp": "f", "project": "p"},
                {"ev": "submit", "i": 1, "fp": "g", "at": AT},
                {"ev": "submit", "i": 0, "fp": "f", "at": AT},
            ],
            "line 5, row 0",
        ),
    ],
    ids=["accepted-first", "done-after-submit", "resubmit-accepted"],
)
def test_a_damaged_journal_is_refused_naming_the_line(
    tmp_path: Path, events: list[dict[str, Any]], where: str
) -> None:
    path = tmp_path / "j.jsonl"
    _write_journal(path, *events)
    before = path.read_text(encoding="utf-8")
    with pytest.raises(ValueError, match="cannot follow") as info:
        Journal.open(path, "b1", now=lambda: NOW)
    assert where in str(info.value) and "journal:" in str(info.value)
    assert path.read_text(encoding="utf-8") == before  # nothing appended


def test_record_refuses_an_event_the_table_does_not_allow(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal.open(path, "b1", now=lambda: NOW)
    try:
        written = path.read_text(encoding="utf-8")
        with pytest.raises(ValueError, match="journal: accepted cannot follow none"):
            journal.record(J.ACCEPTED, 0, "f0", project="p0")
        assert path.read_text(encoding="utf-8") == written  # nothing written
        assert 0 not in journal.rows

        journal.record(J.SUBMIT, 0, "f0")
        with pytest.raises(ValueError, match="journal: done cannot follow submit"):
            journal.record(J.DONE, 0, "f0", status="completed")
        assert journal.rows[0].event is J.SUBMIT
        journal.record(J.ACCEPTED, 0, "f0", project="p0")
        journal.record(J.DONE, 0, "f0", status="completed")
    finally:
        journal.close()
    events = [json.loads(line)["ev"] for line in path.read_text(encoding="utf-8").splitlines()]
    assert events == ["batch", "submit", "accepted", "done"]
