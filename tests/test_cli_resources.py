"""``asyncclient videos ...`` and ``templates ...`` in-process against the emulator."""

from __future__ import annotations

import argparse
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from asyncclient._clock import Clock
from asyncclient.cli.resources import register, run
from asyncclient.client import ENV_API_KEY, ENV_BASE_URL
from asyncclient.emulator import Emulator
from tests.virtual_time import FastForward

SAMPLE = (Path(__file__).parents[1] / "asyncclient/emulator/data/sample.mp4").read_bytes()


@pytest_asyncio.fixture
async def emu() -> AsyncIterator[Emulator]:
    async with Emulator(time_scale=60.0, seed=5) as emulator:
        yield emulator


@pytest.fixture
def key(emu: Emulator) -> str:
    return emu.add_team(plan="premium", credits=100_000)


@pytest.fixture(autouse=True)
def no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_API_KEY, raising=False)
    monkeypatch.delenv(ENV_BASE_URL, raising=False)


def files_in(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="asyncclient")
    register(parser.add_subparsers(dest="command"))
    return parser.parse_args(list(argv))


async def cli(emu: Emulator, key: str, *argv: str, clock: Clock | None = None) -> int:
    return await run(parse(*argv, "--base-url", emu.url, "--api-key", key), clock=clock)


async def new_video(emu: Emulator, key: str) -> str:
    from asyncclient import AsyncClient

    async with AsyncClient(key, base_url=emu.url) as client:
        made = await client.projects.create_talking_avatar(
            script="Hi", avatar_id=emu.catalog.avatars[0], voice_id=emu.catalog.voices[0]
        )
    assert made.video_id is not None
    return made.video_id


# -- videos list / get -----------------------------------------------------------------


