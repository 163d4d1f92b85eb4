"""Every bad option and every unreadable input file: exit 2, with the option's or the
file's name and the rule in the message, before anything is sent (issue "Rough edges")."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from asyncclient.cli import main
from asyncclient.emulator.__main__ import main as emulator_main

OFFLINE = ["--api-key", "k", "--base-url", "http://127.0.0.1:9"]  # nothing listens there


def run(argv: list[str], runner: object = main) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = runner(argv)  # type: ignore[operator]
        except SystemExit as exc:
            code = exc.code
    return int(code or 0), err.getvalue()


BAD_OPTIONS = [
    (["batch", "rows.csv", "--template", "t", "--concurrency", "0"], "--concurrency", "at least 1"),
    (
        ["batch", "rows.csv", "--template", "t", "--concurrency", "x"],
        "--concurrency",
        "whole number",
    ),
    (["batch", "rows.csv", "--template", "t", "--spacing", "-1"], "--spacing", "at least 0"),
    (["batch", "rows.csv", "--template", "t", "--spacing", "nan"], "--spacing", "finite"),
    (["batch", "rows.csv", "--template", "t", "--max-open", "0"], "--max-open", "at least 1"),
    (["batch", "rows.csv", "--template", "t", "--budget", "-5"], "--budget", "at least 0"),
    (
        ["batch", "rows.csv", "--template", "t", "--cost-per-row", "0"],
        "--cost-per-row",
        "at least 1",
    ),
    (
        ["batch", "rows.csv", "--template", "t", "--cost-per-row", "2.5"],
        "--cost-per-row",
        "whole number",
    ),
    (
        ["batch", "rows.csv", "--template", "t", "--settle-window", "-1"],
        "--settle-window",
        "at least",
    ),
    (
        ["batch", "rows.csv", "--template", "t", "--unreachable-after", "-2"],
        "--unreachable-after",
        "at least",
    ),
    (["batch", "rows.csv"], "--template", "required"),
    (["demo", "--rows", "0"], "--rows", "at least 1"),
    (["videos", "list", "--limit", "0"], "--limit", "at least 1"),
    (["videos", "list", "--status", "draft"], "--status", "invalid choice"),
    (["videos", "list", "--type", "nope"], "--type", "invalid choice"),
    (["videos", "wait", "vid_1", "--timeout", "0"], "--timeout", "more than 0"),
    (["videos", "wait", "vid_1", "--interval", "-1"], "--interval", "at least 0"),
    (["nonsense"], "COMMAND", "invalid choice"),
]


@pytest.mark.parametrize(
    ("argv", "option", "rule"),
    BAD_OPTIONS,
    ids=[" ".join(a[:1] + a[-2:]) for a, _, _ in BAD_OPTIONS],
)
def test_a_bad_option_exits_2_naming_it_and_its_rule(
    argv: list[str], option: str, rule: str
) -> None:
    code, err = run(argv)
    assert code == 2, err
    assert option in err and rule in err, err


@pytest.mark.parametrize("blank", [" ", "\t", " \n "], ids=repr)
def test_a_blank_key_exits_2_naming_the_option_or_the_variable(
    monkeypatch: pytest.MonkeyPatch, blank: str
) -> None:
    # Sent, a blank key is an empty x-api-key header: refused before anything is sent, as
    # an empty one is, naming where it came from.
    url = ["--base-url", "http://127.0.0.1:9"]  # nothing listens there
    for argv in (["videos", "list"], ["batch", "rows.csv", "--template", "t"]):
        code, err = run([*argv, "--api-key", blank, *url])
        assert code == 2, err
        assert "no API key: --api-key is blank; pass --api-key KEY" in err, err
        monkeypatch.setenv("ASYNCCLIENT_API_KEY", blank)
        code, err = run([*argv, *url])
        assert code == 2, err
        assert "no API key: ASYNCCLIENT_API_KEY is blank; pass --api-key KEY" in err, err
        monkeypatch.delenv("ASYNCCLIENT_API_KEY")
    monkeypatch.setenv("ASYNCCLIENT_API_KEY", blank)
    monkeypatch.setenv("ASYNCCLIENT_BASE_URL", "http://127.0.0.1:9")
    code, err = run(["demo", "--real", "--template", "t"])
    assert code == 2 and "--real needs ASYNCCLIENT_API_KEY" in err, err


EMULATOR_BAD = [
    (["--port", "70000"], "--port"),
    (["--time-scale", "0"], "--time-scale"),
    (["--credits", "-1"], "--credits"),
    (["--seed", "x"], "--seed"),
    (["--plan", "gold"], "--plan"),
]


@pytest.mark.parametrize(("argv", "option"), EMULATOR_BAD, ids=[a[0] for a, _ in EMULATOR_BAD])
def test_a_bad_emulator_option_exits_2_naming_it(argv: list[str], option: str) -> None:
    code, err = run(argv, emulator_main)
    assert code == 2 and option in err, err


HELP_DEFAULTS = [
    (
        ["batch", "--help"],
        main,
        [
            "--concurrency N creation requests in flight at once (default: 4)",
            "(default: 1.0)",
            "(default: 600.0)",
            "(default: 300.0)",
            "(default: 10000)",
        ],
    ),
    (["demo", "--help"], main, ["videos to make (default: 20)"]),
    (["videos", "list", "--help"], main, ["(default: 50)", "(default: every state)"]),
    (["videos", "wait", "--help"], main, ["seconds between reads (default: 2.0)"]),
    (["--help"], emulator_main, ["(default: premium)", "(default: 100000)", "(default: 60"]),
]


@pytest.mark.parametrize(
    ("argv", "runner", "shown"), HELP_DEFAULTS, ids=[" ".join(a) for a, _, _ in HELP_DEFAULTS]
)
def test_every_help_shows_each_option_s_default(
    argv: list[str], runner: object, shown: list[str]
) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        runner(argv)  # type: ignore[operator]
    text = " ".join(out.getvalue().split())
    for default in shown:
        assert default in text, (default, text)


@pytest.mark.parametrize(
    ("content", "rule"),
    [
        (b"title,first_name\nAnn,\xff\xfe\n", "UTF-8"),
        (b"", "empty"),
        (b"title\n", "no row under it"),
    ],
)
def test_an_unreadable_rows_file_exits_2_naming_the_file(
    tmp_path: Path, content: bytes, rule: str
) -> None:
    rows = tmp_path / "my-rows.csv"
    rows.write_bytes(content)
    code, err = run(["batch", str(rows), "--template", "tpl_welcome", *OFFLINE])
    assert code == 2, err
    assert "my-rows.csv" in err and rule.lower() in err.lower(), err


def test_a_missing_rows_file_exits_2_naming_it(tmp_path: Path) -> None:
    code, err = run(["batch", str(tmp_path / "absent.csv"), "--template", "t", *OFFLINE])
    assert code == 2 and "absent.csv" in err, err


def test_a_missing_webhook_ca_file_exits_2_naming_it(tmp_path: Path) -> None:
    code, err = run(["--webhook-ca", str(tmp_path / "no-ca.pem"), "--port", "0"], emulator_main)
    assert code == 2 and "no-ca.pem" in err, err