async def test_videos_list_shows_every_video(
    emu: Emulator, key: str, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = {await new_video(emu, key), await new_video(emu, key)}
    assert await cli(emu, key, "videos", "list") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["ID", "STATUS", "PROGRESS", "CREATED", "NAME"]
    assert {line.split()[0] for line in lines[1:]} == ids
    assert all(line.split()[1] == "STARTED" for line in lines[1:])


async def test_videos_list_json_with_filter_and_limit(
    emu: Emulator, key: str, capsys: pytest.CaptureFixture[str]
) -> None:
    done = {await new_video(emu, key), await new_video(emu, key)}
    emu.advance(1000)
    started = await new_video(emu, key)
    assert await cli(emu, key, "videos", "list", "--json") == 0
    every = json.loads(capsys.readouterr().out)
    assert {v["id"] for v in every} == done | {started}
    assert all(isinstance(v["createdAt"], str) and "teamId" in v for v in every)
    assert await cli(emu, key, "videos", "list", "--status", "completed", "--json") == 0
    completed = json.loads(capsys.readouterr().out)
    assert {v["id"] for v in completed} == done
    assert {v["status"] for v in completed} == {"COMPLETED"}
    assert await cli(emu, key, "videos", "list", "--limit", "1", "--json") == 0
    assert len(json.loads(capsys.readouterr().out)) == 1


async def test_videos_get_json_and_plain(
    emu: Emulator, key: str, capsys: pytest.CaptureFixture[str]
) -> None:
    video_id = await new_video(emu, key)
    emu.advance(1000)
    assert await cli(emu, key, "videos", "get", video_id, "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["id"] == video_id and data["status"] == "COMPLETED"
    assert data["size"] == len(SAMPLE) and "/_files/" in data["url"]
    assert await cli(emu, key, "videos", "get", video_id) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["id", video_id]
    assert ["status", "COMPLETED"] in [line.split() for line in lines]


async def test_unknown_video_is_an_api_error(
    emu: Emulator, key: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await cli(emu, key, "videos", "get", "vid_nope") == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("error: ") and "Video not found" in captured.err


async def test_bad_id_is_an_input_error(
    emu: Emulator, key: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await cli(emu, key, "videos", "get", "a/b") == 2
    assert "videoId" in capsys.readouterr().err


# -- configuration -------------------------------------------------------------------


async def test_missing_key_exits_2_with_the_message(
    emu: Emulator, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await run(parse("videos", "list", "--base-url", emu.url)) == 2
    err = capsys.readouterr().err
    assert "no API key" in err and ENV_API_KEY in err
    assert "--api-key KEY" in err and "api_key=" not in err  # the command line's words
    assert "`asyncclient emulator`" in err and "`asyncclient demo`" in err  # a way to try it
    assert emu.requests == []


async def test_missing_base_url_exits_2(key: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert await run(parse("templates", "list", "--api-key", key)) == 2
    assert "no base URL" in capsys.readouterr().err


async def test_environment_supplies_the_connection(
    emu: Emulator, key: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(ENV_API_KEY, key)
    monkeypatch.setenv(ENV_BASE_URL, emu.url)
    assert await run(parse("templates", "get", "tpl_promo", "--json")) == 0
    assert json.loads(capsys.readouterr().out)["id"] == "tpl_promo"


async def test_wrong_key_is_an_api_error(emu: Emulator, capsys: pytest.CaptureFixture[str]) -> None:
    assert await cli(emu, "wrong", "templates", "list") == 1
    assert "401" in capsys.readouterr().err


# -- templates -----------------------------------------------------------------------


async def test_templates_list_shows_the_seeded_templates(
    emu: Emulator, key: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await cli(emu, key, "templates", "list") == 0
    out = capsys.readouterr().out
    assert {"tpl_welcome", "tpl_promo", "tpl_thanks"} <= {
        line.split()[0] for line in out.splitlines()[1:]
    }
    assert await cli(emu, key, "templates", "list", "--json") == 0
    items = json.loads(capsys.readouterr().out)
    by_id = {t["id"]: t for t in items}
    assert "discount" in by_id["tpl_promo"]["variables"]


async def test_templates_get(emu: Emulator, key: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert await cli(emu, key, "templates", "get", "tpl_welcome", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["id"] == "tpl_welcome" and data["scenes"] and "createdAt" in data
    assert await cli(emu, key, "templates", "get", "tpl_welcome") == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["id", "tpl_welcome"] and "scenes" in out


# -- videos wait ---------------------------------------------------------------------


async def test_wait_exits_0_when_completed(
    emu: Emulator, key: str, capsys: pytest.CaptureFixture[str]
) -> None:
    video_id = await new_video(emu, key)
    emu.advance(1000)
    assert await cli(emu, key, "videos", "wait", video_id) == 0
    assert capsys.readouterr().out.startswith(f"{video_id} COMPLETED http")


async def test_wait_polls_until_completed(
    emu: Emulator, key: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # The poller's wait: the emulator's time moves on instead.
    clock = FastForward(on_sleep=lambda _: emu.advance(30))
    pauses = clock.sleeps
    video_id = await new_video(emu, key)
    argv = ("videos", "wait", video_id, "--interval", "5", "--json")
    assert await cli(emu, key, *argv, clock=clock) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "COMPLETED"
    # Progress moved every round, so the poller stayed at --interval (jittered by 10%).
    assert pauses and all(4.5 <= p <= 5.5 for p in pauses)


@pytest.fixture
def fake_time() -> FastForward:
    """A clock whose sleeps are recorded and take 10 ms of real time."""
    return FastForward(pause=0.01)


async def test_wait_exits_1_when_failed(
    emu: Emulator, key: str, fake_time: FastForward, capsys: pytest.CaptureFixture[str]
) -> None:
    video_id = await new_video(emu, key)
    emu.fail_video(video_id, "voice unavailable")
    argv = ("videos", "wait", video_id, "--timeout", "10")
    assert await cli(emu, key, *argv, clock=fake_time) == 1
    assert fake_time.sleeps == []  # FAILED is terminal: no second read
    captured = capsys.readouterr()
    assert "voice unavailable" in captured.err and captured.out == ""


async def test_wait_exits_3_on_timeout(
    emu: Emulator, key: str, fake_time: FastForward, capsys: pytest.CaptureFixture[str]
) -> None:
    video_id = await new_video(emu, key)
    argv = ("videos", "wait", video_id, "--timeout", "0.3", "--interval", "3")
    assert await cli(emu, key, *argv, clock=fake_time) == 3
    assert len(fake_time.sleeps) >= 2  # it kept polling until the timeout
    err = capsys.readouterr().err
    assert "STARTED" in err and "not finished after 0.3 s" in err


# -- videos download -------------------------------------------------------------------


async def test_download_writes_the_file(
    emu: Emulator, key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    video_id = await new_video(emu, key)
    emu.advance(1000)
    assert await cli(emu, key, "videos", "download", video_id, str(tmp_path), "--json") == 0
    data = json.loads(capsys.readouterr().out)
    target = tmp_path / f"{video_id}.mp4"
    assert data == {"id": video_id, "path": str(target), "size": len(SAMPLE)}
    assert target.read_bytes() == SAMPLE
    assert await cli(emu, key, "videos", "download", video_id, str(tmp_path / "x.mp4")) == 0
    assert capsys.readouterr().out.strip() == f"{tmp_path / 'x.mp4'} ({len(SAMPLE)} bytes)"


async def test_download_to_a_new_folder_named_with_a_slash(
    emu: Emulator, key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    video_id = await new_video(emu, key)
    emu.advance(1000)
    folder = f"{tmp_path / 'newdir'}/"
    assert await cli(emu, key, "videos", "download", video_id, folder) == 0
    target = tmp_path / "newdir" / f"{video_id}.mp4"
    assert target.read_bytes() == SAMPLE  # not a file named "newdir"
    captured = capsys.readouterr()
    assert captured.out.strip() == f"{target} ({len(SAMPLE)} bytes)"
    # stderr is no terminal here: the progress is plain lines, without escape codes
    assert f"downloading {video_id}" in captured.err and "100%" in captured.err
    assert "\x1b" not in captured.err


async def test_download_of_a_started_video_fails(
    emu: Emulator, key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    video_id = await new_video(emu, key)
    assert await cli(emu, key, "videos", "download", video_id, str(tmp_path)) == 1
    assert "STARTED" in capsys.readouterr().err
    assert files_in(tmp_path) == []


def test_every_leaf_has_a_handler() -> None:
    for argv in (
        ["videos", "list"],
        ["videos", "get", "v"],
        ["videos", "wait", "v"],
        ["videos", "download", "v"],
        ["templates", "list"],
        ["templates", "get", "t"],
    ):
        args = parse(*argv)
        assert callable(args.func) and args.json is False and args.api_key is None
    with pytest.raises(SystemExit):
        parse("videos", "list", "--limit", "0")
